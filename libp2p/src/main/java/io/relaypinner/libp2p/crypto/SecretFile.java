package io.relaypinner.libp2p.crypto;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one way this project writes a file holding a secret (a libp2p identity, a wallet or
 * publisher key, a guest's settings): a temporary file in the same directory created with mode
 * 0600, the whole content written and fsynced, then an atomic rename (or a hard link when the
 * file must not exist yet), then an fsync of the directory. A crash at any point leaves either the
 * old file or the complete new one under the final name, never a partial or empty one, and never
 * a moment when the secret is readable by other users. The temporary file is removed on every
 * path that returns; one a crash left behind is named {@code .<name>.<random>.tmp} and never
 * read.
 */
public final class SecretFile {
  private static final Logger LOG = LoggerFactory.getLogger(SecretFile.class);
  private static final Set<PosixFilePermission> OWNER_ONLY =
      PosixFilePermissions.fromString("rw-------");

  private SecretFile() {}

  /**
   * Creates {@code file} with {@code content} unless it exists; the parent directories are
   * created. Two processes racing end with one complete file (the hard link of the first).
   *
   * @return true when this call created it, false when it already existed (left untouched)
   */
  public static boolean createIfAbsent(final Path file, final byte[] content)
      throws IOException {
    final Path dir = parentOf(file);
    final Path temp = writeTemp(dir, file, content);
    try {
      try {
        Files.createLink(file, temp);
      } catch (final FileAlreadyExistsException e) {
        return false;
      } catch (final UnsupportedOperationException e) {
        // No hard links on this file system: a plain move still refuses an existing target.
        try {
          Files.move(temp, file);
        } catch (final FileAlreadyExistsException exists) {
          return false;
        }
      }
      syncDirectory(dir);
      return true;
    } finally {
      Files.deleteIfExists(temp);
    }
  }

  /** Replaces {@code file} (or creates it) with {@code content}, atomically. */
  public static void replace(final Path file, final byte[] content) throws IOException {
    final Path dir = parentOf(file);
    final Path temp = writeTemp(dir, file, content);
    try {
      try {
        Files.move(temp, file, StandardCopyOption.ATOMIC_MOVE,
            StandardCopyOption.REPLACE_EXISTING);
      } catch (final AtomicMoveNotSupportedException e) {
        Files.move(temp, file, StandardCopyOption.REPLACE_EXISTING);
      }
      syncDirectory(dir);
    } finally {
      Files.deleteIfExists(temp);
    }
  }

  private static Path parentOf(final Path file) throws IOException {
    final Path dir = file.toAbsolutePath().getParent();
    Files.createDirectories(dir);
    return dir;
  }

  private static Path writeTemp(final Path dir, final Path file, final byte[] content)
      throws IOException {
    final boolean posix = dir.getFileSystem().supportedFileAttributeViews().contains("posix");
    final FileAttribute<?>[] attrs = posix
        ? new FileAttribute<?>[] {PosixFilePermissions.asFileAttribute(OWNER_ONLY)}
        : new FileAttribute<?>[0];
    final Path temp = Files.createTempFile(dir, "." + file.getFileName() + ".", ".tmp", attrs);
    try (FileChannel channel = FileChannel.open(temp, StandardOpenOption.WRITE)) {
      final ByteBuffer buffer = ByteBuffer.wrap(content);
      while (buffer.hasRemaining()) {
        channel.write(buffer);
      }
      channel.force(true);
    } catch (final IOException | RuntimeException e) {
      Files.deleteIfExists(temp);
      throw e;
    }
    return temp;
  }

  private static void syncDirectory(final Path dir) {
    try (FileChannel channel = FileChannel.open(dir, StandardOpenOption.READ)) {
      channel.force(true);
    } catch (final IOException e) {
      // Some file systems cannot fsync a directory; the file itself is already synced.
      LOG.debug("could not fsync directory {}: {}", dir, e.toString());
    }
  }
}
