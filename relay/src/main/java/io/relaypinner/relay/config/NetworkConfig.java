package io.relaypinner.relay.config;

import io.relaypinner.libp2p.host.ConnectionLimits;
import io.relaypinner.multiformats.Multiaddr;
import java.time.Duration;
import java.util.List;
import java.util.Objects;

/**
 * The libp2p listeners and the peers the relay talks to at start (CONTRACT.md:
 * {@code RELAY_LISTEN_IPV4}, {@code RELAY_LISTEN_IPV6}, {@code RELAY_DISABLE_IPV6},
 * {@code RELAY_TCP_PORT}, {@code RELAY_WS_PORT}, {@code RELAY_QUIC_PORT},
 * {@code RELAY_DISABLE_QUIC}, {@code RELAY_BOOTSTRAP_PEERS},
 * {@code RELAY_DISABLE_BOOTSTRAP}, {@code RELAY_ANNOUNCE}), and the connection manager's limits
 * ({@code RELAY_MAX_CONNECTIONS}, {@code RELAY_MAX_STREAMS_PER_CONNECTION},
 * {@code RELAY_HANDSHAKE_TIMEOUT_MS}, {@code RELAY_IDLE_TIMEOUT_MS},
 * {@code RELAY_MAX_PEER_INBOUND_BYTES_PER_SEC}), and the Kad-DHT's mode ({@code RELAY_DHT_MODE}).
 *
 * @param listenIpv4 IPv4 listen host
 * @param listenIpv6 IPv6 listen host, unused when {@code ipv6Disabled}
 * @param ipv6Disabled no IPv6 listeners
 * @param tcpPort libp2p TCP port, 0 = ephemeral
 * @param wsPort libp2p WebSocket port (also TLS when a certificate exists), 0 = ephemeral
 * @param quicPort libp2p QUIC v1 port (UDP), 0 = ephemeral; unused when {@code quicDisabled}
 * @param quicDisabled no QUIC listeners ({@code RELAY_DISABLE_QUIC}, as orbitdb-relay)
 * @param bootstrapPeers multiaddrs to dial at start, as configured
 * @param bootstrapDisabled ignore {@code bootstrapPeers}
 * @param announce extra multiaddrs to announce
 * @param maxConnections libp2p connections open at once (inbound beyond it refused at accept)
 * @param maxStreamsPerConnection streams a peer may have open on one connection
 * @param handshakeTimeout TLS + WebSocket + Noise + yamux of one new connection
 * @param idleTimeout a connection without streams for this long is closed; zero = never
 * @param maxPeerInboundBytesPerSec inbound bytes per second per peer; 0 = unlimited
 * @param autoNatDisabled no AutoNAT v1 server ({@code RELAY_DISABLE_AUTONAT}, as orbitdb-relay)
 * @param dhtMode the Kad-DHT's mode ({@code RELAY_DHT_MODE}, {@code RELAY_DISABLE_DHT})
 */
public record NetworkConfig(
    String listenIpv4,
    String listenIpv6,
    boolean ipv6Disabled,
    int tcpPort,
    int wsPort,
    int quicPort,
    boolean quicDisabled,
    List<String> bootstrapPeers,
    boolean bootstrapDisabled,
    List<String> announce,
    int maxConnections,
    int maxStreamsPerConnection,
    Duration handshakeTimeout,
    Duration idleTimeout,
    long maxPeerInboundBytesPerSec,
    boolean autoNatDisabled,
    DhtMode dhtMode) {

  public static final int MAX_MAX_CONNECTIONS = 1_000_000;
  public static final int MAX_STREAMS_PER_CONNECTION = 100_000;
  public static final long MIN_HANDSHAKE_TIMEOUT_MS = 100;
  public static final long MAX_HANDSHAKE_TIMEOUT_MS = 600_000;
  public static final long MAX_IDLE_TIMEOUT_MS = 86_400_000;
  public static final long MAX_PEER_INBOUND_BYTES_PER_SEC = 10L * 1024 * 1024 * 1024;
  /** A peer may send this many seconds' worth of its rate at once. */
  public static final int BURST_SECONDS = 2;

  /** {@code RELAY_QUIC_PORT}'s default: orbitdb-relay's. */
  public static final int DEFAULT_QUIC_PORT = 9094;

  /** {@code RELAY_DHT_MODE}'s default: see {@link DhtMode#CLIENT}. */
  public static final DhtMode DEFAULT_DHT_MODE = DhtMode.CLIENT;

  public NetworkConfig {
    Objects.requireNonNull(dhtMode, "dhtMode");
    Checks.ipv4("RELAY_LISTEN_IPV4", Objects.requireNonNull(listenIpv4, "listenIpv4"));
    Checks.ipv6("RELAY_LISTEN_IPV6", Objects.requireNonNull(listenIpv6, "listenIpv6"));
    Checks.port("RELAY_TCP_PORT", tcpPort);
    Checks.port("RELAY_WS_PORT", wsPort);
    Checks.port("RELAY_QUIC_PORT", quicPort);
    bootstrapPeers = Checks.multiaddrs("RELAY_BOOTSTRAP_PEERS", bootstrapPeers);
    announce = Checks.multiaddrs("RELAY_ANNOUNCE", announce);
    Checks.intRange("RELAY_MAX_CONNECTIONS", maxConnections, 1, MAX_MAX_CONNECTIONS);
    Checks.intRange("RELAY_MAX_STREAMS_PER_CONNECTION", maxStreamsPerConnection, 1,
        MAX_STREAMS_PER_CONNECTION);
    Checks.millis("RELAY_HANDSHAKE_TIMEOUT_MS", handshakeTimeout, MIN_HANDSHAKE_TIMEOUT_MS,
        MAX_HANDSHAKE_TIMEOUT_MS);
    Checks.millis("RELAY_IDLE_TIMEOUT_MS", idleTimeout, 0, MAX_IDLE_TIMEOUT_MS);
    if (maxPeerInboundBytesPerSec < 0
        || maxPeerInboundBytesPerSec > MAX_PEER_INBOUND_BYTES_PER_SEC) {
      throw InvalidConfigException.badValue("RELAY_MAX_PEER_INBOUND_BYTES_PER_SEC",
          maxPeerInboundBytesPerSec, Checks.intExpectation(0, MAX_PEER_INBOUND_BYTES_PER_SEC));
    }
  }

  /**
   * The libp2p connection manager's limits: these settings over {@link ConnectionLimits#DEFAULT}
   * (per-protocol stream limits as there; the burst is {@value #BURST_SECONDS} seconds of the
   * rate, at least 1 MiB).
   */
  public ConnectionLimits connectionLimits() {
    return ConnectionLimits.DEFAULT.toBuilder()
        .maxConnections(maxConnections)
        .maxStreamsPerConnection(maxStreamsPerConnection)
        .handshakeTimeout(handshakeTimeout)
        .idleTimeout(idleTimeout)
        .peerInboundBytesPerSecond(maxPeerInboundBytesPerSec)
        .peerInboundBurstBytes(Math.max(1L << 20, BURST_SECONDS * maxPeerInboundBytesPerSec))
        .build();
  }

  /** The peers to dial at start: none when bootstrap is disabled. */
  public List<String> effectiveBootstrapPeers() {
    return bootstrapDisabled ? List.of() : bootstrapPeers;
  }

  /**
   * {@link #effectiveBootstrapPeers()} parsed: TCP or WebSocket multiaddrs ending in
   * {@code /p2p/<id>}. Checked when the node is built (not here: a disabled list may hold
   * anything).
   *
   * @throws InvalidConfigException naming {@code RELAY_BOOTSTRAP_PEERS} when an entry cannot be
   *     dialled
   */
  public List<Multiaddr> bootstrapAddresses() {
    return Checks.peerMultiaddrs("RELAY_BOOTSTRAP_PEERS", effectiveBootstrapPeers());
  }
}
