package io.relaypinner.relay.testing;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Issue 36's half-open flood: keeps {@code n} silent TCP connections from one local address
 * (e.g. 127.0.0.2: Linux routes all of 127/8 to lo, so a socket bound there reaches a relay on
 * 127.0.0.1 from another IP) open to one target; a connection the target closes is opened again
 * half a second later (not at once: a tight loop would only exhaust the machine's ephemeral
 * ports). Shared by the in-process attack ({@code HalfOpenFloodIT}) and the one against the
 * launcher's relay JVM ({@code SurfaceAttackIT} in cli).
 *
 * <pre>
 *   try (SocketFlood flood = new SocketFlood(from, to)) {
 *     flood.openAll(1_100);
 *     flood.start();               // re-opens what the target closes, on a daemon thread
 *     ...
 *   }                              // stops, closes every socket
 * </pre>
 */
public final class SocketFlood implements AutoCloseable {
  private static final long REOPEN_AFTER_NANOS = TimeUnit.MILLISECONDS.toNanos(500);
  private final InetSocketAddress from;
  private final InetSocketAddress to;
  private final Selector selector;
  private final ArrayDeque<Long> reopenAt = new ArrayDeque<>();
  private final Map<SocketChannel, Boolean> open = new HashMap<>();
  private final AtomicLong opened = new AtomicLong();
  private final AtomicInteger closedByTarget = new AtomicInteger();
  private volatile boolean running = true;
  private Thread loop;

  /** A flood of connections bound to {@code from} (port 0) towards {@code to}. */
  public SocketFlood(final InetSocketAddress from, final InetSocketAddress to)
      throws IOException {
    this.from = from;
    this.to = to;
    this.selector = Selector.open();
  }

  /** Opens {@code n} connections now, on the caller's thread (before {@link #start}). */
  public void openAll(final int n) throws IOException {
    for (int i = 0; i < n; i++) {
      openOne();
    }
  }

  /** Connections opened so far, re-opened ones included. */
  public long opened() {
    return opened.get();
  }

  /** Connections the target closed so far. */
  public int closedByTarget() {
    return closedByTarget.get();
  }

  private void openOne() throws IOException {
    final SocketChannel channel = SocketChannel.open();
    channel.bind(from);
    channel.connect(to);
    channel.configureBlocking(false);
    channel.register(selector, SelectionKey.OP_READ);
    open.put(channel, Boolean.TRUE);
    opened.incrementAndGet();
  }

  /** Runs {@link #run} on a daemon thread: what the target closes is opened again. */
  public void start() {
    loop = new Thread(this::run, "half-open-attacker");
    loop.setDaemon(true);
    loop.start();
  }

  /** Reads (and discards) what arrives, re-opens what the target closed, until stopped. */
  public void run() {
    final ByteBuffer buffer = ByteBuffer.allocate(1024);
    try {
      while (running) {
        selector.select(50);
        for (final SelectionKey key : selector.selectedKeys()) {
          final SocketChannel channel = (SocketChannel) key.channel();
          buffer.clear();
          int read;
          try {
            read = channel.read(buffer);
          } catch (final IOException e) {
            read = -1;
          }
          if (read < 0) {
            key.cancel();
            channel.close();
            open.remove(channel);
            closedByTarget.incrementAndGet();
            reopenAt.add(System.nanoTime() + REOPEN_AFTER_NANOS);
          }
        }
        selector.selectedKeys().clear();
        final long now = System.nanoTime();
        while (running && !reopenAt.isEmpty() && reopenAt.peek() - now <= 0) {
          reopenAt.poll();
          try {
            openOne();
          } catch (final IOException e) {
            // A refused connect is the target's answer too: try again later.
            reopenAt.add(now + REOPEN_AFTER_NANOS);
          }
        }
      }
    } catch (final IOException e) {
      throw new IllegalStateException(e);
    } finally {
      try {
        selector.close();
      } catch (final IOException ignored) {
        // closing anyway
      }
      for (final SocketChannel channel : open.keySet()) {
        try {
          channel.close();
        } catch (final IOException ignored) {
          // closing anyway
        }
      }
    }
  }

  /** Stops the loop, which closes every connection (waited for up to 5 s). */
  @Override
  public void close() throws InterruptedException {
    running = false;
    selector.wakeup();
    if (loop != null) {
      loop.join(5_000);
      return;
    }
    // Never started: nothing else closes them.
    for (final SocketChannel channel : open.keySet()) {
      try {
        channel.close();
      } catch (final IOException ignored) {
        // closing anyway
      }
    }
    try {
      selector.close();
    } catch (final IOException ignored) {
      // closing anyway
    }
  }
}
