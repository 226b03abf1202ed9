package io.relaypinner.relay.export;

import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.Gauge;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.util.function.LongSupplier;

/**
 * {@code POST /pinning/import}'s metrics: {@code relay_imports_total{outcome}} (every answer,
 * each refusal by its bound), {@code relay_import_slots_used}, {@code relay_import_staged_bytes}
 * (bytes on disk in the staging area now) and {@code relay_import_held_bytes} (the memory the
 * last import held for its CAR's blocks at most: the index and one block).
 */
public final class ImportMetrics {
  /** Outcomes, the label values of {@code relay_imports_total}. */
  public static final String IMPORTED = "imported";
  public static final String INVALID = "invalid";
  public static final String DENIED = "denied";
  public static final String TOO_LARGE = "too_large";
  public static final String TIMEOUT = "timeout";
  public static final String BUSY = "busy";
  public static final String CLIENT_BUSY = "client_busy";
  public static final String FAILED = "failed";

  private final Counter imports;
  private final Gauge held;

  public ImportMetrics(final PrometheusRegistry registry, final LongSupplier slotsUsed,
      final LongSupplier stagedBytes) {
    imports = Counter.builder()
        .name("relay_imports_total")
        .help("POST /pinning/import answers by outcome: imported, invalid (400), denied (403, "
            + "RELAY_ORBITDB_ALLOW/DENY), too_large (413), timeout (408, RELAY_IMPORT_TIMEOUT_MS),"
            + " busy (503, every slot taken), client_busy (503, the client's one slot taken), "
            + "failed")
        .labelNames("outcome")
        .register(registry);
    for (final String outcome : new String[] {IMPORTED, INVALID, DENIED, TOO_LARGE, TIMEOUT,
        BUSY, CLIENT_BUSY, FAILED}) {
      imports.labelValues(outcome);
    }
    GaugeWithCallback.builder()
        .name("relay_import_slots_used")
        .help("Imports running now (RELAY_IMPORT_SLOTS at most)")
        .callback(callback -> callback.call(slotsUsed.getAsLong()))
        .register(registry);
    GaugeWithCallback.builder()
        .name("relay_import_staged_bytes")
        .help("Bytes of import bodies staged on disk now (<DATASTORE_PATH>/import-staging)")
        .callback(callback -> callback.call(stagedBytes.getAsLong()))
        .register(registry);
    held = Gauge.builder()
        .name("relay_import_held_bytes")
        .help("Memory the last import held for its CAR's blocks at most (index and one block)")
        .register(registry);
  }

  void outcome(final String outcome) {
    imports.labelValues(outcome).inc();
  }

  void held(final long bytes) {
    held.set(bytes);
  }
}
