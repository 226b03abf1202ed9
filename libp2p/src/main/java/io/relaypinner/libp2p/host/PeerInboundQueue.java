package io.relaypinner.libp2p.host;

import io.netty.channel.Channel;
import io.relaypinner.libp2p.host.LimitCounters.Limit;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One peer's budget of decoded inbound messages that wait for their protocol to process them,
 * over all its connections, streams and protocols ({@link ConnectionLimits#peerQueuedMessages()}
 * messages, {@link ConnectionLimits#peerQueuedBytes()} bytes). A stream whose message fills the
 * budget stops reading (auto-read off, so yamux stops granting window: backpressure, nothing is
 * dropped), and so does every other stream of the peer that delivers a message while it is full;
 * all of them read again once the peer's backlog is down to a quarter of each limit. Hitting the
 * budget is counted as {@link Limit#PEER_INBOUND_QUEUE}. Thread-safe.
 *
 * <p>Protocols take a ticket with {@link #admit} when a message is decoded and run it once the
 * message is handled (or dropped).
 */
public final class PeerInboundQueue {
  private final int maxMessages;
  private final long maxBytes;
  private final LimitCounters counters;
  private final Set<Channel> paused = new HashSet<>();
  private int messages;
  private long bytes;
  /** Connections of the peer using this budget (the connection manager's bookkeeping). */
  int users;

  /**
   * @param maxMessages decoded messages waiting at once before streams pause
   * @param maxBytes their bytes before streams pause
   * @param counters where hits are counted
   */
  public PeerInboundQueue(final int maxMessages, final long maxBytes,
      final LimitCounters counters) {
    if (maxMessages < 1 || maxBytes < 1) {
      throw new IllegalArgumentException("limits must be positive");
    }
    this.maxMessages = maxMessages;
    this.maxBytes = maxBytes;
    this.counters = counters;
  }

  /**
   * Charges a decoded message of {@code size} bytes read from {@code stream} (call on the
   * stream's event loop); pauses the stream when the peer's budget is full.
   *
   * @return the release: run it exactly once when the message is handled (further runs are
   *     ignored), from any thread
   */
  public Runnable admit(final Channel stream, final long size) {
    synchronized (this) {
      messages++;
      bytes += size;
      if ((messages >= maxMessages || bytes >= maxBytes) && paused.add(stream)) {
        stream.config().setAutoRead(false);
        counters.hit(Limit.PEER_INBOUND_QUEUE);
      }
    }
    final AtomicBoolean released = new AtomicBoolean();
    return () -> {
      if (released.compareAndSet(false, true)) {
        release(size);
      }
    };
  }

  private void release(final long size) {
    final List<Channel> resume;
    synchronized (this) {
      messages--;
      bytes -= size;
      if (paused.isEmpty() || messages > maxMessages / 4 || bytes > maxBytes / 4) {
        return;
      }
      resume = new ArrayList<>(paused);
      paused.clear();
    }
    for (final Channel stream : resume) {
      stream.eventLoop().execute(() -> {
        synchronized (this) {
          // Paused again meanwhile: stays paused until the next resume.
          if (paused.contains(stream)) {
            return;
          }
        }
        stream.config().setAutoRead(true);
      });
    }
  }

  /** Decoded messages waiting now. */
  public synchronized int messages() {
    return messages;
  }

  /** Their bytes. */
  public synchronized long bytes() {
    return bytes;
  }

  /** Streams of the peer paused now. */
  public synchronized int pausedStreams() {
    return paused.size();
  }
}
