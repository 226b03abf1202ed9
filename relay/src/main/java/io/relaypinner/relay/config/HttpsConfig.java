package io.relaypinner.relay.config;

import java.util.Optional;

/**
 * The optional HTTPS listener of spec 1 and 2.2 (CONTRACT.md: {@code METRICS_HTTPS_ENABLED},
 * {@code METRICS_HTTPS_PORT}, {@code METRICS_HTTPS_PUBLIC_HOST}). Whether the public host is one
 * label under the serving zone can only be checked once the zone is known: see
 * {@link MetricsHttpsEndpoint#resolve}.
 *
 * @param enabled serve the HTTP routes over HTTPS too, once a certificate is available
 * @param port HTTPS listen port, 0 = ephemeral
 * @param publicHost the host name clients use, lower case
 */
public record HttpsConfig(boolean enabled, int port, Optional<String> publicHost) {
  public HttpsConfig {
    Checks.port("METRICS_HTTPS_PORT", port);
    publicHost = publicHost.map(v -> Checks.hostname("METRICS_HTTPS_PUBLIC_HOST", v));
  }
}
