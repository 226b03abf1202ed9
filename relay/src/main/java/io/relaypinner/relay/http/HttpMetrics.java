package io.relaypinner.relay.http;

import io.netty.handler.codec.http.HttpMethod;
import io.prometheus.metrics.core.datapoints.CounterDataPoint;
import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.Gauge;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * The HTTP listener's metrics, registered on the node's registry (spec 4.3):
 *
 * <ul>
 *   <li>{@code relay_http_requests_total{route,method,status_class}}: answered requests; route is
 *       the registered pattern, {@code unmatched} (404) or {@code rejected} (refused before
 *       routing: 400, 413, 431); method is GET, HEAD, POST, OPTIONS, PUT, DELETE, PATCH or other;
 *       status_class is 1xx to 5xx;
 *   <li>{@code relay_http_request_errors_total{reason}}: error answers by JSON error code
 *       ({@code headers_too_large}, {@code payload_too_large}, {@code bad_request},
 *       {@code method_not_allowed}, {@code internal_error}) or {@code not_found};
 *   <li>{@code relay_http_connections_active}: open connections.
 * </ul>
 *
 * Label values are bounded, never taken from the raw request. Data points are looked up once and
 * cached, so counting costs an array read and an add.
 */
public final class HttpMetrics {
  public static final String ROUTE_UNMATCHED = "unmatched";
  public static final String ROUTE_REJECTED = "rejected";
  public static final String REASON_NOT_FOUND = "not_found";
  /** A TLS connection that failed before HTTP (not TLS, handshake failure or timeout). */
  public static final String REASON_BAD_TLS = "bad_tls";

  private static final List<HttpMethod> METHODS = List.of(HttpMethod.GET, HttpMethod.HEAD,
      HttpMethod.POST, HttpMethod.OPTIONS, HttpMethod.PUT, HttpMethod.DELETE, HttpMethod.PATCH);
  private static final String OTHER_METHOD = "other";
  private static final String[] STATUS_CLASSES = {"1xx", "2xx", "3xx", "4xx", "5xx"};
  private static final int SLOTS_PER_ROUTE = (METHODS.size() + 1) * STATUS_CLASSES.length;

  private final Counter requests;
  private final Counter errors;
  private final Gauge connections;
  private final ConcurrentHashMap<String, AtomicReferenceArray<CounterDataPoint>> requestPoints =
      new ConcurrentHashMap<>();
  private final ConcurrentHashMap<String, CounterDataPoint> errorPoints =
      new ConcurrentHashMap<>();

  public HttpMetrics(final PrometheusRegistry registry) {
    this.requests = Counter.builder()
        .name("relay_http_requests_total")
        .help("HTTP requests answered, by route, method and status class")
        .labelNames("route", "method", "status_class")
        .withoutExemplars()
        .register(registry);
    this.errors = Counter.builder()
        .name("relay_http_request_errors_total")
        .help("HTTP error answers by reason (the JSON error code, or not_found)")
        .labelNames("reason")
        .withoutExemplars()
        .register(registry);
    this.connections = Gauge.builder()
        .name("relay_http_connections_active")
        .help("Open HTTP connections")
        .withoutExemplars()
        .register(registry);
    // Present from the first scrape, so rate() works before the first error.
    for (final String reason : List.of(ErrorCodes.HEADERS_TOO_LARGE, ErrorCodes.PAYLOAD_TOO_LARGE,
        ErrorCodes.BAD_REQUEST, ErrorCodes.METHOD_NOT_ALLOWED, ErrorCodes.INTERNAL_ERROR,
        REASON_NOT_FOUND)) {
      errorPoints.put(reason, errors.labelValues(reason));
    }
  }

  /** Counts one answered request. */
  public void requestCompleted(final String route, final HttpMethod method, final int status) {
    final int methodIndex = methodIndex(method);
    final int statusIndex = Math.min(Math.max(status / 100, 1), 5) - 1;
    final AtomicReferenceArray<CounterDataPoint> slots = requestPoints.computeIfAbsent(
        route, r -> new AtomicReferenceArray<>(SLOTS_PER_ROUTE));
    final int slot = methodIndex * STATUS_CLASSES.length + statusIndex;
    CounterDataPoint point = slots.get(slot);
    if (point == null) {
      // Racing threads get the same data point from the registry; either write is fine.
      point = requests.labelValues(route,
          methodIndex < METHODS.size() ? METHODS.get(methodIndex).name() : OTHER_METHOD,
          STATUS_CLASSES[statusIndex]);
      slots.set(slot, point);
    }
    point.inc();
  }

  /** Counts one error answer; {@code reason} is a JSON error code or {@link #REASON_NOT_FOUND}. */
  public void error(final String reason) {
    errorPoints.computeIfAbsent(reason, errors::labelValues).inc();
  }

  void connectionOpened() {
    connections.inc();
  }

  void connectionClosed() {
    connections.dec();
  }

  private static int methodIndex(final HttpMethod method) {
    for (int i = 0; i < METHODS.size(); i++) {
      if (METHODS.get(i).equals(method)) {
        return i;
      }
    }
    return METHODS.size();
  }
}
