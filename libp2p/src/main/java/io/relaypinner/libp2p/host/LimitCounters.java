package io.relaypinner.libp2p.host;

import java.util.Collections;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * How often each connection limit was hit, and how many connections were closed for breaking the
 * wire rules; thread-safe, never reset. Exported by the relay as
 * {@code libp2p_limit_hits_total{limit="<name>"}}.
 */
public final class LimitCounters {
  /** One limit (or class of violation); {@link #label()} is its metric label. */
  public enum Limit {
    /**
     * An inbound connection beyond the host's connections ({@link ConnectionBudget#transport()},
     * by default {@link ConnectionLimits#maxConnections()}) was refused.
     */
    MAX_CONNECTIONS,
    /** A stream beyond {@link ConnectionLimits#maxStreamsPerConnection()} was reset. */
    MAX_STREAMS_PER_CONNECTION,
    /** A stream beyond its protocol's limit on the connection was reset. */
    MAX_PROTOCOL_STREAMS,
    /** A connection kept opening streams beyond the cap and was closed. */
    STREAM_FLOOD,
    /** A connection did not finish TLS + WebSocket + Noise + yamux in time and was closed. */
    HANDSHAKE_TIMEOUT,
    /** A connection's handshake failed by the remote's fault (bad bytes, bad Noise). */
    HANDSHAKE_FAILED,
    /** An established connection broke the muxer's rules (bad frame, window overrun). */
    PROTOCOL_VIOLATION,
    /** A connection without streams stayed idle past the idle timeout and was closed. */
    IDLE_TIMEOUT,
    /** A peer exceeded its inbound byte rate: reading from it paused for a while. */
    PEER_INBOUND_BYTES,
    /**
     * A peer's decoded messages waiting for their protocols filled its budget ({@link
     * PeerInboundQueue}): its streams paused until the backlog drained.
     */
    PEER_INBOUND_QUEUE,
    /**
     * The decoded messages of all peers together filled the node's budget ({@link
     * ConnectionLimits#nodeQueuedBytes()}): the streams delivering more paused until it drained.
     */
    NODE_INBOUND_QUEUE,
    /**
     * A connection opened streams faster than {@link ConnectionLimits#streamOpensPerSecond()}:
     * the stream was reset (a fault of the peer).
     */
    STREAM_OPEN_RATE,
    /**
     * A peer's decoded messages filled its budget for longer than {@link
     * ConnectionLimits#peerQueueFullTimeout()}: its connections were closed (a fault of the peer).
     */
    PEER_QUEUE_STALLED,
    /**
     * A peer committed more faults than {@link ConnectionLimits#peerFaults()} allows ({@link
     * PeerBanEngine}): it was banned and its connections closed.
     */
    PEER_BANNED,
    /** A connection from a banned peer was closed right after the handshake identified it. */
    BANNED_PEER,
    /** A connection from a banned IP address was closed at accept, before a byte was read. */
    BANNED_IP,
    /**
     * An inbound connection beyond its IP key's share ({@link ConnectionBudget#ips()}, half-open
     * ones included) was closed at accept, before a byte was read.
     */
    MAX_CONNECTIONS_PER_IP,
    /**
     * A datagram to a QUIC listener that cannot be a QUIC v1 packet of it (garbage, another
     * version, a short Initial, a connection id it never issued) was dropped unparsed.
     */
    QUIC_DATAGRAM_DROPPED,
    /**
     * A remote's TLS certificate broke libp2p's TLS rules (no or a wrong libp2p extension, a bad
     * signature, expired): the QUIC handshake was refused.
     */
    BAD_CERTIFICATE;

    /** The metric label: the name in lower case, e.g. {@code max_connections}. */
    public String label() {
      return name().toLowerCase(Locale.ROOT);
    }
  }

  private final AtomicLongArray counts = new AtomicLongArray(Limit.values().length);

  /** Counts one hit. */
  public void hit(final Limit limit) {
    counts.incrementAndGet(limit.ordinal());
  }

  public long get(final Limit limit) {
    return counts.get(limit.ordinal());
  }

  /** Every limit with its count, in declaration order. */
  public Map<Limit, Long> snapshot() {
    final Map<Limit, Long> out = new EnumMap<>(Limit.class);
    for (final Limit limit : Limit.values()) {
      out.put(limit, counts.get(limit.ordinal()));
    }
    return Collections.unmodifiableMap(out);
  }

  /** Every limit's label with its count, in declaration order. */
  public Map<String, Long> byLabel() {
    final Map<String, Long> out = new LinkedHashMap<>();
    for (final Limit limit : Limit.values()) {
      out.put(limit.label(), counts.get(limit.ordinal()));
    }
    return Collections.unmodifiableMap(out);
  }
}
