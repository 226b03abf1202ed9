package io.relaypinner.relay.storage;

import io.prometheus.metrics.core.metrics.CounterWithCallback;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.relaypinner.ipfs.blockstore.Blockstore;
import io.relaypinner.ipfs.datastore.Datastore;
import io.relaypinner.stores.PostgresDatastore;
import io.relaypinner.stores.S3Blockstore;

/** Metrics of the shared stores, when the relay uses them (nothing is registered otherwise). */
public final class StoreMetrics {
  private StoreMetrics() {}

  /** Registers {@code relay_store_failures_total} and the S3 write counters. */
  public static void register(final PrometheusRegistry registry, final Blockstore blocks,
      final Datastore data) {
    final S3Blockstore s3 = blocks instanceof S3Blockstore b ? b : null;
    final PostgresDatastore postgres = data instanceof PostgresDatastore d ? d : null;
    if (s3 == null && postgres == null) {
      return;
    }
    CounterWithCallback.builder()
        .name("relay_store_failures_total")
        .help("Calls to a shared store that failed with it unavailable (after retries), by store")
        .labelNames("store")
        .callback(callback -> {
          if (s3 != null) {
            callback.call(s3.failures(), "s3");
          }
          if (postgres != null) {
            callback.call(postgres.failures(), "postgres");
          }
        })
        .register(registry);
    GaugeWithCallback.builder()
        .name("relay_store_up")
        .help("1 while a shared store answers, 0 from a call that found it unavailable until "
            + "one that succeeds, by store")
        .labelNames("store")
        .callback(callback -> {
          if (s3 != null) {
            callback.call(s3.availability().up() ? 1 : 0, "s3");
          }
          if (postgres != null) {
            callback.call(postgres.availability().up() ? 1 : 0, "postgres");
          }
        })
        .register(registry);
    CounterWithCallback.builder()
        .name("relay_store_outages_total")
        .help("Outages of a shared store (a failed call after a successful one), by store")
        .labelNames("store")
        .callback(callback -> {
          if (s3 != null) {
            callback.call(s3.availability().outages(), "s3");
          }
          if (postgres != null) {
            callback.call(postgres.availability().outages(), "postgres");
          }
        })
        .register(registry);
    if (s3 != null) {
      CounterWithCallback.builder()
          .name("relay_s3_blocks_written_total")
          .help("Blocks uploaded to the S3 bucket by this relay (puts of present blocks excluded)")
          .callback(callback -> callback.call(s3.blocksWritten()))
          .register(registry);
      CounterWithCallback.builder()
          .name("relay_s3_puts_rejected_total")
          .help("Block puts refused because the bytes did not match the CID")
          .callback(callback -> callback.call(s3.putsRejected()))
          .register(registry);
    }
  }
}
