package io.relaypinner.relay.storage;

import io.prometheus.metrics.core.metrics.CounterWithCallback;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.model.registry.PrometheusRegistry;

/** Metrics of the quota, the gateway cache and garbage collection (docs/operators.md). */
public final class StorageMetrics {
  private StorageMetrics() {}

  /** Registers the {@code relay_storage_*}, {@code relay_gateway_cache_*} and {@code relay_gc_*} families. */
  public static void register(final PrometheusRegistry registry, final StorageGc gc) {
    final StorageQuota quota = gc.quota();
    final GatewayCache cache = gc.cache();
    GaugeWithCallback.builder()
        .name("relay_storage_used_bytes")
        .help("Block bytes stored (pinned, cached and not yet collected)")
        .callback(callback -> callback.call(quota.usedBytes()))
        .register(registry);
    GaugeWithCallback.builder()
        .name("relay_storage_max_bytes")
        .help("The storage quota RELAY_STORAGE_MAX_BYTES (0: none)")
        .callback(callback -> callback.call(quota.maxBytes()))
        .register(registry);
    CounterWithCallback.builder()
        .name("relay_storage_refused_total")
        .help("Writes of new blocks refused because the storage quota was reached, by what"
            + " asked (pin, gateway, replication, import)")
        .labelNames("what")
        .callback(callback -> quota.refused(e -> callback.call(e.getValue(), e.getKey())))
        .register(registry);
    GaugeWithCallback.builder()
        .name("relay_gateway_cache_bytes")
        .help("Bytes of unpinned blocks the /ipfs/ network fallback keeps cached")
        .callback(callback -> callback.call(cache.bytes()))
        .register(registry);
    GaugeWithCallback.builder()
        .name("relay_gateway_cache_max_bytes")
        .help("The gateway cache budget RELAY_GATEWAY_CACHE_MAX_BYTES")
        .callback(callback -> callback.call(cache.maxBytes()))
        .register(registry);
    CounterWithCallback.builder()
        .name("relay_gateway_cache_evictions_total")
        .help("Blocks evicted from the gateway cache (least recently used first)")
        .callback(callback -> callback.call(cache.evictions()))
        .register(registry);
    CounterWithCallback.builder()
        .name("relay_gc_runs_total")
        .help("Garbage collection runs, by outcome (done, skipped by the GC policy, failed)")
        .labelNames("outcome")
        .callback(callback -> {
          callback.call(gc.runs(), "done");
          callback.call(gc.skipped(), "skipped");
          callback.call(gc.failed(), "failed");
        })
        .register(registry);
    CounterWithCallback.builder()
        .name("relay_gc_removed_blocks_total")
        .help("Unpinned blocks deleted by garbage collection")
        .callback(callback -> callback.call(gc.removedBlocks()))
        .register(registry);
    CounterWithCallback.builder()
        .name("relay_gc_freed_bytes_total")
        .help("Bytes freed by garbage collection")
        .callback(callback -> callback.call(gc.freedBytes()))
        .register(registry);
  }
}
