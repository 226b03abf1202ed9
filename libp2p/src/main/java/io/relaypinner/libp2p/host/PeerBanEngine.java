package io.relaypinner.libp2p.host;

import io.relaypinner.common.Backoff;
import io.relaypinner.multiformats.PeerId;
import java.time.Clock;
import java.util.Collections;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * Who keeps misbehaving, and who is banned for it: the connection manager reports each fault of a
 * peer (garbage it sent, a limit it ran into, see {@link Fault}); a peer may commit
 * {@link ConnectionLimits#peerFaults()} faults at once, refilled at that many per
 * {@link ConnectionLimits#peerFaultWindow()} (a token bucket, so an honest peer's rare fault never
 * adds up); the fault beyond bans the peer id for {@link ConnectionLimits#peerBanDuration()},
 * doubled on each later ban of the same peer up to {@link ConnectionLimits#maxPeerBanDuration()}.
 * An IP address from which {@link ConnectionLimits#ipBanPeers()} different peers were banned
 * (while their bans last) is banned as well, for as long as its latest peer ban; loopback
 * addresses never are (a local reverse proxy's connections all come from them). At most
 * {@link ConnectionLimits#maxTrackedPeers()} peers and as many IPs are remembered, the entry
 * touched longest ago forgotten first. Protocol state only: no Netty, time from an injected
 * {@link Clock}; thread-safe (every method synchronized, each is a few map operations).
 */
public final class PeerBanEngine {
  /** What a peer did wrong; {@link #label()} is its metric label. */
  public enum Fault {
    /** A frame or message that does not decode, or is over its size limit. */
    MALFORMED_MESSAGE,
    /** A stream beyond its protocol's limit per connection, or beyond the stream-open rate. */
    STREAM_OVER_LIMIT,
    /** A message that decodes but breaks a protocol's bounds (a topic too long, too many). */
    PROTOCOL_BOUND,
    /**
     * The peer's inbound budget of decoded messages stayed full for
     * {@link ConnectionLimits#peerQueueFullTimeout()}: it sends faster than it is served.
     */
    INBOUND_QUEUE_FULL,
    /** The muxer's rules broken (a bad yamux frame, a window overrun) or a stream flood. */
    PROTOCOL_VIOLATION;

    public String label() {
      return name().toLowerCase(java.util.Locale.ROOT);
    }
  }

  private final ConnectionLimits limits;
  /** A peer's n-th ban in a row lasts {@code peerBanDuration * 2^(n-1)}, at most the maximum. */
  private final Backoff banLength;
  private final Clock clock;
  private final AtomicLongArray faults = new AtomicLongArray(Fault.values().length);
  /** Access-ordered: the first entry is the one touched longest ago. */
  private final Map<PeerId, PeerRecord> peers = new LinkedHashMap<>(64, 0.75f, true);
  private final Map<String, IpRecord> ips = new LinkedHashMap<>(64, 0.75f, true);
  private long bans;
  private long evictions;

  public PeerBanEngine(final ConnectionLimits limits, final Clock clock) {
    this.limits = Objects.requireNonNull(limits, "limits");
    this.clock = Objects.requireNonNull(clock, "clock");
    this.banLength = Backoff.of(limits.peerBanDuration(), limits.maxPeerBanDuration());
  }

  private static final class PeerRecord {
    double tokens;
    long lastRefillMillis;

    PeerRecord(final double tokens, final long now) {
      this.tokens = tokens;
      this.lastRefillMillis = now;
    }

    long bannedUntilMillis;
    long lastBanMillis;
    int bansSoFar;
    String ip;
  }

  private static final class IpRecord {
    /** Peers banned from this IP while their bans last: peer → ban end. */
    final Map<PeerId, Long> bannedPeers = new LinkedHashMap<>();
    long bannedUntilMillis;
  }

  /**
   * Records a fault of {@code peer}, connected from {@code ip} (null if unknown).
   *
   * @return true when this fault banned the peer: its connections are to be closed now
   */
  public synchronized boolean fault(final PeerId peer, final String ip, final Fault fault) {
    faults.incrementAndGet(fault.ordinal());
    final long now = clock.millis();
    final PeerRecord record = peers.computeIfAbsent(peer,
        p -> new PeerRecord(limits.peerFaults(), now));
    if (ip != null) {
      record.ip = ip;
    }
    evictPeers();
    if (record.bannedUntilMillis > now) {
      return false;
    }
    final long elapsed = now - record.lastRefillMillis;
    if (elapsed > 0) {
      record.tokens = Math.min(limits.peerFaults(), record.tokens
          + elapsed * (double) limits.peerFaults() / limits.peerFaultWindow().toMillis());
      record.lastRefillMillis = now;
    }
    if (record.tokens >= 1) {
      record.tokens -= 1;
      return false;
    }
    ban(peer, record, now);
    return true;
  }

  private void ban(final PeerId peer, final PeerRecord record, final long now) {
    // A peer banned again soon after its last ban gets twice as long; after a quiet spell (the
    // maximum ban's length since the last one ended) it starts over.
    if (record.bansSoFar > 0
        && now - record.lastBanMillis > 2 * limits.maxPeerBanDuration().toMillis()) {
      record.bansSoFar = 0;
    }
    record.bansSoFar++;
    final long duration = banLength.delayMillis(record.bansSoFar);
    record.lastBanMillis = now;
    record.bannedUntilMillis = now + duration;
    record.tokens = limits.peerFaults();
    record.lastRefillMillis = record.bannedUntilMillis;
    bans++;
    if (record.ip == null || isLoopback(record.ip)) {
      return;
    }
    final IpRecord ip = ips.computeIfAbsent(record.ip, i -> new IpRecord());
    ip.bannedPeers.values().removeIf(until -> until <= now);
    ip.bannedPeers.remove(peer);
    ip.bannedPeers.put(peer, record.bannedUntilMillis);
    while (ip.bannedPeers.size() > limits.ipBanPeers()) {
      ip.bannedPeers.remove(ip.bannedPeers.keySet().iterator().next());
    }
    if (ip.bannedPeers.size() >= limits.ipBanPeers()) {
      ip.bannedUntilMillis = Math.max(ip.bannedUntilMillis, record.bannedUntilMillis);
    }
    while (ips.size() > limits.maxTrackedPeers()) {
      final var eldest = ips.keySet().iterator();
      eldest.next();
      eldest.remove();
      evictions++;
    }
  }

  private void evictPeers() {
    while (peers.size() > limits.maxTrackedPeers()) {
      final var eldest = peers.keySet().iterator();
      eldest.next();
      eldest.remove();
      evictions++;
    }
  }

  /** Whether {@code peer} is banned now (its connections are closed once established). */
  public synchronized boolean isBanned(final PeerId peer) {
    final PeerRecord record = peers.get(peer);
    return record != null && record.bannedUntilMillis > clock.millis();
  }

  /** Whether {@code ip} is banned now (its connections are closed at accept). */
  public synchronized boolean isBanned(final String ip) {
    if (ips.isEmpty()) {
      return false;
    }
    final IpRecord record = ips.get(ip);
    return record != null && record.bannedUntilMillis > clock.millis();
  }

  /** When the ban of {@code peer} ends, or null when it is not banned. */
  public synchronized java.time.Instant bannedUntil(final PeerId peer) {
    final PeerRecord record = peers.get(peer);
    return record == null || record.bannedUntilMillis <= clock.millis() ? null
        : java.time.Instant.ofEpochMilli(record.bannedUntilMillis);
  }

  /** Peers remembered now (faults or bans), at most {@link ConnectionLimits#maxTrackedPeers()}. */
  public synchronized int trackedPeers() {
    return peers.size();
  }

  /** IPs remembered now, at most {@link ConnectionLimits#maxTrackedPeers()}. */
  public synchronized int trackedIps() {
    return ips.size();
  }

  /** Bans issued so far. */
  public synchronized long bans() {
    return bans;
  }

  /** Peers or IPs forgotten to stay within the bound. */
  public synchronized long evictions() {
    return evictions;
  }

  /** Faults reported so far, by kind. */
  public Map<Fault, Long> faults() {
    final Map<Fault, Long> out = new EnumMap<>(Fault.class);
    for (final Fault fault : Fault.values()) {
      out.put(fault, faults.get(fault.ordinal()));
    }
    return Collections.unmodifiableMap(out);
  }

  /** A textual IP (as {@code InetAddress#getHostAddress()}) of the loopback range. */
  static boolean isLoopback(final String ip) {
    return ip.startsWith("127.") || ip.equals("::1") || ip.equals("0:0:0:0:0:0:0:1");
  }
}
