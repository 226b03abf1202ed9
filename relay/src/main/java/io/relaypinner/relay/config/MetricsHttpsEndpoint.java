package io.relaypinner.relay.config;

import java.util.Locale;
import java.util.Objects;
import java.util.OptionalInt;

/**
 * Where HTTPS clients reach the relay's HTTP routes: the host and port rules of spec 1 and 2.2 and
 * CONTRACT.md "HTTP details".
 *
 * <ul>
 *   <li>host: {@code METRICS_HTTPS_PUBLIC_HOST}, which must be exactly one DNS label under the
 *       serving zone (the certificate covers {@code *.<zone>} only); else
 *       {@code <PUBLIC_IPV4 with dots as dashes>.<zone>}; else {@code 127-0-0-1.<zone>};
 *   <li>external port: {@code EXTERNAL_METRICS_HTTPS_PORT} if set, else the internal port.
 * </ul>
 *
 * @param host the resolved host name, lower case
 * @param configuredPort {@code METRICS_HTTPS_PORT} (0 = ephemeral)
 * @param externalPortOverride {@code EXTERNAL_METRICS_HTTPS_PORT}, when set
 */
public record MetricsHttpsEndpoint(
    String host, int configuredPort, OptionalInt externalPortOverride) {

  private static final String VARIABLE = "METRICS_HTTPS_PUBLIC_HOST";

  public MetricsHttpsEndpoint {
    Objects.requireNonNull(host, "host");
    Objects.requireNonNull(externalPortOverride, "externalPortOverride");
  }

  /**
   * Applies the host rule for a serving zone.
   *
   * @param servingZone {@code <peer id as CIDv1 libp2p-key base36>.<RELAY_AUTOTLS_DOMAIN>}
   * @throws InvalidConfigException naming {@code METRICS_HTTPS_PUBLIC_HOST} when it is not one
   *     label under the zone
   */
  public static MetricsHttpsEndpoint resolve(final RelayConfig config, final String servingZone) {
    Objects.requireNonNull(servingZone, "servingZone");
    final String zone = servingZone.toLowerCase(Locale.ROOT);
    if (!Checks.isHostname(zone)) {
      throw new IllegalArgumentException("not a DNS name: serving zone " + servingZone);
    }
    final String host;
    if (config.https().publicHost().isPresent()) {
      host = config.https().publicHost().get();
      final String suffix = "." + zone;
      if (!host.endsWith(suffix)
          || !Checks.isLabel(host.substring(0, host.length() - suffix.length()))) {
        throw new InvalidConfigException(VARIABLE, VARIABLE + ": \"" + host
            + "\" is not one DNS label under the serving zone " + zone + " (e.g. 203-0-113-8."
            + zone + "); custom host names are not covered by the certificate");
      }
    } else if (config.deployment().publicIpv4().isPresent()) {
      host = config.deployment().publicIpv4().get().replace('.', '-') + "." + zone;
    } else {
      host = "127-0-0-1." + zone;
    }
    return new MetricsHttpsEndpoint(
        host, config.https().port(), config.deployment().externalMetricsHttpsPort());
  }

  /** The port clients outside use when the listener is bound to {@code internalPort}. */
  public int externalPort(final int internalPort) {
    return externalPortOverride.orElse(internalPort);
  }

  /** {@code https://<host>:<port>/health}. */
  public String healthUrl(final int port) {
    return "https://" + host + ":" + port + "/health";
  }
}
