package io.relaypinner.relay.pinsvc;

import io.prometheus.metrics.core.metrics.CounterWithCallback;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.util.List;

/**
 * {@code relay_pinning_service_requests{status}}: Pinning Service API requests held, by status
 * (queued, pinning, pinned, failed), read from the engine at scrape time; and
 * {@code relay_pinning_service_events_total{event}}: adds refused over a token's quota
 * ({@code quota}), requests removed or replaced, each releasing its own hold ({@code released}),
 * of those the CIDs something else still holds ({@code still_held}: replication of a database,
 * an import, another request), and pins that finished after their request was removed and were
 * released then ({@code released_after_removal}).
 */
public final class PinningServiceMetrics {
  private static final List<String> STATUSES = List.of(PinStatusRecord.QUEUED,
      PinStatusRecord.PINNING, PinStatusRecord.PINNED, PinStatusRecord.FAILED);

  private PinningServiceMetrics() {}

  /** Registers the gauge of {@code engine} on {@code registry}. */
  public static void register(final PrometheusRegistry registry,
      final PinningServiceEngine engine) {
    GaugeWithCallback.builder()
        .name("relay_pinning_service_requests")
        .help("Pinning Service API requests held, by status")
        .labelNames("status")
        .callback(callback -> {
          final java.util.Map<String, Integer> counts = engine.statusCounts();
          for (final String status : STATUSES) {
            callback.call(counts.getOrDefault(status, 0), status);
          }
        })
        .register(registry);
    CounterWithCallback.builder()
        .name("relay_pinning_service_events_total")
        .help("Pinning Service API quota refusals and releases of request holds, by event")
        .labelNames("event")
        .callback(callback -> engine.counters().forEach((event, count) ->
            callback.call(count, event)))
        .register(registry);
  }
}
