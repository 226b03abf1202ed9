package io.relaypinner.relay.node;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.relaypinner.ipfs.blockstore.MemoryBlockstore;
import io.relaypinner.ipfs.datastore.MemoryDatastore;
import io.relaypinner.ipfs.datastore.MvStoreDatastore;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.multiformats.Multicodec;
import io.relaypinner.multiformats.Multihash;
import io.relaypinner.relay.config.StorageLimits;
import io.relaypinner.relay.storage.StorageGc;
import io.relaypinner.relay.testing.TestPins;
import io.relaypinner.testkit.MutableClock;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link StorageSubsystem} alone, on memory stores (once on an MVStore) and a {@link
 * MutableClock}.
 */
class StorageSubsystemTest {
  private final MutableClock clock = NodeFixtures.clock();
  private final PrometheusRegistry registry = new PrometheusRegistry();

  @Test
  void storage_shouldExposeItsParts_andEndItsThreads_whenClosed() throws Exception {
    final MemoryBlockstore blocks = new MemoryBlockstore();
    final MemoryDatastore data = new MemoryDatastore();
    final StorageSubsystem storage = new StorageSubsystem(blocks, data,
        StorageLimits.DEFAULT, "peer", registry, clock,
        NodeTuning.DEFAULT, null);
    assertThat(storage.blockstore()).isSameAs(blocks);
    assertThat(storage.datastore()).isSameAs(data);
    final byte[] bytes = "hello".getBytes(StandardCharsets.UTF_8);
    final Cid cid = Cid.v1(Multicodec.RAW, Multihash.sha2_256(bytes));
    storage.blockstore().put(cid, bytes);
    storage.pins().pin(cid, TestPins.HOLDER);
    assertThat(storage.pins().isPinned(cid)).isTrue();
    // Embedded stores: this relay coordinates with nobody and always collects.
    assertThat(storage.coordination().gcPolicy().mayCollect()).isTrue();
    assertThat(storage.blockstoreAvailability()).isEmpty();
    assertThat(storage.datastoreAvailability()).isEmpty();
    // No byte count on a memory store: no quota, nothing refused.
    assertThat(storage.quotaBytes()).isEmpty();
    assertThat(storage.quota().admit("pin", () -> CompletableFuture.completedFuture("done")))
        .isCompletedWithValue("done");
    assertThat(storage.blockFile(cid)).isEmpty();
    assertThat(storage.gc().runOnce()).isEqualTo(StorageGc.Outcome.DONE);
    assertThat(registry.scrape().stream().map(s -> s.getMetadata().getPrometheusName()))
        .contains("relay_storage_max_bytes");
    final Thread worker = NodeFixtures.threadOf(storage.executor());

    storage.close();

    assertThat(storage.executor().isTerminated()).isTrue();
    worker.join(5_000);
    assertThat(worker.isAlive()).isFalse();
    assertThatThrownBy(storage::blockstore).isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(storage::gc).isInstanceOf(IllegalStateException.class);
    storage.close();
  }

  @Test
  void embeddedDatastore_shouldExposeItsMaintenanceMetrics_andCloseCleanly(
      @TempDir final Path dir) {
    final MvStoreDatastore data = new MvStoreDatastore(dir.resolve("datastore.mv"));
    final StorageSubsystem storage = new StorageSubsystem(new MemoryBlockstore(), data,
        StorageLimits.DEFAULT, "peer", registry, clock, NodeTuning.DEFAULT, null);
    data.put("/k", new byte[] {1});
    // Nothing sparse yet: a run rewrites nothing.
    assertThat(data.maintain().rewrote()).isFalse();
    assertThat(registry.scrape().stream().map(s -> s.getMetadata().getPrometheusName()))
        .contains("relay_storage_datastore_maintenance_runs", "relay_storage_datastore_file_bytes");
    assertThat(data.fileBytes()).isPositive();

    storage.close();

    assertThat(data.fileBytes()).isZero();
    assertThat(data.maintain().rewrote()).isFalse();
  }
}
