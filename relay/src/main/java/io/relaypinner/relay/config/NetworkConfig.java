package io.relaypinner.relay.config;

import java.util.List;
import java.util.Objects;

/**
 * The libp2p listeners and the peers the relay talks to at start (CONTRACT.md:
 * {@code RELAY_LISTEN_IPV4}, {@code RELAY_LISTEN_IPV6}, {@code RELAY_DISABLE_IPV6},
 * {@code RELAY_TCP_PORT}, {@code RELAY_WS_PORT}, {@code RELAY_BOOTSTRAP_PEERS},
 * {@code RELAY_DISABLE_BOOTSTRAP}, {@code RELAY_ANNOUNCE}).
 *
 * @param listenIpv4 IPv4 listen host
 * @param listenIpv6 IPv6 listen host, unused when {@code ipv6Disabled}
 * @param ipv6Disabled no IPv6 listeners
 * @param tcpPort libp2p TCP port, 0 = ephemeral
 * @param wsPort libp2p WebSocket port (also TLS when a certificate exists), 0 = ephemeral
 * @param bootstrapPeers multiaddrs to dial at start, as configured
 * @param bootstrapDisabled ignore {@code bootstrapPeers}
 * @param announce extra multiaddrs to announce
 */
public record NetworkConfig(
    String listenIpv4,
    String listenIpv6,
    boolean ipv6Disabled,
    int tcpPort,
    int wsPort,
    List<String> bootstrapPeers,
    boolean bootstrapDisabled,
    List<String> announce) {

  public NetworkConfig {
    Checks.ipv4("RELAY_LISTEN_IPV4", Objects.requireNonNull(listenIpv4, "listenIpv4"));
    Checks.ipv6("RELAY_LISTEN_IPV6", Objects.requireNonNull(listenIpv6, "listenIpv6"));
    Checks.port("RELAY_TCP_PORT", tcpPort);
    Checks.port("RELAY_WS_PORT", wsPort);
    bootstrapPeers = Checks.multiaddrs("RELAY_BOOTSTRAP_PEERS", bootstrapPeers);
    announce = Checks.multiaddrs("RELAY_ANNOUNCE", announce);
  }

  /** The peers to dial at start: none when bootstrap is disabled. */
  public List<String> effectiveBootstrapPeers() {
    return bootstrapDisabled ? List.of() : bootstrapPeers;
  }
}
