package io.relaypinner.relay.gateway;

import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.DefaultFileRegion;
import io.netty.handler.stream.ChunkedInput;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.Iterator;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Supplier;

/**
 * A streamed {@code /ipfs/} body (spec 4.6, and the trustless gateway's CARs) made of
 * {@link BodyPiece}s: pieces are prepared on the storage executor, never on the event loop, and
 * handed to the {@link io.netty.handler.stream.ChunkedWriteHandler}, which pulls only while the
 * channel is writable. Bytes become wrapped buffers (no copy); a file span becomes a
 * {@link DefaultFileRegion} ({@code sendfile}), which the channel does not count against its
 * write-buffer watermarks, so this input bounds them itself: at most {@link #READ_AHEAD} pieces
 * are prepared or written but not yet sent, which also bounds the block files one response
 * holds open. {@code readChunk} answers {@code null} while a piece is being prepared and
 * {@code resume} wakes the writer when it is ready.
 */
public final class SliceInput implements ChunkedInput<Object> {
  /** Pieces (up to a 1 MiB block each with Helia's chunker) prepared or unsent per response. */
  static final int READ_AHEAD = 3;

  private final Supplier<Iterator<BodyPiece>> source;
  private final long length;
  private final Executor executor;
  private final Runnable resume;
  private final GatewayMetrics metrics;

  // Guarded by this: touched by the event loop (readChunk) and the executor (fetch).
  private final ArrayDeque<BodyPiece> ready = new ArrayDeque<>();
  /** The file of a piece whose head went out with the last chunk. */
  private DefaultFileRegion regionDue;
  /** File regions handed to the channel and not yet released by it. */
  private int regionsUnsent;
  /** Read by one fetch at a time, see {@link #fetch}. */
  private Iterator<BodyPiece> slices;
  private boolean fetching;
  private boolean exhausted;
  private boolean closed;
  /** What preparing a piece failed with: an exception, or an {@link Error} (rethrown as is). */
  private Throwable failure;
  private long produced;

  /**
   * @param source the pieces, opened on the executor by the first fetch
   * @param length the exact number of bytes the pieces hold
   * @param resume wakes the writer (any thread) once a piece is ready
   */
  public SliceInput(final Supplier<Iterator<BodyPiece>> source, final long length,
      final Executor executor, final Runnable resume, final GatewayMetrics metrics) {
    this.source = source;
    this.length = length;
    this.executor = executor;
    this.resume = resume;
    this.metrics = metrics;
  }

  @Override
  public synchronized boolean isEndOfInput() {
    if (failure != null) {
      // Not the end: readChunk reports the failure, which fails the write.
      return false;
    }
    if (length == 0) {
      return true;
    }
    fetchMore();
    return exhausted && ready.isEmpty() && regionDue == null;
  }

  @Override
  public void close() {
    final DefaultFileRegion due;
    synchronized (this) {
      closed = true;
      ready.forEach(BodyPiece::discard);
      ready.clear();
      due = regionDue;
      regionDue = null;
    }
    if (due != null) {
      due.release();
    }
  }

  @Deprecated
  @Override
  public Object readChunk(final ChannelHandlerContext ctx) throws Exception {
    return readChunk(ctx.alloc());
  }

  @Override
  public Object readChunk(final ByteBufAllocator allocator) throws Exception {
    final BodyPiece next;
    synchronized (this) {
      if (regionDue != null) {
        final DefaultFileRegion region = regionDue;
        regionDue = null;
        return region;
      }
      next = ready.poll();
      if (next == null) {
        if (failure != null) {
          // Pieces prepared before the failure have been sent: the client gets a clean prefix,
          // then the write fails and the connection closes. An Error is thrown as it is: never
          // an answer, it reaches the channel's failure handling and the log.
          if (failure instanceof Error error) {
            throw error;
          }
          throw (Exception) failure;
        }
        fetchMore();
        return null;
      }
      produced += next.length();
      if (next instanceof BodyPiece.FileSpan span) {
        regionsUnsent++;
        regionDue = new CountedRegion(span);
      }
      fetchMore();
    }
    metrics.bytes(next.length());
    if (next instanceof BodyPiece.Bytes bytes) {
      // Views of blocks read for this request only: wrapped, not copied.
      return Unpooled.wrappedBuffer(bytes.buffers().toArray(ByteBuffer[]::new));
    }
    final BodyPiece.FileSpan span = (BodyPiece.FileSpan) next;
    if (span.head().isEmpty()) {
      return readChunk(allocator);
    }
    return Unpooled.wrappedBuffer(span.head().toArray(ByteBuffer[]::new));
  }

  @Override
  public long length() {
    return length;
  }

  @Override
  public synchronized long progress() {
    return produced;
  }

  /** Starts preparing the next piece unless one is being prepared or enough are waiting. */
  private void fetchMore() {
    if (fetching || exhausted || closed || failure != null
        || ready.size() + regionsUnsent >= READ_AHEAD) {
      return;
    }
    fetching = true;
    try {
      executor.execute(this::fetch);
    } catch (final RejectedExecutionException e) {
      fetching = false;
      failure = e;
    }
  }

  /** The channel is done with a region (sent, or dropped with the connection). */
  private void regionReleased() {
    synchronized (this) {
      regionsUnsent--;
      fetchMore();
    }
  }

  /**
   * On the executor: one piece, then wake the writer. An {@link Error} while preparing it (out of
   * heap) fails this response, so its connection closes instead of waiting for a piece that never
   * comes, and is thrown on: the executor's thread reports it, it is never an answer.
   */
  private void fetch() {
    BodyPiece next = null;
    Throwable error = null;
    try {
      // Only one fetch runs at a time (the fetching flag, set and cleared under the lock, orders
      // them), so the iterator needs no lock, and the loop never waits on a disk read.
      if (slices == null) {
        slices = source.get();
      }
      next = slices.hasNext() ? slices.next() : null;
    } catch (final RuntimeException | Error e) {
      error = e;
    }
    synchronized (this) {
      fetching = false;
      if (error != null) {
        failure = error;
      } else if (next == null) {
        exhausted = true;
      } else if (closed) {
        next.discard();
      } else {
        ready.add(next);
      }
      fetchMore();
    }
    resume.run();
    if (error instanceof Error fatal) {
      throw fatal;
    }
  }

  /** A region that tells this input when the channel releases it (and closes its file). */
  private final class CountedRegion extends DefaultFileRegion {
    CountedRegion(final BodyPiece.FileSpan span) {
      super(span.file(), span.position(), span.count());
    }

    @Override
    protected void deallocate() {
      try {
        super.deallocate();
      } finally {
        regionReleased();
      }
    }
  }
}
