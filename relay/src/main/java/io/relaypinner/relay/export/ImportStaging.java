package io.relaypinner.relay.export;

import io.relaypinner.common.budget.LimitListener;
import io.relaypinner.common.budget.Limits;
import io.relaypinner.common.budget.Reservation;
import io.relaypinner.common.budget.Resource;
import io.relaypinner.common.budget.Scope;
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
 * when the node starts. Every byte is reserved ({@link Resource#DISK}) from the node budget's
 * {@code import} scope before it is written, in steps of {@link #RESERVATION_STEP}, and given
 * back when the file is deleted: all staged files together hold at most
 * {@code RELAY_IMPORT_STAGING_MAX_BYTES} (by default the import slots times
 * {@code maxFileBytes}); a write beyond it fails with {@link StagingFullException}.
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

  /** The staging area is full: the node budget refused the bytes (counted by the budget). */
  public static final class StagingFullException extends IOException {
    private static final long serialVersionUID = 1L;

    StagingFullException(final Scope scope) {
      super("the import staging area is full (" + scope.limits().max(Resource.DISK)
          + " bytes), retry later");
    }
  }

  /** Disk reserved ahead of the writes at a time: one atomic step per MiB, not per write. */
  static final long RESERVATION_STEP = 1L << 20;

  private final Path directory;
  private final long maxFileBytes;
  private final Scope disk;
  private final AtomicLong counter = new AtomicLong();
  private final AtomicLong stagedBytes = new AtomicLong();

  /**
   * Creates the directory if needed and deletes what an earlier run left in it.
   *
   * @throws UncheckedIOException when the directory cannot be made or emptied
   */
  public ImportStaging(final Path directory, final long maxFileBytes) {
    this(directory, maxFileBytes, Scope.root("import", Limits.NONE, LimitListener.NONE));
  }

  /**
   * As above, every staged byte reserved from {@code disk} (the node budget's {@code import}
   * scope) or a scope below it ({@link #create(Scope)}).
   */
  public ImportStaging(final Path directory, final long maxFileBytes, final Scope disk) {
    this.directory = Objects.requireNonNull(directory, "directory");
    this.disk = Objects.requireNonNull(disk, "disk");
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

  /** The scope staged bytes are reserved from unless a file is given another. */
  public Scope disk() {
    return disk;
  }

  /** A new, empty staged file, its bytes reserved from {@link #disk()}; close it to delete it. */
  public Staged create() throws IOException {
    return create(disk);
  }

  /**
   * A new, empty staged file whose bytes are reserved from {@code scope} (a client's scope below
   * {@link #disk()}); close it to delete it and give them back.
   */
  public Staged create(final Scope scope) throws IOException {
    final Path file = directory.resolve("import-" + counter.incrementAndGet() + ".car");
    Files.deleteIfExists(file);
    return new Staged(file, scope.reserve(Resource.DISK, 0));
  }

  /** One import's staged body: written once through {@link #output()}, then read back. */
  public final class Staged implements AutoCloseable {
    private final Path file;
    private final Reservation reserved;
    private long bytes;

    private Staged(final Path file, final Reservation reserved) {
      this.file = file;
      this.reserved = reserved;
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
     * {@link TooLargeException}, one the node budget has no room for
     * {@link StagingFullException}, and writes nothing of it.
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

    private void count(final int length) throws IOException {
      if (bytes + length > maxFileBytes) {
        throw new TooLargeException(maxFileBytes);
      }
      final long missing = bytes + length - reserved.held();
      if (missing > 0) {
        final long step = Math.min(Math.max(missing, RESERVATION_STEP), maxFileBytes - bytes);
        if (!reserved.grow(step)) {
          throw new StagingFullException(reserved.scope());
        }
      }
      bytes += length;
      stagedBytes.addAndGet(length);
    }

    /** Bytes reserved from the node budget for this file now (at least {@link #bytes()}). */
    public long reservedBytes() {
      return reserved.held();
    }

    /**
     * Deletes the file (nothing of it is needed once its import ended) and gives its bytes back
     * to the node budget.
     */
    @Override
    public void close() {
      stagedBytes.addAndGet(-bytes);
      bytes = 0;
      try {
        Files.deleteIfExists(file);
      } catch (final IOException e) {
        // The next start deletes it; the import's answer does not depend on it. Its bytes are
        // given back all the same: a file nobody can delete is an operator's matter, and
        // holding its reservation would refuse every later import for good.
        LOG.warn("cannot delete the import staging file {}: {}", file, e.toString());
      } finally {
        reserved.close();
      }
    }
  }
}
