package io.relaypinner.relay.export;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.relaypinner.common.budget.Limits;
import io.relaypinner.common.budget.Resource;
import io.relaypinner.common.budget.Scope;
import io.relaypinner.ipfs.blockstore.Blocks;
import io.relaypinner.ipfs.blockstore.Blockstore;
import io.relaypinner.ipfs.blockstore.MemoryBlockstore;
import io.relaypinner.ipfs.car.CarReader;
import io.relaypinner.ipfs.car.CarWriter;
import io.relaypinner.ipfs.datastore.Datastore;
import io.relaypinner.ipfs.datastore.MemoryDatastore;
import io.relaypinner.ipfs.pin.CodecLinkResolver;
import io.relaypinner.ipfs.pin.DagWalker;
import io.relaypinner.ipfs.pin.PinStore;
import io.relaypinner.ipfs.unixfs.UnixFsImporter;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.orbitdb.JavaWriter;
import io.relaypinner.orbitdb.OrbitDbAddress;
import io.relaypinner.orbitdb.identity.IdentityVerifiers;
import io.relaypinner.orbitdb.log.Entry;
import io.relaypinner.relay.gateway.CarPlanner;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The exporter reads a database's heads through the orbitdb module's log store: those a real
 * log stored (here: one an import joined), and none from a record it cannot read.
 */
class DatabaseExporterTest {
  @TempDir
  Path staging;
  private final MemoryBlockstore blockstore = new MemoryBlockstore();
  private final MemoryDatastore datastore = new MemoryDatastore();
  private final DatabaseExporter exporter = new DatabaseExporter(blockstore, datastore,
      CodecLinkResolver.standard(), payload -> Set.of(), CarPlanner.Limits.DEFAULT);
  private OrbitDbAddress address;
  private List<Entry> chain;

  @BeforeEach
  void importADatabase() throws Exception {
    final MemoryBlockstore writerStore = new MemoryBlockstore();
    final JavaWriter writer = new JavaWriter();
    writerStore.put(writer.identityCid(), writer.identityBlock());
    address = JavaWriter.database(writerStore, "exported", List.of(writer.id()));
    chain = writer.chain(writerStore, address, 3);
    final ByteArrayOutputStream car = new ByteArrayOutputStream();
    try (CarWriter out = new CarWriter(car, List.of(address.manifest(), chain.get(2).cid()))) {
      final List<Cid> all = new ArrayList<>();
      writerStore.forEachKey(all::add);
      for (final Cid cid : all) {
        out.write(cid, writerStore.get(cid).orElseThrow());
      }
    }
    new DatabaseImporter(blockstore, datastore,
        new PinStore(datastore, blockstore, CodecLinkResolver.standard()),
        CodecLinkResolver.standard(), payload -> Set.of(), Runnable::run,
        CarReader.Limits.DEFAULT, Duration.ofSeconds(10), IdentityVerifiers.defaults(),
        followed -> Optional.empty(),
        new ImportStaging(staging, ExportRoutes.MAX_IMPORT_BYTES), address -> true).importCar(new ByteArrayInputStream(car.toByteArray()));
  }

  @Test
  void plan_shouldStartWithTheManifestAndTheLogsStoredHeads() {
    assertThat(exporter.heads(address)).containsExactly(chain.get(2).cid());

    final CarPlanner.Plan plan = exporter.plan(address, false);

    assertThat(plan.roots()).containsExactly(address.manifest(), chain.get(2).cid());
    assertThat(plan.blocks()).contains(chain.get(0).cid(), chain.get(1).cid(),
        chain.get(2).cid());
  }

  @Test
  void plan_shouldAnswerNotFollowed_whenTheHeadsRecordIsUnreadable() {
    // Whatever the layout names its heads record, a corrupt one is not a list of CIDs.
    for (final Datastore.Entry record : datastore.scan("/")) {
      if (record.key().endsWith("/heads")) {
        datastore.put(record.key(), new byte[] {(byte) 0xff, 0x00, 0x13});
      }
    }

    assertThat(exporter.heads(address)).isEmpty();
    assertThatThrownBy(() -> exporter.plan(address, false))
        .isInstanceOf(DatabaseExporter.UnknownDatabaseException.class)
        .hasMessageContaining("no readable heads");
  }

  /** The walk reserves what it holds from the gateway memory, and gives it all back. */
  @Test
  void plan_shouldReserveWhatItsWalkHolds_andStopWhenTheMemoryHasNoRoom() {
    final List<String> hits = new ArrayList<>();
    final Scope roomy = Scope.root("gateway", Limits.NONE.with(Resource.MEMORY, 1 << 20),
        (scope, resource) -> hits.add(scope.kind()));
    final DatabaseExporter budgeted = new DatabaseExporter(blockstore, datastore,
        CodecLinkResolver.standard(), payload -> Set.of(), CarPlanner.Limits.DEFAULT, roomy);
    assertThat(budgeted.plan(address, false).blocks()).hasSizeGreaterThan(3);
    assertThat(roomy.used(Resource.MEMORY)).isZero();

    // Room for two blocks' CIDs: the walk stops at the third, refused and counted.
    final Scope tight = Scope.root("gateway",
        Limits.NONE.with(Resource.MEMORY, 2L * CarPlanner.CID_HEAP_BYTES),
        (scope, resource) -> hits.add(scope.kind()));
    final DatabaseExporter starved = new DatabaseExporter(blockstore, datastore,
        CodecLinkResolver.standard(), payload -> Set.of(), CarPlanner.Limits.DEFAULT, tight);
    assertThatThrownBy(() -> starved.plan(address, false))
        .isInstanceOf(CarPlanner.MemoryRefusedException.class);
    assertThat(hits).containsExactly("gateway");
    assertThat(tight.used(Resource.MEMORY)).isZero();
  }

  /**
   * Issue 36: planning an export read every raw leaf of the media only to learn its size (a
   * whole S3 GET per leaf). Raw leaves (and identity blocks) are sized through the blockstore,
   * not read; the plan is the same.
   */
  @Test
  void plan_shouldSizeRawLeavesWithoutReadingThem() {
    final byte[] media = new byte[5 * 1024 + 17];
    new java.util.Random(36).nextBytes(media);
    final Cid file = new UnixFsImporter(blockstore, new UnixFsImporter.Options(1024, 174))
        .importBytes(media);
    final List<Cid> leaves = new DagWalker(blockstore, CodecLinkResolver.standard(), 100)
        .walk(List.of(file)).reached().stream().map(Blocks::rawCid)
        .filter(cid -> !cid.multihash().equals(file.multihash())).toList();
    assertThat(leaves).hasSize(6);
    final List<Cid> read = new ArrayList<>();
    final Blockstore counting = new Blockstore() {
      @Override
      public boolean has(final Cid cid) {
        return blockstore.has(cid);
      }

      @Override
      public Optional<byte[]> get(final Cid cid) {
        read.add(cid);
        return blockstore.get(cid);
      }

      @Override
      public Optional<Integer> size(final Cid cid) {
        return blockstore.size(cid);
      }

      @Override
      public void put(final Cid cid, final byte[] data) {
        throw new UnsupportedOperationException();
      }

      @Override
      public boolean delete(final Cid cid) {
        throw new UnsupportedOperationException();
      }

      @Override
      public void forEachKey(final java.util.function.Consumer<Cid> visitor) {
        blockstore.forEachKey(visitor);
      }
    };
    final DatabaseExporter withMedia = new DatabaseExporter(counting, datastore,
        CodecLinkResolver.standard(), payload -> Set.of(file), CarPlanner.Limits.DEFAULT);

    final CarPlanner.Plan plan = withMedia.plan(address, true);

    assertThat(plan.blocks()).contains(file).containsAll(leaves);
    assertThat(read).contains(file).doesNotContainAnyElementsOf(leaves);
    for (final Cid leaf : leaves) {
      assertThat(plan.sizes()[plan.blocks().indexOf(leaf)])
          .isEqualTo(blockstore.size(leaf).orElseThrow().longValue());
    }
    long length = CarWriter.headerLength(plan.roots());
    for (final Cid cid : plan.blocks()) {
      length += CarWriter.sectionLength(cid, blockstore.get(cid).orElseThrow().length);
    }
    assertThat(plan.length()).isEqualTo(length);
    assertThat(plan.complete()).isTrue();
  }
}
