package io.relaypinner.relay.storage;

import io.prometheus.metrics.core.metrics.CounterWithCallback;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.relaypinner.ipfs.blockstore.Blockstore;
import io.relaypinner.ipfs.blockstore.FlatFsBlockstore;
import io.relaypinner.ipfs.datastore.Datastore;
import io.relaypinner.ipfs.datastore.MvStoreDatastore;

/**
 * What the embedded stores' durability costs (docs/operators.md, "What is durable when" in
 * docs/hardening.md): fsyncs by store, the block store's barriers and the datastore's durable
 * writes (more writes than fsyncs: group commits shared them). Nothing is registered for the
 * shared stores (S3, PostgreSQL), whose durability is the servers'.
 */
public final class DurabilityMetrics {
  private DurabilityMetrics() {}

  /** Registers {@code relay_storage_fsyncs_total} and the barrier and write counters. */
  public static void register(final PrometheusRegistry registry, final Blockstore blocks,
      final Datastore data) {
    final FlatFsBlockstore flat = blocks instanceof FlatFsBlockstore b ? b : null;
    final MvStoreDatastore mv = data instanceof MvStoreDatastore d ? d : null;
    if (flat == null && mv == null) {
      return;
    }
    CounterWithCallback.builder()
        .name("relay_storage_fsyncs_total")
        .help("fsyncs issued by the embedded stores, by store (blocks: block files and their"
            + " directories; datastore: the datastore file)")
        .labelNames("store")
        .callback(callback -> {
          if (flat != null) {
            callback.call(flat.fsyncs(), "blocks");
          }
          if (mv != null) {
            callback.call(mv.fsyncs(), "datastore");
          }
        })
        .register(registry);
    if (flat != null) {
      CounterWithCallback.builder()
          .name("relay_storage_block_barriers_total")
          .help("Group commits of staged blocks (one barrier makes every block staged before it"
              + " durable)")
          .callback(callback -> callback.call(flat.barriers()))
          .register(registry);
    }
    if (mv != null) {
      CounterWithCallback.builder()
          .name("relay_storage_datastore_durable_writes_total")
          .help("Durable datastore writes (puts, deletes, batches); above the datastore's fsyncs"
              + " when concurrent writes shared a commit")
          .callback(callback -> callback.call(mv.durableWrites()))
          .register(registry);
      CounterWithCallback.builder()
          .name("relay_storage_datastore_maintenance_runs_total")
          .help("Datastore maintenance runs that rewrote the live pages of sparse chunks (which"
              + " keeps the file and its chunk metadata bounded)")
          .callback(callback -> callback.call(mv.maintenanceRuns()))
          .register(registry);
      GaugeWithCallback.builder()
          .name("relay_storage_datastore_file_bytes")
          .help("Size of the embedded datastore's file")
          .callback(callback -> callback.call(mv.fileBytes()))
          .register(registry);
    }
  }
}
