package io.relaypinner.relay.api;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import java.util.Map;

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
 * @param stores ours, beyond spec 2.1: with shared stores ({@code RELAY_BLOCKSTORE=s3},
 *     {@code RELAY_DATASTORE=postgres}) each one's state, {@code up} or {@code down}; absent
 *     with the embedded stores
 */
@JsonPropertyOrder({"status", "version", "peerId", "connections", "multiaddrs",
    "autoTlsServingZone", "metricsHttps", "timestamp", "stores"})
public record HealthRecord(
    String status,
    String version,
    String peerId,
    Connections connections,
    int multiaddrs,
    String autoTlsServingZone,
    MetricsHttpsStatus metricsHttps,
    String timestamp,
    @JsonInclude(JsonInclude.Include.NON_NULL) Map<String, String> stores) {

  /** {@code {"active": n}}. */
  public record Connections(int active) {}
}
