package io.relaypinner.relay.sync;

import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.core.metrics.Histogram;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.util.function.IntSupplier;

/**
 * The sync engine's Prometheus metrics (spec 4.3: relay counters named {@code <db>_sync_…}):
 * {@code orbitdb_sync_total{result}} ({@code success}, {@code failure}, {@code cancelled}),
 * {@code orbitdb_sync_duration_seconds}, {@code orbitdb_sync_queue_waiting},
 * {@code orbitdb_sync_queue_active}, {@code orbitdb_sync_timed_out_total} and
 * {@code orbitdb_sync_cooldown_topics}.
 */
final class SyncMetrics {
  static final String SUCCESS = "success";
  static final String FAILURE = "failure";
  static final String CANCELLED = "cancelled";

  private final Counter syncs;
  private final Histogram duration;
  private final Counter timedOut;
  private final Counter resumed;

  SyncMetrics(final PrometheusRegistry registry, final IntSupplier waiting,
      final IntSupplier active, final IntSupplier cooldown) {
    this.syncs = Counter.builder()
        .name("orbitdb_sync_total")
        .help("Finished database syncs by result: success, failure, cancelled (shutdown)")
        .labelNames("result")
        .register(registry);
    this.duration = Histogram.builder()
        .name("orbitdb_sync_duration_seconds")
        .help("Duration of finished database syncs")
        .classicOnly()
        .classicUpperBounds(0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300)
        .register(registry);
    this.timedOut = Counter.builder()
        .name("orbitdb_sync_timed_out_total")
        .help("Syncs that exceeded RELAY_PINNING_SYNC_TIMEOUT_MS (their slot was reclaimed)")
        .register(registry);
    this.resumed = Counter.builder()
        .name("orbitdb_sync_resumed_total")
        .help("Failed syncs queued again after their cooldown (then with doubling delays)")
        .register(registry);
    GaugeWithCallback.builder()
        .name("orbitdb_sync_queue_waiting")
        .help("Database syncs queued for a slot")
        .callback(callback -> callback.call(waiting.getAsInt()))
        .register(registry);
    GaugeWithCallback.builder()
        .name("orbitdb_sync_queue_active")
        .help("Database syncs running in a slot")
        .callback(callback -> callback.call(active.getAsInt()))
        .register(registry);
    GaugeWithCallback.builder()
        .name("orbitdb_sync_cooldown_topics")
        .help("Databases held back after a timed-out or failed sync")
        .callback(callback -> callback.call(cooldown.getAsInt()))
        .register(registry);
    for (final String result : new String[] {SUCCESS, FAILURE, CANCELLED}) {
      syncs.labelValues(result);
    }
  }

  void finished(final String result, final long millis) {
    syncs.labelValues(result).inc();
    duration.observe(millis / 1000.0);
  }

  void timedOut() {
    timedOut.inc();
  }

  void resumed() {
    resumed.inc();
  }
}
