package io.relaypinner.relay.export;

import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The staging area of {@code POST /pinning/import}: a directory in the data directory
 * ({@code <DATASTORE_PATH>/import-staging}, never the system's temporary directory, which may be
 * a small RAM disk) where each import's body is written while it arrives, so that no CAR is held
 * in the heap. Each staged file holds at most {@code maxFileBytes} (the import's byte limit), is
 * deleted when its import ends whatever the outcome, and whatever a crash left behind is deleted
 * when the node starts. Disk use is thus at most the number of import slots times
 * {@code maxFileBytes}.
 */
public final class ImportStaging {
  /** The directory's name under the data directory. */
  public static final String DIRECTORY = "import-staging";
  private static final Logger LOG = LoggerFactory.getLogger(ImportStaging.class);

  /** The staged body went over {@link #maxFileBytes()}. */
  public static final class TooLargeException extends IOException {
    private static final long serialVersionUID = 1L;

    TooLargeException(final long limit) {
      super("the CAR is larger than " + limit + " bytes");
    }
  }

  private final Path directory;
  private final long maxFileBytes;
  private final AtomicLong counter = new AtomicLong();
  private final AtomicLong stagedBytes = new AtomicLong();

  /**
   * Creates the directory if needed and deletes what an earlier run left in it.
   *
   * @throws UncheckedIOException when the directory cannot be made or emptied
   */
  public ImportStaging(final Path directory, final long maxFileBytes) {
    this.directory = Objects.requireNonNull(directory, "directory");
    if (maxFileBytes <= 0) {
      throw new IllegalArgumentException("maxFileBytes must be positive: " + maxFileBytes);
    }
    this.maxFileBytes = maxFileBytes;
    try {
      Files.createDirectories(directory);
      int removed = 0;
      try (DirectoryStream<Path> leftovers = Files.newDirectoryStream(directory)) {
        for (final Path leftover : leftovers) {
          if (Files.isRegularFile(leftover) && Files.deleteIfExists(leftover)) {
            removed++;
          }
        }
      }
      if (removed > 0) {
        LOG.info("deleted {} import staging file(s) an earlier run left in {}", removed,
            directory);
      }
    } catch (final IOException e) {
      throw new UncheckedIOException("cannot prepare the import staging directory " + directory,
          e);
    }
  }

  /** The staging directory. */
  public Path directory() {
    return directory;
  }

  /** The most one staged file holds. */
  public long maxFileBytes() {
    return maxFileBytes;
  }

  /** Bytes staged now, over every import in progress. */
  public long stagedBytes() {
    return stagedBytes.get();
  }

  /** A new, empty staged file; close it to delete it. */
  public Staged create() throws IOException {
    final Path file = directory.resolve("import-" + counter.incrementAndGet() + ".car");
    Files.deleteIfExists(file);
    return new Staged(file);
  }

  /** One import's staged body: written once through {@link #output()}, then read back. */
  public final class Staged implements AutoCloseable {
    private final Path file;
    private long bytes;

    private Staged(final Path file) {
      this.file = file;
    }

    /** The file. */
    public Path file() {
      return file;
    }

    /** Bytes written so far. */
    public long bytes() {
      return bytes;
    }

    /**
     * The stream that writes the file; a write past {@link #maxFileBytes()} throws
     * {@link TooLargeException} and writes nothing of it.
     */
    public OutputStream output() throws IOException {
      final OutputStream file = new BufferedOutputStream(Files.newOutputStream(this.file),
          64 * 1024);
      return new OutputStream() {
        @Override
        public void write(final int b) throws IOException {
          count(1);
          file.write(b);
        }

        @Override
        public void write(final byte[] data, final int offset, final int length)
            throws IOException {
          count(length);
          file.write(data, offset, length);
        }

        @Override
        public void flush() throws IOException {
          file.flush();
        }

        @Override
        public void close() throws IOException {
          file.close();
        }
      };
    }

    private void count(final int length) throws TooLargeException {
      if (bytes + length > maxFileBytes) {
        throw new TooLargeException(maxFileBytes);
      }
      bytes += length;
      stagedBytes.addAndGet(length);
    }

    /** Deletes the file (nothing of it is needed once its import ended). */
    @Override
    public void close() {
      stagedBytes.addAndGet(-bytes);
      bytes = 0;
      try {
        Files.deleteIfExists(file);
      } catch (final IOException e) {
        // The next start deletes it; the import's answer does not depend on it.
        LOG.warn("cannot delete the import staging file {}: {}", file, e.toString());
      }
    }
  }
}
