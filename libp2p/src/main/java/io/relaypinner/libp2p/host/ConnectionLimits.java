package io.relaypinner.libp2p.host;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * The connection manager's limits ({@link Host}); immutable, {@link #DEFAULT} suits a public relay
 * and {@link #builder()} validates every value. Every limit, when hit, is counted in
 * {@link Host#limitCounters()} under the {@link LimitCounters.Limit} it belongs to.
 *
 * @param maxConnections connections open at once, established or still upgrading, both
 *     directions; an inbound connection beyond it is closed right after accept, before a byte is
 *     read (outbound dials are never refused). The cap of a host without a
 *     {@link ConnectionBudget} of its node's ({@link HostConfig#connectionBudget()}); with one,
 *     the budget's scopes decide (in all and per IP key)
 * @param maxStreamsPerConnection streams the remote may have open at once on one connection (the
 *     yamux session's {@code maxInboundStreams}); a SYN beyond it is answered with RST
 * @param maxRejectedStreams SYNs beyond {@code maxStreamsPerConnection} that one connection may
 *     send; the next one closes the connection (a stream flood)
 * @param protocolStreamLimits inbound streams per connection per protocol: keys are exact protocol
 *     ids or prefixes ending in {@code *} ({@code /meshsub/*}); a stream beyond its limit is reset
 *     right after negotiation, as js-libp2p's registrar does
 * @param defaultProtocolStreamLimit the per-protocol limit of protocols without an entry
 * @param handshakeTimeout from accept (or connect) to a ready yamux session: TLS, the WebSocket
 *     upgrade, multistream, Noise and the muxer together
 * @param idleTimeout a connection with no open stream for this long is closed;
 *     {@link Duration#ZERO} disables it
 * @param peerInboundBytesPerSecond inbound bytes per second from one peer (all its connections
 *     together, after the handshake); beyond it, reading from the peer pauses until the budget
 *     refills (TCP backpressure, nothing is dropped); 0 = unlimited
 * @param peerInboundBurstBytes bytes a peer may send at once before the rate applies
 * @param peerQueuedMessages decoded inbound messages of one peer (all its connections, streams
 *     and protocols) waiting for processing before its streams stop reading ({@link
 *     PeerInboundQueue})
 * @param peerQueuedBytes the bytes of those messages before its streams stop reading
 * @param nodeQueuedMessages decoded inbound messages of all peers together waiting for
 *     processing before the streams that deliver more stop reading: the per-peer budgets alone
 *     would let many peers fill the heap ({@link PeerInboundQueue})
 * @param nodeQueuedBytes the bytes of those messages before those streams stop reading
 * @param streamOpensPerSecond inbound streams a connection may open per second (a token bucket
 *     holding twice as many); a stream beyond it is reset before its protocol is negotiated and
 *     counted as a fault of the peer
 * @param peerQueueFullTimeout a peer whose budget of decoded messages ({@code peerQueued*}) stays
 *     full this long commits a fault each time it delivers more ({@link PeerBanEngine})
 * @param peerFaults faults ({@link PeerBanEngine.Fault}) a peer may commit at once before it is
 *     banned; refilled at this many per {@code peerFaultWindow}
 * @param peerFaultWindow see {@code peerFaults}
 * @param peerBanDuration how long a peer's first ban lasts (its connections are closed, new ones
 *     closed right after the handshake); doubled on each later ban; {@link Duration#ZERO}: faults
 *     are counted, nobody is banned
 * @param maxPeerBanDuration the longest ban
 * @param ipBanPeers peers banned from one IP address (not loopback) before the IP is banned too
 *     (its connections closed at accept, before a byte is read)
 * @param maxTrackedPeers peers (and as many IPs) whose faults and bans are remembered; beyond it
 *     the one touched longest ago is forgotten
 */
public record ConnectionLimits(
    int maxConnections,
    int maxStreamsPerConnection,
    int maxRejectedStreams,
    Map<String, Integer> protocolStreamLimits,
    int defaultProtocolStreamLimit,
    Duration handshakeTimeout,
    Duration idleTimeout,
    long peerInboundBytesPerSecond,
    long peerInboundBurstBytes,
    int peerQueuedMessages,
    long peerQueuedBytes,
    int nodeQueuedMessages,
    long nodeQueuedBytes,
    int streamOpensPerSecond,
    Duration peerQueueFullTimeout,
    int peerFaults,
    Duration peerFaultWindow,
    Duration peerBanDuration,
    Duration maxPeerBanDuration,
    int ipBanPeers,
    int maxTrackedPeers) {

  /**
   * Limits of js-libp2p's registrar for the built-in protocols, plus gossipsub (2, as its
   * one long-lived stream per direction needs) and bitswap (32, Helia's inbound default).
   */
  public static final Map<String, Integer> DEFAULT_PROTOCOL_LIMITS = defaultProtocolLimits();

  /** Defaults: see each builder method. */
  public static final ConnectionLimits DEFAULT = builder().build();

  public ConnectionLimits {
    atLeast("maxConnections", maxConnections, 1);
    atLeast("maxStreamsPerConnection", maxStreamsPerConnection, 1);
    atLeast("maxRejectedStreams", maxRejectedStreams, 0);
    Objects.requireNonNull(protocolStreamLimits, "protocolStreamLimits");
    for (final Map.Entry<String, Integer> entry : protocolStreamLimits.entrySet()) {
      if (entry.getKey() == null || entry.getKey().isEmpty() || entry.getValue() == null) {
        throw new IllegalArgumentException("protocolStreamLimits has an empty entry");
      }
      atLeast("protocolStreamLimits[" + entry.getKey() + "]", entry.getValue(), 0);
    }
    protocolStreamLimits = Map.copyOf(protocolStreamLimits);
    atLeast("defaultProtocolStreamLimit", defaultProtocolStreamLimit, 1);
    Objects.requireNonNull(handshakeTimeout, "handshakeTimeout");
    if (handshakeTimeout.isNegative() || handshakeTimeout.isZero()) {
      throw new IllegalArgumentException("handshakeTimeout must be positive: " + handshakeTimeout);
    }
    Objects.requireNonNull(idleTimeout, "idleTimeout");
    if (idleTimeout.isNegative()) {
      throw new IllegalArgumentException("idleTimeout must not be negative: " + idleTimeout);
    }
    if (peerInboundBytesPerSecond < 0) {
      throw new IllegalArgumentException(
          "peerInboundBytesPerSecond must not be negative: " + peerInboundBytesPerSecond);
    }
    if (peerInboundBurstBytes < 1) {
      throw new IllegalArgumentException(
          "peerInboundBurstBytes must be positive: " + peerInboundBurstBytes);
    }
    atLeast("peerQueuedMessages", peerQueuedMessages, 1);
    if (peerQueuedBytes < 1) {
      throw new IllegalArgumentException("peerQueuedBytes must be positive: " + peerQueuedBytes);
    }
    atLeast("nodeQueuedMessages", nodeQueuedMessages, 1);
    if (nodeQueuedBytes < 1) {
      throw new IllegalArgumentException("nodeQueuedBytes must be positive: " + nodeQueuedBytes);
    }
    atLeast("streamOpensPerSecond", streamOpensPerSecond, 1);
    positive("peerQueueFullTimeout", peerQueueFullTimeout);
    atLeast("peerFaults", peerFaults, 1);
    positive("peerFaultWindow", peerFaultWindow);
    Objects.requireNonNull(peerBanDuration, "peerBanDuration");
    if (peerBanDuration.isNegative()) {
      throw new IllegalArgumentException("peerBanDuration must not be negative: "
          + peerBanDuration);
    }
    positive("maxPeerBanDuration", maxPeerBanDuration);
    if (maxPeerBanDuration.compareTo(peerBanDuration) < 0) {
      throw new IllegalArgumentException("maxPeerBanDuration " + maxPeerBanDuration
          + " is shorter than peerBanDuration " + peerBanDuration);
    }
    atLeast("ipBanPeers", ipBanPeers, 1);
    atLeast("maxTrackedPeers", maxTrackedPeers, 1);
  }

  /** Whether peers are banned for their faults ({@code peerBanDuration} not zero). */
  public boolean banning() {
    return !peerBanDuration.isZero();
  }

  private static void positive(final String name, final Duration value) {
    Objects.requireNonNull(value, name);
    if (value.isNegative() || value.isZero()) {
      throw new IllegalArgumentException(name + " must be positive: " + value);
    }
  }

  /**
   * The limit for inbound streams of {@code protocol} on one connection, and the key its streams
   * are counted under (protocols sharing a {@code *} entry share the count).
   */
  public Map.Entry<String, Integer> protocolLimit(final String protocol) {
    final Integer exact = protocolStreamLimits.get(protocol);
    if (exact != null) {
      return Map.entry(protocol, exact);
    }
    String bestKey = null;
    for (final String key : protocolStreamLimits.keySet()) {
      if (key.endsWith("*") && protocol.startsWith(key.substring(0, key.length() - 1))
          && (bestKey == null || key.length() > bestKey.length())) {
        bestKey = key;
      }
    }
    return bestKey != null
        ? Map.entry(bestKey, protocolStreamLimits.get(bestKey))
        : Map.entry(protocol, defaultProtocolStreamLimit);
  }

  private static Map<String, Integer> defaultProtocolLimits() {
    final Map<String, Integer> limits = new LinkedHashMap<>();
    limits.put("/ipfs/id/1.0.0", 1);
    limits.put("/ipfs/id/push/1.0.0", 1);
    limits.put("/ipfs/ping/1.0.0", 2);
    limits.put("/meshsub/*", 2);
    limits.put("/floodsub/*", 2);
    limits.put("/ipfs/bitswap*", 32);
    return Map.copyOf(limits);
  }

  private static void atLeast(final String name, final int value, final int min) {
    if (value < min) {
      throw new IllegalArgumentException(name + " must be >= " + min + ": " + value);
    }
  }

  public static Builder builder() {
    return new Builder();
  }

  /** A builder holding this record's values. */
  public Builder toBuilder() {
    return new Builder().maxConnections(maxConnections)
        .maxStreamsPerConnection(maxStreamsPerConnection).maxRejectedStreams(maxRejectedStreams)
        .protocolStreamLimits(protocolStreamLimits)
        .defaultProtocolStreamLimit(defaultProtocolStreamLimit)
        .handshakeTimeout(handshakeTimeout).idleTimeout(idleTimeout)
        .peerInboundBytesPerSecond(peerInboundBytesPerSecond)
        .peerInboundBurstBytes(peerInboundBurstBytes)
        .peerQueuedMessages(peerQueuedMessages).peerQueuedBytes(peerQueuedBytes)
        .nodeQueuedMessages(nodeQueuedMessages).nodeQueuedBytes(nodeQueuedBytes)
        .streamOpensPerSecond(streamOpensPerSecond).peerQueueFullTimeout(peerQueueFullTimeout)
        .peerFaults(peerFaults).peerFaultWindow(peerFaultWindow)
        .peerBanDuration(peerBanDuration).maxPeerBanDuration(maxPeerBanDuration)
        .ipBanPeers(ipBanPeers).maxTrackedPeers(maxTrackedPeers);
  }

  /** Collects values; {@link #build()} validates them. */
  public static final class Builder {
    private int maxConnections = 1024;
    private int maxStreamsPerConnection = 256;
    private int maxRejectedStreams = 64;
    private Map<String, Integer> protocolStreamLimits = DEFAULT_PROTOCOL_LIMITS;
    private int defaultProtocolStreamLimit = 128;
    private Duration handshakeTimeout = Duration.ofSeconds(10);
    private Duration idleTimeout = Duration.ofMinutes(5);
    private long peerInboundBytesPerSecond = 32L * 1024 * 1024;
    private long peerInboundBurstBytes = 64L * 1024 * 1024;
    private int peerQueuedMessages = 64;
    private long peerQueuedBytes = 4L * 1024 * 1024;
    private int nodeQueuedMessages = 512;
    private long nodeQueuedBytes = 8L * 1024 * 1024;
    private int streamOpensPerSecond = 64;
    private Duration peerQueueFullTimeout = Duration.ofSeconds(10);
    private int peerFaults = 8;
    private Duration peerFaultWindow = Duration.ofMinutes(1);
    private Duration peerBanDuration = Duration.ofMinutes(1);
    private Duration maxPeerBanDuration = Duration.ofMinutes(30);
    private int ipBanPeers = 8;
    private int maxTrackedPeers = 65_536;

    private Builder() {}

    /** Default 64 per second, bursts of 128. */
    public Builder streamOpensPerSecond(final int value) {
      this.streamOpensPerSecond = value;
      return this;
    }

    /** Default 10 s. */
    public Builder peerQueueFullTimeout(final Duration value) {
      this.peerQueueFullTimeout = value;
      return this;
    }

    /** Default 8 faults. */
    public Builder peerFaults(final int value) {
      this.peerFaults = value;
      return this;
    }

    /** Default 1 min (8 faults a minute refill). */
    public Builder peerFaultWindow(final Duration value) {
      this.peerFaultWindow = value;
      return this;
    }

    /** Default 1 min; zero disables banning. */
    public Builder peerBanDuration(final Duration value) {
      this.peerBanDuration = value;
      return this;
    }

    /** Default 30 min. */
    public Builder maxPeerBanDuration(final Duration value) {
      this.maxPeerBanDuration = value;
      return this;
    }

    /** Default 8 peers. */
    public Builder ipBanPeers(final int value) {
      this.ipBanPeers = value;
      return this;
    }

    /** Default 65,536. */
    public Builder maxTrackedPeers(final int value) {
      this.maxTrackedPeers = value;
      return this;
    }

    /** Default 1024. */
    public Builder maxConnections(final int value) {
      this.maxConnections = value;
      return this;
    }

    /** Default 256 (js-libp2p: 1000 per muxer, 32 per protocol). */
    public Builder maxStreamsPerConnection(final int value) {
      this.maxStreamsPerConnection = value;
      return this;
    }

    /** Default 64. */
    public Builder maxRejectedStreams(final int value) {
      this.maxRejectedStreams = value;
      return this;
    }

    /**
     * Default {@link #DEFAULT_PROTOCOL_LIMITS}: identify 1, push 1, ping 2, gossipsub 2, bitswap
     * 32.
     */
    public Builder protocolStreamLimits(final Map<String, Integer> value) {
      this.protocolStreamLimits = value;
      return this;
    }

    /** Default 128. */
    public Builder defaultProtocolStreamLimit(final int value) {
      this.defaultProtocolStreamLimit = value;
      return this;
    }

    /** Default 10 s, as js-libp2p's inbound upgrade timeout. */
    public Builder handshakeTimeout(final Duration value) {
      this.handshakeTimeout = value;
      return this;
    }

    /** Default 5 min; zero disables it. */
    public Builder idleTimeout(final Duration value) {
      this.idleTimeout = value;
      return this;
    }

    /** Default 32 MiB/s; 0 = unlimited. */
    public Builder peerInboundBytesPerSecond(final long value) {
      this.peerInboundBytesPerSecond = value;
      return this;
    }

    /** Default 64 MiB. */
    public Builder peerInboundBurstBytes(final long value) {
      this.peerInboundBurstBytes = value;
      return this;
    }

    /** Default 64 messages. */
    public Builder peerQueuedMessages(final int value) {
      this.peerQueuedMessages = value;
      return this;
    }

    /**
     * Default 4 MiB (one bitswap message of the largest size: the stream pauses after it, so
     * nothing is refused). Was 16 MiB; decoded messages waiting live long enough to reach the
     * old generation, and under a flood of 100 peers the larger budgets kept the relay's
     * 160 MiB heap in back-to-back full collections (docs/benchmarks.md, issue 18).
     */
    public Builder peerQueuedBytes(final long value) {
      this.peerQueuedBytes = value;
      return this;
    }

    /** Default 512 messages (was 1,024). */
    public Builder nodeQueuedMessages(final int value) {
      this.nodeQueuedMessages = value;
      return this;
    }

    /**
     * Default 8 MiB (was 16 MiB): decoded control messages take about four times their wire size
     * on the heap (a PRUNE of 25 bytes is a 110-byte object graph), so this keeps the backlog of
     * all peers together within about 35 MiB of the relay's 160 MiB heap.
     */
    public Builder nodeQueuedBytes(final long value) {
      this.nodeQueuedBytes = value;
      return this;
    }

    public ConnectionLimits build() {
      return new ConnectionLimits(maxConnections, maxStreamsPerConnection, maxRejectedStreams,
          protocolStreamLimits, defaultProtocolStreamLimit, handshakeTimeout, idleTimeout,
          peerInboundBytesPerSecond, peerInboundBurstBytes, peerQueuedMessages, peerQueuedBytes,
          nodeQueuedMessages, nodeQueuedBytes, streamOpensPerSecond, peerQueueFullTimeout,
          peerFaults, peerFaultWindow, peerBanDuration, maxPeerBanDuration, ipBanPeers,
          maxTrackedPeers);
    }
  }
}
