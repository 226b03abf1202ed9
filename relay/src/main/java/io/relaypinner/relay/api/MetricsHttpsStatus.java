package io.relaypinner.relay.api;

import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import io.relaypinner.relay.config.MetricsHttpsEndpoint;
import java.util.Objects;

/**
 * The {@code metricsHttps} object of spec 2.2, always complete (CONTRACT.md "HTTP details").
 *
 * <p>While not listening: {@code port} and {@code exampleUrl} are null, {@code internalPort} is
 * the configured {@code METRICS_HTTPS_PORT}, {@code externalPort} is
 * {@code EXTERNAL_METRICS_HTTPS_PORT} or else {@code internalPort}, and
 * {@code internalExampleUrl} is built from those. While listening: {@code port} and
 * {@code internalPort} are the bound port.
 *
 * @param enabled {@code METRICS_HTTPS_ENABLED}
 * @param listening the HTTPS listener is up with a certificate
 * @param port the bound port, null when not listening
 * @param internalPort the bound port, or the configured one while not listening
 * @param externalPort {@code EXTERNAL_METRICS_HTTPS_PORT} if set, else {@code internalPort}
 * @param host the resolved serving-zone host name
 * @param exampleUrl {@code https://<host>:<externalPort>/health}, null when not listening
 * @param internalExampleUrl {@code https://<host>:<internalPort>/health}
 */
@JsonPropertyOrder({"enabled", "listening", "port", "internalPort", "externalPort", "host",
    "exampleUrl", "internalExampleUrl"})
public record MetricsHttpsStatus(
    boolean enabled,
    boolean listening,
    Integer port,
    int internalPort,
    int externalPort,
    String host,
    String exampleUrl,
    String internalExampleUrl) {

  public MetricsHttpsStatus {
    Objects.requireNonNull(host, "host");
    Objects.requireNonNull(internalExampleUrl, "internalExampleUrl");
  }

  /** The HTTPS listener is not running (disabled, or no certificate yet). */
  public static MetricsHttpsStatus notListening(
      final boolean enabled, final MetricsHttpsEndpoint endpoint) {
    final int internal = endpoint.configuredPort();
    return new MetricsHttpsStatus(enabled, false, null, internal, endpoint.externalPort(internal),
        endpoint.host(), null, endpoint.healthUrl(internal));
  }

  /** The HTTPS listener is bound to {@code boundPort} with a certificate. */
  public static MetricsHttpsStatus listening(
      final MetricsHttpsEndpoint endpoint, final int boundPort) {
    final int external = endpoint.externalPort(boundPort);
    return new MetricsHttpsStatus(true, true, boundPort, boundPort, external, endpoint.host(),
        endpoint.healthUrl(external), endpoint.healthUrl(boundPort));
  }
}
