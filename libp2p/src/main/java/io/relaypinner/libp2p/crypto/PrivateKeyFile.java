package io.relaypinner.libp2p.crypto;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.HexFormat;
import java.util.Set;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A node's private key kept in one file: the hex of the libp2p {@code PrivateKey} protobuf (the
 * same text {@code RELAY_PRIV_KEY} takes) and a newline, mode 0600.
 *
 * <p>The key is created once and never replaced: an unreadable or corrupt file is an error, not a
 * reason to make a new identity. Creation is atomic and race-free ({@link SecretFile}: temporary
 * file, fsync, hard link to the final name, which fails if another process created it first,
 * directory fsync), so two processes starting on one directory end up with the same key.
 */
public final class PrivateKeyFile {
  private static final Logger LOG = LoggerFactory.getLogger(PrivateKeyFile.class);
  /** Hex of the largest key protobuf we accept, plus whitespace. */
  private static final long MAX_FILE_SIZE = Keys.MAX_ENCODED_LENGTH * 2L + 16;

  private PrivateKeyFile() {}

  /** What {@link #loadOrCreate} found. */
  public record Loaded(PrivateKey key, boolean created) {}

  /**
   * Reads the key at {@code file}, or creates it with {@code generator} when the file does not
   * exist.
   *
   * @throws KeyFormatException when the file exists but does not hold a valid key
   * @throws UncheckedIOException when the file cannot be read or written
   */
  public static Loaded loadOrCreate(final Path file, final Supplier<PrivateKey> generator) {
    if (Files.exists(file)) {
      return new Loaded(load(file), false);
    }
    final PrivateKey fresh = generator.get();
    try {
      if (write(file, fresh)) {
        return new Loaded(fresh, true);
      }
    } catch (final IOException e) {
      throw new UncheckedIOException("cannot write key file " + file + ": " + e.getMessage(), e);
    }
    // Another process created it between our check and our link: theirs wins.
    return new Loaded(load(file), false);
  }

  /** Reads the key at {@code file}. */
  public static PrivateKey load(final Path file) {
    try {
      if (Files.size(file) > MAX_FILE_SIZE) {
        throw new KeyFormatException("key file " + file + " is larger than a key can be");
      }
      warnIfReadableByOthers(file);
      final String text = Files.readString(file, StandardCharsets.US_ASCII);
      try {
        return Keys.unmarshalPrivateKeyHex(text);
      } catch (final KeyFormatException e) {
        throw new KeyFormatException("key file " + file + ": " + e.getMessage(), e);
      }
    } catch (final IOException e) {
      throw new UncheckedIOException("cannot read key file " + file + ": " + e.getMessage(), e);
    }
  }

  /** Writes {@code key} to {@code file}; false when the file already exists. */
  static boolean write(final Path file, final PrivateKey key) throws IOException {
    return SecretFile.createIfAbsent(file, (HexFormat.of().formatHex(key.marshal()) + "\n")
        .getBytes(StandardCharsets.US_ASCII));
  }

  private static void warnIfReadableByOthers(final Path file) throws IOException {
    if (!file.getFileSystem().supportedFileAttributeViews().contains("posix")) {
      return;
    }
    final Set<PosixFilePermission> perms = Files.getPosixFilePermissions(file);
    if (perms.contains(PosixFilePermission.GROUP_READ)
        || perms.contains(PosixFilePermission.OTHERS_READ)) {
      LOG.warn("key file {} is readable by other users ({}); chmod 600 it", file,
          PosixFilePermissions.toString(perms));
    }
  }
}
