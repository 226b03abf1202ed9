package io.relaypinner.relay.api;

import com.fasterxml.jackson.annotation.JsonPropertyOrder;

/**
 * The health record of spec 2.1, served by {@code GET /health}.
 *
 * @param status {@code ok} when live
 * @param version the relay's build version
 * @param peerId the relay's peer id
 * @param connections open libp2p connections
 * @param multiaddrs how many multiaddrs are advertised (a count, not the list)
 * @param autoTlsServingZone the serving zone for HTTPS host names
 * @param metricsHttps spec 2.2
 * @param timestamp ISO 8601 UTC
 */
@JsonPropertyOrder({"status", "version", "peerId", "connections", "multiaddrs",
    "autoTlsServingZone", "metricsHttps", "timestamp"})
public record HealthRecord(
    String status,
    String version,
    String peerId,
    Connections connections,
    int multiaddrs,
    String autoTlsServingZone,
    MetricsHttpsStatus metricsHttps,
    String timestamp) {

  /** {@code {"active": n}}. */
  public record Connections(int active) {}
}
