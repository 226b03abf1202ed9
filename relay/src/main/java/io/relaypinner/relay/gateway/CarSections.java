package io.relaypinner.relay.gateway;

import io.relaypinner.ipfs.blockstore.Blockstore;
import io.relaypinner.ipfs.car.CarWriter;
import io.relaypinner.multiformats.Cid;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Function;

/**
 * The bytes of a planned CAR ({@link CarPlanner.Plan}) as {@link BodyPiece}s, read from the
 * blockstore when due (on the caller's thread: the storage executor).
 *
 * <p>A block of at least {@link #FILE_MIN_BYTES} whose file {@code files} can open goes out as a
 * {@link BodyPiece.FileSpan} ({@code sendfile}: no read into the heap, no copy), right after a
 * piece that ends with its section prefix. Smaller blocks are read and joined with their
 * prefixes, several to a piece up to {@link #BATCH_BYTES}, so that a DAG of many small blocks is
 * not one write and flush per block. Nothing is copied: a piece wraps the prefixes and the
 * blocks as read.
 *
 * <p>Blocks are not hashed again here: the blockstore verified every block against its CID
 * before storing it, and stores it atomically (see {@link Blockstore#put}); a stored block
 * changes only through someone editing the store's directory, which a receiver detects anyway,
 * since every CAR client verifies each block against its CID (that is what makes the gateway
 * trustless). A block whose size differs from the plan's ends the stream with an error.
 */
public final class CarSections implements Iterator<BodyPiece> {
  /** Blocks at least this large are sent from their file when possible. */
  static final int FILE_MIN_BYTES = 64 * 1024;
  /** Small sections are joined into pieces of about this size. */
  static final int BATCH_BYTES = 64 * 1024;

  /** For stores whose blocks are not files, and for TLS connections: every block is read. */
  public static final Function<Cid, Optional<FileChannel>> NO_FILES = cid -> Optional.empty();

  private final Blockstore blockstore;
  private final Function<Cid, Optional<FileChannel>> files;
  private final CarPlanner.Plan plan;
  /** The next block to send; -1 while the header is due. */
  private int next = -1;

  /**
   * @param files opens a block's file for zero-copy sending (the piece's taker closes it);
   *     empty when the block is not a file or the connection cannot use files (TLS)
   */
  public CarSections(final Blockstore blockstore,
      final Function<Cid, Optional<FileChannel>> files, final CarPlanner.Plan plan) {
    this.blockstore = Objects.requireNonNull(blockstore, "blockstore");
    this.files = Objects.requireNonNull(files, "files");
    this.plan = Objects.requireNonNull(plan, "plan");
  }

  @Override
  public boolean hasNext() {
    return next < plan.blocks().size();
  }

  @Override
  public BodyPiece next() {
    if (!hasNext()) {
      throw new NoSuchElementException();
    }
    final List<ByteBuffer> batch = new ArrayList<>();
    long batched = 0;
    if (next < 0) {
      final byte[] header = CarWriter.header(plan.roots());
      batch.add(ByteBuffer.wrap(header));
      batched += header.length;
      next = 0;
    }
    while (next < plan.blocks().size() && batched < BATCH_BYTES) {
      final int index = next++;
      final Cid cid = plan.blocks().get(index);
      final long size = plan.sizes()[index];
      batch.add(ByteBuffer.wrap(CarWriter.sectionPrefix(cid, (int) size)));
      batched += batch.get(batch.size() - 1).remaining();
      if (size >= FILE_MIN_BYTES) {
        final Optional<FileChannel> file = files.apply(cid);
        if (file.isPresent()) {
          // What is batched (this block's prefix at least) leaves first, then the file.
          return fileSpan(batch, cid, file.get(), size);
        }
      }
      final byte[] block = blockstore.get(cid).orElseThrow(() -> gone(cid));
      checkSize(cid, block.length, size);
      batch.add(ByteBuffer.wrap(block));
      batched += block.length;
    }
    return new BodyPiece.Bytes(batch);
  }

  private static BodyPiece fileSpan(final List<ByteBuffer> head, final Cid cid,
      final FileChannel file, final long size) {
    try {
      checkSize(cid, file.size(), size);
    } catch (final IOException | RuntimeException e) {
      BodyPiece.FileSpan.closeQuietly(file);
      if (e instanceof IOException io) {
        throw new UncheckedIOException("cannot stat block " + cid, io);
      }
      throw (RuntimeException) e;
    }
    return new BodyPiece.FileSpan(head, file, 0, size);
  }

  private static void checkSize(final Cid cid, final long actual, final long planned) {
    if (actual != planned) {
      throw new IllegalStateException(cid + " changed size while its CAR was sent");
    }
  }

  private static IllegalStateException gone(final Cid cid) {
    return new IllegalStateException(cid + " left the blockstore while its CAR was sent");
  }
}
