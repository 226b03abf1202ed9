package io.relaypinner.handoff.guest;

import io.relaypinner.common.EnvFile;
import io.relaypinner.libp2p.crypto.SecretFile;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Map;

/**
 * {@code relay.env}: the {@link EnvFile} the guest writes and the relay reads with
 * {@code run --env-file}. Written atomically (temporary file in the same directory, fsync,
 * rename, fsync of the directory), mode 0600, so a crash leaves the old file or the new one, never
 * half of one; read back by the same parser as the relay's, so a file the relay would refuse is
 * refused here too.
 */
public final class RelayEnvFile {
  private RelayEnvFile() {}

  /**
   * Writes {@code values} to {@code file}, replacing it atomically; {@link #read} gives them back
   * exactly.
   *
   * @throws IllegalArgumentException for a key or value the format cannot hold (see {@link
   *     EnvFile#format})
   */
  public static void write(final Path file, final Map<String, String> values,
      final String comment) throws IOException {
    SecretFile.replace(file, EnvFile.format(values, comment).getBytes(StandardCharsets.UTF_8));
  }

  /**
   * Reads {@code file} ({@link EnvFile#read}).
   *
   * @throws EnvFile.EnvFileException for a missing, oversized or malformed file, naming the line
   */
  public static Map<String, String> read(final Path file) throws EnvFile.EnvFileException {
    return EnvFile.read(file);
  }
}
