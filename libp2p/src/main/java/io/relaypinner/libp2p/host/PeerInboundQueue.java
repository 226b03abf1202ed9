package io.relaypinner.libp2p.host;

import io.netty.channel.Channel;
import io.netty.util.concurrent.Ticker;
import io.relaypinner.common.budget.Resource;
import io.relaypinner.common.budget.Scope;
import io.relaypinner.libp2p.host.LimitCounters.Limit;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One peer's budget of decoded inbound messages that wait for their protocol to process them,
 * over all its connections, streams and protocols ({@link ConnectionLimits#peerQueuedMessages()}
 * messages, {@link ConnectionLimits#peerQueuedBytes()} bytes). A stream whose message fills the
 * budget stops reading (auto-read off, so yamux stops granting window: backpressure, nothing is
 * dropped), and so does every other stream of the peer that delivers a message while it is full;
 * all of them read again once the peer's backlog is down to a quarter of each limit. Hitting the
 * budget is counted as {@link Limit#PEER_INBOUND_QUEUE}. Every peer's messages also count against
 * one budget of the whole node ({@link #node}, {@link ConnectionLimits#nodeQueuedBytes()}): many
 * peers each within their own budget could otherwise fill the heap together (40 hostile peers
 * flooding PRUNEs and wantlists did, on the relay's 160 MiB heap). The node's budget may also
 * reserve every message's bytes from a memory scope of the node budget (the libp2p surface):
 * when that scope (or the system above it) refuses, the message is counted there as held anyway
 * (it is decoded already) and its stream pauses as when the queue is full. Thread-safe.
 *
 * <p>Protocols take a ticket with {@link #admit} when a message is decoded and run it once the
 * message is handled (or dropped).
 */
public final class PeerInboundQueue {
  private final int maxMessages;
  private final long maxBytes;
  private final LimitCounters counters;
  private final Limit limit;
  /** The node-wide budget this peer's messages are charged to as well, or null. */
  private final PeerInboundQueue node;
  /** Where the node's budget reserves its bytes ({@link Resource#MEMORY}), or null. */
  private final Scope memory;
  /** What {@link #fullForNanos} is measured on. */
  private final Ticker ticker;
  /** Streams this budget paused, each with the peer budget it delivered through. */
  private final Map<Channel, PeerInboundQueue> paused = new HashMap<>();
  private int messages;
  private long bytes;
  /** When streams were first paused since the budget last drained (on {@link #ticker}). */
  private long fullSinceNanos;
  private boolean full;
  /** Connections of the peer using this budget (the connection manager's bookkeeping). */
  int users;

  /**
   * A peer's budget on its own.
   *
   * @param maxMessages decoded messages waiting at once before streams pause
   * @param maxBytes their bytes before streams pause
   * @param counters where hits are counted
   * @param ticker what {@link #fullForNanos} is measured on
   */
  public PeerInboundQueue(final int maxMessages, final long maxBytes,
      final LimitCounters counters, final Ticker ticker) {
    this(maxMessages, maxBytes, counters, Limit.PEER_INBOUND_QUEUE, null, ticker, null);
  }

  /**
   * A peer's budget whose messages also count against {@code node}, the budget of all peers
   * together (see {@link #node}): a stream pauses when either is full and reads again once
   * both have drained. Measures time on {@code node}'s ticker.
   */
  public PeerInboundQueue(final int maxMessages, final long maxBytes,
      final LimitCounters counters, final PeerInboundQueue node) {
    this(maxMessages, maxBytes, counters, Limit.PEER_INBOUND_QUEUE,
        Objects.requireNonNull(node, "node"), node.ticker, null);
  }

  private PeerInboundQueue(final int maxMessages, final long maxBytes,
      final LimitCounters counters, final Limit limit, final PeerInboundQueue node,
      final Ticker ticker, final Scope memory) {
    this.memory = memory;
    if (maxMessages < 1 || maxBytes < 1) {
      throw new IllegalArgumentException("limits must be positive");
    }
    this.maxMessages = maxMessages;
    this.maxBytes = maxBytes;
    this.counters = counters;
    this.limit = limit;
    this.node = node;
    this.ticker = Objects.requireNonNull(ticker, "ticker");
  }

  /**
   * The budget of all peers' decoded messages together, which peer budgets made with it charge
   * as well; hitting it is counted as {@link Limit#NODE_INBOUND_QUEUE}.
   */
  public static PeerInboundQueue node(final int maxMessages, final long maxBytes,
      final LimitCounters counters, final Ticker ticker) {
    return node(maxMessages, maxBytes, counters, ticker, null);
  }

  /**
   * As above, every message's bytes reserved from {@code memory} (the node budget's libp2p
   * memory scope; null: none) while it waits; a refusal is counted by the budget and pauses the
   * stream like a full queue.
   */
  public static PeerInboundQueue node(final int maxMessages, final long maxBytes,
      final LimitCounters counters, final Ticker ticker, final Scope memory) {
    return new PeerInboundQueue(maxMessages, maxBytes, counters, Limit.NODE_INBOUND_QUEUE, null,
        ticker, memory);
  }

  /**
   * Charges a decoded message of {@code size} bytes read from {@code stream} (call on the
   * stream's event loop); pauses the stream when the peer's budget, or the node's, is full.
   *
   * @return the release: run it exactly once when the message is handled (further runs are
   *     ignored), from any thread
   */
  public Runnable admit(final Channel stream, final long size) {
    charge(stream, size, this);
    if (node != null) {
      node.charge(stream, size, this);
    }
    final AtomicBoolean released = new AtomicBoolean();
    return () -> {
      if (released.compareAndSet(false, true)) {
        release(size);
        if (node != null) {
          node.release(size);
        }
      }
    };
  }

  private void charge(final Channel stream, final long size, final PeerInboundQueue peer) {
    boolean refused = false;
    if (memory != null && !memory.tryReserve(Resource.MEMORY, size)) {
      // Decoded already: held whatever the budget says, so counted as held (the scope refuses
      // others meanwhile), and no more is read from this stream until it drains.
      memory.force(Resource.MEMORY, size);
      refused = true;
    }
    synchronized (this) {
      messages++;
      bytes += size;
      if (refused || messages >= maxMessages || bytes >= maxBytes) {
        if (paused.put(stream, peer) == null) {
          counters.hit(limit);
        }
        if (!full) {
          full = true;
          fullSinceNanos = ticker.nanoTime();
        }
        // Even when already listed: the other budget may have resumed it meanwhile.
        stream.config().setAutoRead(false);
      }
    }
  }

  private void release(final long size) {
    if (memory != null) {
      memory.release(Resource.MEMORY, size);
    }
    final List<Map.Entry<Channel, PeerInboundQueue>> resume;
    synchronized (this) {
      messages--;
      bytes -= size;
      if (paused.isEmpty() || messages > maxMessages / 4 || bytes > maxBytes / 4) {
        return;
      }
      resume = new ArrayList<>(paused.entrySet());
      paused.clear();
      full = false;
    }
    for (final Map.Entry<Channel, PeerInboundQueue> entry : resume) {
      final Channel stream = entry.getKey();
      final PeerInboundQueue peer = entry.getValue();
      stream.eventLoop().execute(() -> {
        // Paused again meanwhile, or still held by the other budget: that one resumes it when
        // it drains (each budget lets go first, then checks, so one of them always resumes).
        if (peer.holds(stream) || (peer.node != null && peer.node.holds(stream))) {
          return;
        }
        stream.config().setAutoRead(true);
      });
    }
  }

  private synchronized boolean holds(final Channel stream) {
    return paused.containsKey(stream);
  }

  /** Decoded messages waiting now. */
  public synchronized int messages() {
    return messages;
  }

  /** Their bytes. */
  public synchronized long bytes() {
    return bytes;
  }

  /**
   * How long streams have been paused by this budget without it draining (0 when none is):
   * {@code now} is a reading of the ticker this budget was made with.
   */
  public synchronized long fullForNanos(final long now) {
    return full ? now - fullSinceNanos : 0;
  }

  /** Streams of the peer paused now. */
  public synchronized int pausedStreams() {
    return paused.size();
  }
}
