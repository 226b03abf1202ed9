package io.relaypinner.handoff.guest;

import io.relaypinner.libp2p.crypto.SecretFile;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * {@code relay.env}: {@code KEY=VALUE} lines the relay reads with {@code run --env-file}. Written
 * atomically (temporary file in the same directory, fsync, rename, fsync of the directory), mode
 * 0600, so a crash leaves the old file or the new one, never half of one.
 */
public final class RelayEnvFile {
  /** A file larger than this is not a configuration. */
  public static final long MAX_SIZE = 1 << 20;
  private static final Pattern KEY = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");

  private RelayEnvFile() {}

  /** Writes {@code values} to {@code file}, replacing it atomically. */
  public static void write(final Path file, final Map<String, String> values,
      final String comment) throws IOException {
    final StringBuilder text = new StringBuilder();
    for (final String line : comment.split("\n")) {
      text.append("# ").append(line).append('\n');
    }
    for (final Map.Entry<String, String> entry : values.entrySet()) {
      final String value = entry.getValue();
      if (!KEY.matcher(entry.getKey()).matches() || value.indexOf('\n') >= 0
          || value.indexOf('\r') >= 0) {
        throw new IllegalArgumentException("not an env line: " + entry.getKey());
      }
      text.append(entry.getKey()).append('=').append(value).append('\n');
    }
    SecretFile.replace(file, text.toString().getBytes(StandardCharsets.UTF_8));
  }

  /**
   * Reads the file this class writes (and the simple {@code KEY=VALUE} form in general: blank and
   * {@code #} lines skipped, the value after the first {@code =}, trimmed; surrounding quotes
   * removed).
   */
  public static Map<String, String> read(final Path file) throws IOException {
    if (Files.size(file) > MAX_SIZE) {
      throw new IOException(file + " is larger than " + MAX_SIZE + " bytes");
    }
    final List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
    final Map<String, String> values = new LinkedHashMap<>();
    for (final String raw : lines) {
      String line = raw.strip();
      if (line.isEmpty() || line.startsWith("#")) {
        continue;
      }
      if (line.startsWith("export ")) {
        line = line.substring("export ".length()).stripLeading();
      }
      final int eq = line.indexOf('=');
      if (eq <= 0) {
        continue;
      }
      String value = line.substring(eq + 1).strip();
      if (value.length() >= 2 && (value.charAt(0) == '"' || value.charAt(0) == '\'')
          && value.charAt(value.length() - 1) == value.charAt(0)) {
        value = value.substring(1, value.length() - 1);
      }
      values.put(line.substring(0, eq).strip(), value);
    }
    return values;
  }
}
