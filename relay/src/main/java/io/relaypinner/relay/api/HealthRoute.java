package io.relaypinner.relay.api;

import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.relaypinner.relay.http.HttpResponses;
import io.relaypinner.relay.http.RouteHandler;
import io.relaypinner.relay.http.RouteRequest;
import java.time.Clock;
import java.time.Instant;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

/**
 * {@code GET /health}, spec 4.1: the health record of 2.1, answered on the event loop from memory
 * (the node status is read, never waited for).
 *
 * <p>Health checks and load balancers call this route far more often than the record changes:
 * the serialized body is reused while the millisecond of the timestamp and every input stay the
 * same, so under load most answers cost no serialization and almost no garbage.
 */
public final class HealthRoute implements RouteHandler {
  private static final HealthRecord.Connections NO_CONNECTIONS = new HealthRecord.Connections(0);

  /** One serialized body and everything it was made from. */
  private record Body(long millis, String peerId, String zone, int connections, int multiaddrs,
      MetricsHttpsStatus metricsHttps, Map<String, String> stores, byte[] json) {}

  private final String version;
  private final NodeStatus status;
  private final Supplier<MetricsHttpsStatus> metricsHttps;
  private final Clock clock;
  private final HttpResponses responses;
  private volatile Body last;

  /**
   * @param version the build version, {@code RelayVersion.VERSION} in the node
   * @param metricsHttps the current 2.2 object (changes when the HTTPS listener starts or stops)
   */
  public HealthRoute(final String version, final NodeStatus status,
      final Supplier<MetricsHttpsStatus> metricsHttps, final Clock clock,
      final HttpResponses responses) {
    this.version = Objects.requireNonNull(version, "version");
    this.status = Objects.requireNonNull(status, "status");
    this.metricsHttps = Objects.requireNonNull(metricsHttps, "metricsHttps");
    this.clock = Objects.requireNonNull(clock, "clock");
    this.responses = Objects.requireNonNull(responses, "responses");
  }

  @Override
  public CompletableFuture<FullHttpResponse> handle(final RouteRequest request) {
    return CompletableFuture.completedFuture(HttpResponses.bytes(
        HttpResponseStatus.OK, HttpResponses.APPLICATION_JSON, body()));
  }

  /** The serialized record as of now; the array is shared, do not change it. */
  byte[] body() {
    final long millis = clock.millis();
    final String peerId = status.peerId();
    final String zone = status.autoTlsServingZone();
    final int connections = status.activeConnections();
    final int multiaddrs = status.multiaddrCount();
    final MetricsHttpsStatus https = metricsHttps.get();
    final Map<String, String> stores = status.stores();
    final Body cached = last;
    // Identity comparison on purpose: the inputs are long-lived objects, and a miss only costs
    // one serialization.
    if (cached != null && cached.millis() == millis && cached.peerId() == peerId
        && cached.zone() == zone && cached.connections() == connections
        && cached.multiaddrs() == multiaddrs && cached.metricsHttps() == https
        && cached.stores() == stores) {
      return cached.json();
    }
    final HealthRecord record = new HealthRecord("ok", version, peerId,
        connections == 0 ? NO_CONNECTIONS : new HealthRecord.Connections(connections),
        multiaddrs, zone, https, Timestamps.format(Instant.ofEpochMilli(millis)), stores);
    final byte[] json = responses.jsonBytes(record);
    last = new Body(millis, peerId, zone, connections, multiaddrs, https, stores, json);
    return json;
  }

  /** The record as of now. */
  public HealthRecord record() {
    final int active = status.activeConnections();
    return new HealthRecord("ok", version, status.peerId(),
        active == 0 ? NO_CONNECTIONS : new HealthRecord.Connections(active),
        status.multiaddrCount(), status.autoTlsServingZone(), metricsHttps.get(),
        Timestamps.now(clock), status.stores());
  }
}
