package io.relaypinner.relay.config;

import io.relaypinner.common.budget.IpPrefix;
import io.relaypinner.common.budget.IpRange;
import java.util.List;
import java.util.Objects;

/**
 * The node budget's connection limits and how a remote address is keyed (CONTRACT.md:
 * {@code RELAY_MAX_CONNECTIONS_PER_IP}, {@code RELAY_HTTP_MAX_CONNECTIONS}; and
 * {@code RELAY_IPV4_PREFIX_LENGTH}, {@code RELAY_IPV6_PREFIX_LENGTH},
 * {@code RELAY_TRUSTED_PROXIES}: docs/hardening.md "The budget").
 *
 * @param maxConnectionsPerIp libp2p connections (half-open included) per IP key, and HTTP
 *     connections per IP key
 * @param httpMaxConnections HTTP connections open at once, both listeners together
 * @param prefix how a remote address becomes an IP key (IPv4 /32, IPv6 /64 by default)
 * @param trustedProxies addresses of reverse proxies the operator runs: connections from them
 *     are not capped per IP (they carry many clients), and only their {@code X-Forwarded-For}
 *     is believed
 */
public record BudgetConfig(
    int maxConnectionsPerIp,
    int httpMaxConnections,
    IpPrefix prefix,
    List<IpRange> trustedProxies) {

  public static final int DEFAULT_MAX_CONNECTIONS_PER_IP = 64;
  public static final int DEFAULT_HTTP_MAX_CONNECTIONS = 512;
  public static final int MAX_CONNECTIONS = 1_000_000;
  public static final BudgetConfig DEFAULT = new BudgetConfig(DEFAULT_MAX_CONNECTIONS_PER_IP,
      DEFAULT_HTTP_MAX_CONNECTIONS, IpPrefix.DEFAULT, List.of());

  public BudgetConfig {
    Checks.intRange("RELAY_MAX_CONNECTIONS_PER_IP", maxConnectionsPerIp, 1, MAX_CONNECTIONS);
    Checks.intRange("RELAY_HTTP_MAX_CONNECTIONS", httpMaxConnections, 1, MAX_CONNECTIONS);
    Objects.requireNonNull(prefix, "prefix");
    trustedProxies = List.copyOf(trustedProxies);
  }
}
