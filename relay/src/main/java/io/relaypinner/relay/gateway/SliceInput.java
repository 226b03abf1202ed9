package io.relaypinner.relay.gateway;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.stream.ChunkedInput;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.Iterator;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Supplier;

/**
 * A file's bytes for a streamed {@code /ipfs/} body (spec 4.6): blocks are read on the storage
 * executor, never on the event loop, at most {@link #READ_AHEAD} blocks ahead of the socket, and
 * handed to the {@link io.netty.handler.stream.ChunkedWriteHandler}, which pulls only while the
 * channel is writable. {@code readChunk} answers {@code null} while a block is being read and
 * {@code resume} wakes the writer when it arrives.
 */
public final class SliceInput implements ChunkedInput<ByteBuf> {
  /** Blocks (up to 1 MiB each with Helia's chunker) read ahead per connection. */
  static final int READ_AHEAD = 3;

  private final Supplier<Iterator<ByteBuffer>> source;
  private final long length;
  private final Executor executor;
  private final Runnable resume;
  private final GatewayMetrics metrics;

  // Guarded by this: touched by the event loop (readChunk) and the executor (fetch).
  private final ArrayDeque<ByteBuffer> ready = new ArrayDeque<>();
  /** Read by one fetch at a time, see {@link #fetch}. */
  private Iterator<ByteBuffer> slices;
  private boolean fetching;
  private boolean exhausted;
  private boolean closed;
  private Exception failure;
  private long produced;

  public SliceInput(final Supplier<Iterator<ByteBuffer>> source, final long length,
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
    return exhausted && ready.isEmpty();
  }

  @Override
  public void close() {
    synchronized (this) {
      closed = true;
      ready.clear();
    }
  }

  @Deprecated
  @Override
  public ByteBuf readChunk(final ChannelHandlerContext ctx) throws Exception {
    return readChunk(ctx.alloc());
  }

  @Override
  public ByteBuf readChunk(final ByteBufAllocator allocator) throws Exception {
    final ByteBuffer next;
    synchronized (this) {
      next = ready.poll();
      if (next == null) {
        if (failure != null) {
          // Blocks read before the failure have been sent: the client gets a clean prefix.
          throw failure;
        }
        fetchMore();
        return null;
      }
      fetchMore();
      produced += next.remaining();
    }
    metrics.bytes(next.remaining());
    // The slice is a view of a block read for this request only: wrap, do not copy.
    return Unpooled.wrappedBuffer(next);
  }

  @Override
  public long length() {
    return length;
  }

  @Override
  public synchronized long progress() {
    return produced;
  }

  /** Starts reading the next block unless one is being read or enough are waiting. */
  private void fetchMore() {
    if (fetching || exhausted || closed || failure != null || ready.size() >= READ_AHEAD) {
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

  /** On the executor: one block, then wake the writer. */
  private void fetch() {
    ByteBuffer next = null;
    Exception error = null;
    try {
      // Only one fetch runs at a time (the fetching flag, set and cleared under the lock, orders
      // them), so the iterator needs no lock, and the loop never waits on a disk read.
      if (slices == null) {
        slices = source.get();
      }
      next = slices.hasNext() ? slices.next() : null;
    } catch (final RuntimeException e) {
      error = e;
    }
    synchronized (this) {
      fetching = false;
      if (error != null) {
        failure = error;
      } else if (next == null) {
        exhausted = true;
      } else if (!closed) {
        ready.add(next);
      }
      fetchMore();
    }
    resume.run();
  }
}
