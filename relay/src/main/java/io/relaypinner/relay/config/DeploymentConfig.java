package io.relaypinner.relay.config;

import java.util.Optional;
import java.util.OptionalInt;

/**
 * Facts about how the relay is reached from outside, written by the guest handoff (CONTRACT.md:
 * {@code PUBLIC_IPV4}, {@code PUBLIC_IPV6}, {@code PROXY_HOSTNAME} and the
 * {@code EXTERNAL_*_PORT} variables). External ports are 1-65535.
 */
public record DeploymentConfig(
    Optional<String> publicIpv4,
    Optional<String> publicIpv6,
    Optional<String> proxyHostname,
    OptionalInt externalTcpPort,
    OptionalInt externalWsPort,
    OptionalInt externalWebrtcPort,
    OptionalInt externalQuicPort,
    OptionalInt externalMetricsPort,
    OptionalInt externalMetricsHttpsPort) {

  public DeploymentConfig {
    publicIpv4.ifPresent(v -> Checks.ipv4("PUBLIC_IPV4", v));
    publicIpv6.ifPresent(v -> Checks.ipv6("PUBLIC_IPV6", v));
    proxyHostname = proxyHostname.map(v -> Checks.hostname("PROXY_HOSTNAME", v));
    check("EXTERNAL_RELAY_TCP_PORT", externalTcpPort);
    check("EXTERNAL_RELAY_WS_PORT", externalWsPort);
    check("EXTERNAL_RELAY_WEBRTC_PORT", externalWebrtcPort);
    check("EXTERNAL_RELAY_QUIC_PORT", externalQuicPort);
    check("EXTERNAL_METRICS_PORT", externalMetricsPort);
    check("EXTERNAL_METRICS_HTTPS_PORT", externalMetricsHttpsPort);
  }

  /**
   * Spec 4.2: deployed mode means that {@code PROXY_HOSTNAME}, {@code PUBLIC_IPV4} or an
   * {@code EXTERNAL_*_PORT} is set ({@code PUBLIC_IPV6} alone does not count).
   */
  public boolean deployedMode() {
    return proxyHostname.isPresent() || publicIpv4.isPresent() || externalTcpPort.isPresent()
        || externalWsPort.isPresent() || externalWebrtcPort.isPresent()
        || externalQuicPort.isPresent() || externalMetricsPort.isPresent()
        || externalMetricsHttpsPort.isPresent();
  }

  private static void check(final String variable, final OptionalInt port) {
    if (port.isPresent()) {
      Checks.publicPort(variable, port.getAsInt());
    }
  }
}
