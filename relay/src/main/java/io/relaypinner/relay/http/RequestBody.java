package io.relaypinner.relay.http;

import io.netty.buffer.ByteBuf;
import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The body of a request on a streamed route, as a blocking {@link InputStream} for a worker
 * thread, fed by the connection's event loop ({@link StreamedBodyHandler}). Bounded four ways:
 * at most {@code maxBytes} in all (more: {@link TooLargeException}), at most {@link #HIGH_WATER}
 * bytes buffered (the connection stops reading until the reader has taken half of them), at most
 * {@code stall} waiting for the next bytes (then an {@link IOException}), and, on a route with
 * a total deadline, the whole body must have arrived by then ({@link DeadlineException}): the
 * stall alone let a client sending a byte a minute hold the reader for good.
 */
public final class RequestBody extends InputStream {
  /** Bytes buffered before the connection stops reading. */
  static final int HIGH_WATER = 1 << 20;
  /** Bytes buffered below which a paused connection reads again. */
  static final int LOW_WATER = HIGH_WATER / 2;

  /** The body went over the route's byte limit. */
  public static final class TooLargeException extends IOException {
    private static final long serialVersionUID = 1L;

    TooLargeException(final long limit) {
      super("request body is larger than " + limit + " bytes");
    }
  }

  /** The body had not arrived when the route's total deadline passed. */
  public static final class DeadlineException extends IOException {
    private static final long serialVersionUID = 1L;

    DeadlineException(final Duration deadline) {
      super("the request body did not arrive within " + deadline.toSeconds() + " s");
    }
  }

  /** What the connection does when the buffer fills and drains; called outside the lock. */
  interface FlowControl {
    void pause();

    void resume();
  }

  private final long maxBytes;
  private final Duration stall;
  private final FlowControl flow;
  private final ReentrantLock lock = new ReentrantLock();
  private final Condition changed = lock.newCondition();
  private final ArrayDeque<ByteBuf> chunks = new ArrayDeque<>();
  private long buffered;
  private long received;
  private boolean ended;
  private boolean paused;
  private boolean abandoned;
  private IOException failure;

  RequestBody(final long maxBytes, final Duration stall, final FlowControl flow) {
    this.maxBytes = maxBytes;
    this.stall = stall;
    this.flow = flow;
  }

  /** The route's byte limit. */
  public long maxBytes() {
    return maxBytes;
  }

  /**
   * Takes ownership of {@code chunk}. Returns false when the body was abandoned or failed (the
   * chunk is released: the rest of the body is discarded).
   */
  boolean offer(final ByteBuf chunk) {
    boolean pause = false;
    lock.lock();
    try {
      if (abandoned || failure != null) {
        chunk.release();
        return false;
      }
      received += chunk.readableBytes();
      if (received > maxBytes) {
        chunk.release();
        failure = new TooLargeException(maxBytes);
        releaseBuffered();
        changed.signalAll();
        return false;
      }
      if (chunk.isReadable()) {
        chunks.add(chunk);
        buffered += chunk.readableBytes();
      } else {
        chunk.release();
      }
      if (buffered >= HIGH_WATER && !paused) {
        paused = true;
        pause = true;
      }
      changed.signalAll();
    } finally {
      lock.unlock();
    }
    if (pause) {
      flow.pause();
    }
    return true;
  }

  /** The last byte has arrived. */
  void end() {
    lock.lock();
    try {
      ended = true;
      changed.signalAll();
    } finally {
      lock.unlock();
    }
  }

  /** The connection failed before the end: the reader gets {@code cause}. */
  void fail(final IOException cause) {
    lock.lock();
    try {
      if (failure == null && !ended) {
        failure = cause;
      }
      changed.signalAll();
    } finally {
      lock.unlock();
    }
  }

  /**
   * The route's total deadline passed: unless the whole body had arrived, the reader gets a
   * {@link DeadlineException} and what is buffered is dropped (nobody will read it).
   *
   * @return whether the body was cut (false: it had ended, failed or been abandoned already)
   */
  boolean expire(final Duration deadline) {
    boolean resume = false;
    lock.lock();
    try {
      if (ended || failure != null || abandoned) {
        return false;
      }
      failure = new DeadlineException(deadline);
      releaseBuffered();
      resume = paused;
      paused = false;
      changed.signalAll();
    } finally {
      lock.unlock();
    }
    if (resume) {
      flow.resume();
    }
    return true;
  }

  /** Nobody will read further (the route answered): buffered bytes are released. */
  void abandon() {
    boolean resume = false;
    lock.lock();
    try {
      abandoned = true;
      releaseBuffered();
      resume = paused;
      paused = false;
      changed.signalAll();
    } finally {
      lock.unlock();
    }
    if (resume) {
      flow.resume();
    }
  }

  private void releaseBuffered() {
    ByteBuf chunk;
    while ((chunk = chunks.poll()) != null) {
      chunk.release();
    }
    buffered = 0;
  }

  @Override
  public int read() throws IOException {
    final byte[] one = new byte[1];
    final int n = read(one, 0, 1);
    return n < 0 ? -1 : one[0] & 0xff;
  }

  @Override
  public int read(final byte[] into, final int offset, final int length) throws IOException {
    if (length == 0) {
      return 0;
    }
    boolean resume = false;
    final int n;
    lock.lock();
    try {
      long wait = stall.toNanos();
      while (chunks.isEmpty()) {
        if (failure != null) {
          if (failure instanceof TooLargeException) {
            throw new TooLargeException(maxBytes);
          }
          if (failure instanceof DeadlineException deadline) {
            throw deadline;
          }
          throw new IOException(failure.getMessage(), failure);
        }
        if (abandoned) {
          throw new IOException("the request body was abandoned");
        }
        if (ended) {
          return -1;
        }
        if (wait <= 0) {
          throw new IOException("no request body bytes for " + stall.toSeconds() + " s");
        }
        try {
          wait = changed.awaitNanos(wait);
        } catch (final InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new InterruptedIOException("interrupted reading the request body");
        }
      }
      final ByteBuf head = chunks.peek();
      n = Math.min(length, head.readableBytes());
      head.readBytes(into, offset, n);
      if (!head.isReadable()) {
        chunks.poll().release();
      }
      buffered -= n;
      if (paused && buffered <= LOW_WATER) {
        paused = false;
        resume = true;
      }
    } finally {
      lock.unlock();
    }
    if (resume) {
      flow.resume();
    }
    return n;
  }

  @Override
  public void close() {
    abandon();
  }

  /** Whether the connection should not read now (the buffer is full, not yet drained). */
  boolean paused() {
    lock.lock();
    try {
      return paused;
    } finally {
      lock.unlock();
    }
  }

  /** Bytes received so far (for tests and logs). */
  long received() {
    lock.lock();
    try {
      return received;
    } finally {
      lock.unlock();
    }
  }
}
