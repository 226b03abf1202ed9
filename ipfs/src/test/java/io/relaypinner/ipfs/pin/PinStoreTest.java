package io.relaypinner.ipfs.pin;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.relaypinner.ipfs.blockstore.Blocks;
import io.relaypinner.ipfs.blockstore.Blockstore;
import io.relaypinner.ipfs.blockstore.FlatFsBlockstore;
import io.relaypinner.ipfs.blockstore.MemoryBlockstore;
import io.relaypinner.ipfs.datastore.MemoryDatastore;
import io.relaypinner.ipfs.datastore.MvStoreDatastore;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.multiformats.Multicodec;
import io.relaypinner.multiformats.Multihash;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PinStoreTest {
  private static final PinHolder HOLDER = PinHolder.of("test", "holder");
  private final MemoryBlockstore blocks = new MemoryBlockstore();
  private final MemoryDatastore datastore = new MemoryDatastore();
  private final PinStore pins = new PinStore(datastore, blocks, TestListCodec.resolver());
  private final TestDag dag = new TestDag();

  @TempDir
  Path dir;

  private List<Cid> keys(final Blockstore store) {
    final List<Cid> keys = new ArrayList<>();
    store.forEachKey(keys::add);
    return keys;
  }

  private static Cid raw(final Cid cid) {
    return Cid.v1(Multicodec.RAW, cid.multihash());
  }

  /** A store that keeps staged blocks apart until {@link #sync} and logs what happens. */
  private static final class StagingBlockstore implements Blockstore {
    final MemoryBlockstore durable = new MemoryBlockstore();
    /** Keyed by multihash, as stores are. */
    final java.util.Map<Multihash, Cid> staged = new java.util.concurrent.ConcurrentHashMap<>();
    final java.util.Map<Multihash, byte[]> bytes = new java.util.concurrent.ConcurrentHashMap<>();
    final List<String> log;

    StagingBlockstore(final List<String> log) {
      this.log = log;
    }

    @Override
    public boolean has(final Cid cid) {
      return staged.containsKey(cid.multihash()) || durable.has(cid);
    }

    @Override
    public java.util.Optional<byte[]> get(final Cid cid) {
      final byte[] data = staged.containsKey(cid.multihash()) ? bytes.get(cid.multihash()) : null;
      return data != null ? java.util.Optional.of(data) : durable.get(cid);
    }

    @Override
    public java.util.Optional<Integer> size(final Cid cid) {
      return get(cid).map(d -> d.length);
    }

    @Override
    public void put(final Cid cid, final byte[] data) {
      durable.put(cid, data);
    }

    @Override
    public void stage(final Cid cid, final byte[] data) {
      bytes.put(cid.multihash(), data);
      staged.put(cid.multihash(), cid);
    }

    @Override
    public void sync() {
      log.add("sync " + staged.size());
      staged.forEach((mh, cid) -> durable.put(cid, bytes.remove(mh)));
      staged.clear();
    }

    @Override
    public boolean delete(final Cid cid) {
      return staged.remove(cid.multihash()) != null | durable.delete(cid);
    }

    @Override
    public void forEachKey(final java.util.function.Consumer<Cid> visitor) {
      durable.forEachKey(visitor);
    }
  }

  @Test
  void pin_shouldRunTheBlockBarrier_beforeItRecordsThePin_durableOrDeferred() {
    final List<String> log = new ArrayList<>();
    final StagingBlockstore staging = new StagingBlockstore(log);
    final MemoryDatastore memory = new MemoryDatastore();
    final io.relaypinner.ipfs.datastore.Datastore recorded =
        new io.relaypinner.ipfs.datastore.Datastore() {
          @Override
          public java.util.Optional<byte[]> get(final String key) {
            return memory.get(key);
          }

          @Override
          public void put(final String key, final byte[] value) {
            log.add("put " + key + " with " + staging.staged.size() + " staged");
            memory.put(key, value);
          }

          @Override
          public boolean delete(final String key) {
            return memory.delete(key);
          }

          @Override
          public void writeDeferred(final java.util.Map<String, byte[]> puts,
              final java.util.Collection<String> deletes) {
            log.add("deferred " + puts.keySet() + " with " + staging.staged.size() + " staged");
            memory.write(puts, deletes);
          }

          @Override
          public List<Entry> scan(final String prefix) {
            return memory.scan(prefix);
          }

          @Override
          public void close() {
            memory.close();
          }
        };
    final PinStore store = new PinStore(recorded, staging, TestListCodec.resolver());
    final Cid root = dag.node("root", dag.leaf("a"), dag.leaf("b"));
    final MemoryBlockstore source = new MemoryBlockstore();
    dag.putAll(source);
    source.forEachKey(cid -> staging.stage(cid, source.get(cid).orElseThrow()));

    assertThat(store.pin(root, HOLDER)).isInstanceOf(PinResult.Pinned.class);
    final Cid other = dag.node("other", dag.leaf("c"));
    dag.putAll(source);
    staging.stage(dag.leaf("c"), source.get(dag.leaf("c")).orElseThrow());
    staging.stage(other, source.get(other).orElseThrow());
    assertThat(store.pinDeferred(other, HOLDER)).isInstanceOf(PinResult.Pinned.class);

    assertThat(log).containsExactly("sync 3",
        "put /pins/" + root + "/" + HOLDER.id() + " with 0 staged",
        "sync 2", "deferred [/pins/" + other + "/" + HOLDER.id() + "] with 0 staged");
    assertThat(store.isPinned(other)).isTrue();
  }

  @Test
  void pin_shouldRecordThePin_whenTheWholeDagIsPresent() {
    final Cid leaf = dag.leaf("leaf");
    final Cid mid = dag.node("mid", dag.leaf("a"), dag.leaf("b"));
    final Cid root = dag.node("root", mid, leaf);
    dag.putAll(blocks);

    final PinResult result = pins.pin(root, HOLDER);
    assertThat(result).isInstanceOfSatisfying(PinResult.Pinned.class, pinned -> {
      assertThat(pinned.root()).isEqualTo(root);
      assertThat(pinned.blocks()).isEqualTo(5);
    });
    assertThat(pins.isPinned(root)).isTrue();
    assertThat(pins.isPinned(mid)).isFalse();
    assertThat(pins.list()).containsExactly(root);
    assertThat(datastore.scan(PinStore.PREFIX)).extracting(e -> e.key())
        .containsExactly("/pins/" + root + "/" + HOLDER.id());
    // Pinning again re-checks and succeeds; still one pin.
    assertThat(pins.pin(root, HOLDER)).isInstanceOf(PinResult.Pinned.class);
    assertThat(pins.list()).containsExactly(root);
    // A second holder of the same root: still one root counted.
    assertThat(pins.pin(mid, HOLDER)).isInstanceOf(PinResult.Pinned.class);
    assertThat(pins.pin(root, PinHolder.of("test", "other")))
        .isInstanceOf(PinResult.Pinned.class);
    assertThat(pins.count()).isEqualTo(2);
  }

  @Test
  void pin_shouldReportMissingBlocks_andRecordNothing_whenTheDagIsIncomplete() {
    final Cid absent = dag.leaf("absent");
    final Cid root = dag.node("root", dag.leaf("present"), absent);
    dag.putAll(blocks, absent);

    assertThat(pins.pin(root, HOLDER)).isEqualTo(new PinResult.Incomplete(root, List.of(absent)));
    assertThat(pins.isPinned(root)).isFalse();
    assertThat(pins.list()).isEmpty();

    final Cid absentRoot = dag.leaf("not stored");
    assertThat(pins.pin(absentRoot, HOLDER))
        .isEqualTo(new PinResult.Incomplete(absentRoot, List.of(absentRoot)));
  }

  @Test
  void listener_shouldHearEachHold_andOnlyTheLastRelease() {
    final Cid root = dag.node("root", dag.leaf("x"));
    dag.putAll(blocks);
    final List<String> heard = new ArrayList<>();
    pins.listen(new PinStore.Listener() {
      @Override
      public void pinned(final Cid pinned) {
        heard.add("pinned " + pinned);
      }

      @Override
      public void unpinned(final Cid unpinned) {
        heard.add("unpinned " + unpinned);
      }
    });
    final PinHolder other = PinHolder.of("test", "other");

    pins.pin(root, HOLDER);
    assertThat(pins.holdIfPinned(root, other, true)).isTrue();
    pins.release(root, HOLDER);
    assertThat(heard).containsExactly("pinned " + root.canonical(), "pinned " + root.canonical());
    pins.release(root, other);
    pins.release(root, other);

    assertThat(heard).hasSize(3).endsWith("unpinned " + root.canonical());
  }

  @Test
  void release_shouldRemoveOnlyTheHold() {
    final Cid root = dag.node("root", dag.leaf("x"));
    dag.putAll(blocks);
    pins.pin(root, HOLDER);
    assertThat(pins.release(root, HOLDER)).isTrue();
    assertThat(pins.release(root, HOLDER)).isFalse();
    assertThat(pins.isPinned(root)).isFalse();
    assertThat(blocks.has(root)).isTrue();
  }

  @Test
  void gc_shouldRemoveUnpinnedBlocks_andKeepEveryPinnedBlock() {
    final Cid shared = dag.leaf("shared");
    final Cid pinnedRoot = dag.node("pinned", shared, dag.node("inner", dag.leaf("deep")));
    final Cid looseRoot = dag.node("loose", shared, dag.leaf("only loose"));
    final Cid stray = dag.leaf("stray");
    dag.putAll(blocks);
    assertThat(pins.pin(pinnedRoot, HOLDER)).isInstanceOf(PinResult.Pinned.class);

    final GcResult result = pins.gc();
    assertThat(result.pins()).isEqualTo(1);
    assertThat(result.marked()).isEqualTo(4);
    assertThat(result.scanned()).isEqualTo(7);
    assertThat(result.removed()).isEqualTo(3);
    assertThat(result.pinnedMissing()).isEmpty();
    assertThat(blocks.has(looseRoot)).isFalse();
    assertThat(blocks.has(stray)).isFalse();
    assertThat(blocks.has(shared)).isTrue();
    assertThat(new DagWalker(blocks, TestListCodec.resolver(), 100).walk(List.of(pinnedRoot))
        .complete()).isTrue();
    assertThat(pins.gcRemoved()).isEqualTo(3);
    assertThat(pins.gcRuns()).isEqualTo(1);

    assertThat(pins.release(pinnedRoot, HOLDER)).isTrue();
    assertThat(pins.gc().removed()).isEqualTo(4);
    assertThat(blocks.count()).isZero();
    assertThat(pins.gcRemoved()).isEqualTo(7);
  }

  /**
   * Issue 36: GC marks in bounded memory. A store far larger than the heap bound (the frontier
   * lowered to 8 CIDs, the sets on disk): wide DAGs spill their frontier to the scratch file,
   * and still every pinned block survives, the garbage goes, and the scratch file is there
   * during the sweep and gone after it.
   */
  @Test
  void gc_shouldKeepTheLiveSetAndRemoveGarbage_whenItsSetsSpillToDisk() {
    final Path scratchDir = dir.resolve("gc");
    final PinStore bounded = new PinStore(datastore, blocks, TestListCodec.resolver(),
        PinStore.DEFAULT_MAX_PIN_BLOCKS, PinStore.DEFAULT_MAX_MARK_BLOCKS,
        GcScratch.onDisk(scratchDir, 8));
    final List<Cid> live = new ArrayList<>();
    final List<Cid> roots = new ArrayList<>();
    final Cid shared = dag.leaf("shared");
    for (int r = 0; r < 30; r++) {
      final Cid[] children = new Cid[40];
      for (int c = 0; c < children.length; c++) {
        final Cid leaf = dag.leaf("live " + r + "/" + c);
        children[c] = c == 0 ? shared : dag.node("mid " + r + "/" + c, leaf);
      }
      roots.add(dag.node("root " + r, children));
    }
    final List<Cid> garbage = new ArrayList<>();
    for (int g = 0; g < 1_500; g++) {
      garbage.add(dag.leaf("garbage " + g));
    }
    garbage.add(dag.node("garbage root", dag.leaf("garbage child")));
    dag.putAll(blocks);
    for (final Cid root : roots) {
      assertThat(bounded.pin(root, HOLDER)).isInstanceOf(PinResult.Pinned.class);
    }
    live.addAll(new DagWalker(blocks, TestListCodec.resolver(), 100_000).walk(roots).reached()
        .stream().map(Blocks::rawCid).toList());
    final long stored = blocks.count();

    final AtomicBoolean fileDuringSweep = new AtomicBoolean();
    final GcResult result = bounded.gc(multihash -> {
      fileDuringSweep.compareAndSet(false,
          java.nio.file.Files.exists(scratchDir.resolve("gc-mark.scratch")));
      return true;
    });

    assertThat(fileDuringSweep).isTrue();
    assertThat(scratchDir.resolve("gc-mark.scratch")).doesNotExist();
    assertThat(result.pins()).isEqualTo(30);
    assertThat(result.marked()).isEqualTo(live.size());
    assertThat(result.scanned()).isEqualTo(stored);
    assertThat(result.removed()).isEqualTo(stored - live.size());
    assertThat(live).allMatch(blocks::has);
    assertThat(garbage).noneMatch(blocks::has);
    assertThat(blocks.count()).isEqualTo(live.size());
  }

  /** A scratch file a crash left behind is not trusted: GC starts from an empty one. */
  @Test
  void gc_shouldIgnoreAScratchFileLeftByACrash() throws Exception {
    final Path scratchDir = dir.resolve("gc");
    java.nio.file.Files.createDirectories(scratchDir);
    java.nio.file.Files.write(scratchDir.resolve("gc-mark.scratch"), new byte[] {1, 2, 3});
    final Cid root = dag.node("root", dag.leaf("a"));
    final Cid stray = dag.leaf("stray");
    dag.putAll(blocks);
    final PinStore bounded = new PinStore(datastore, blocks, TestListCodec.resolver(),
        PinStore.DEFAULT_MAX_PIN_BLOCKS, PinStore.DEFAULT_MAX_MARK_BLOCKS,
        GcScratch.onDisk(scratchDir, 1));
    bounded.pin(root, HOLDER);

    assertThat(bounded.gc().removed()).isEqualTo(1);
    assertThat(blocks.has(root)).isTrue();
    assertThat(blocks.has(stray)).isFalse();
  }

  @Test
  void gc_shouldDeleteNothing_whenTheMarkCannotComplete() {
    final Cid root = dag.node("root", dag.leaf("a"), dag.leaf("b"));
    final Cid stray = dag.leaf("stray");
    dag.putAll(blocks);
    pins.pin(root, HOLDER);

    final PinStore tight = new PinStore(datastore, blocks, TestListCodec.resolver(), 10, 2);
    assertThatThrownBy(tight::gc).isInstanceOf(DagLimitExceededException.class);
    final PinStore blind = new PinStore(datastore, blocks, CodecLinkResolver.standard());
    assertThatThrownBy(blind::gc).isInstanceOf(LinkResolutionException.class);
    assertThat(blocks.has(stray)).isTrue();
    assertThat(blocks.count()).isEqualTo(4);
  }

  /**
   * Issue 36: roots held for a while (a gateway response streaming a cached DAG) are marked like
   * pins, best effort: what is present of them stays, a missing block is not reported, and one
   * whose links cannot be read, or a mark past its limit, keeps less instead of failing the run.
   */
  @Test
  void gc_shouldKeepWhatIsHeldOfHeldDags_bestEffort_withoutFailingOrReporting() {
    final Cid lost = dag.leaf("lost");
    final Cid held = dag.node("held", lost, dag.node("inner", dag.leaf("deep")));
    final Cid stray = dag.leaf("stray");
    dag.putAll(blocks);
    blocks.delete(lost);

    final GcResult result = pins.gc(multihash -> true, () -> List.of(held), Runnable::run);
    assertThat(result.removed()).isEqualTo(1);
    assertThat(result.pinnedMissing()).isEmpty();
    assertThat(blocks.has(stray)).isFalse();
    assertThat(blocks.count()).isEqualTo(3);

    // Links a standard resolver cannot read: the root stays, the run does not fail.
    final PinStore blind = new PinStore(datastore, blocks, CodecLinkResolver.standard());
    assertThat(blind.gc(multihash -> true, () -> List.of(held), Runnable::run).removed())
        .isEqualTo(2);
    assertThat(blocks.has(held)).isTrue();
    // Past the mark's limit: the rest is not kept, nothing fails.
    dag.putAll(blocks);
    final PinStore tight = new PinStore(datastore, blocks, TestListCodec.resolver(), 10, 2);
    assertThat(tight.gc(multihash -> true, () -> List.of(held), Runnable::run).removed())
        .isPositive();
    // Released: an ordinary unpinned DAG.
    assertThat(pins.gc(multihash -> true, List::of, Runnable::run).removed()).isPositive();
    assertThat(blocks.count()).isZero();
  }

  @Test
  void pin_shouldRefuse_whenTheDagExceedsMaxPinBlocks() {
    final Cid root = dag.node("root", dag.leaf("a"), dag.leaf("b"), dag.leaf("c"));
    dag.putAll(blocks);
    final PinStore small = new PinStore(datastore, blocks, TestListCodec.resolver(), 3, 100);
    assertThatThrownBy(() -> small.pin(root, HOLDER)).isInstanceOf(DagLimitExceededException.class);
    assertThat(small.isPinned(root)).isFalse();
  }

  @Test
  void gc_shouldKeepWhatIsLeft_andReportMissing_whenAPinnedBlockWasLost() {
    final Cid lost = dag.leaf("lost");
    final Cid root = dag.node("root", lost, dag.leaf("kept"));
    dag.putAll(blocks);
    pins.pin(root, HOLDER);
    blocks.delete(lost);

    final GcResult result = pins.gc();
    assertThat(result.pinnedMissing()).containsExactly(lost);
    assertThat(result.removed()).isZero();
    assertThat(blocks.count()).isEqualTo(2);
  }

  @Test
  void list_shouldKeepCidVersionsAndCodecs() {
    final byte[] data = "v0".getBytes(StandardCharsets.UTF_8);
    final Cid rawRoot = Cid.v1(Multicodec.RAW, Multihash.sha2_256(data));
    blocks.put(rawRoot, data);
    assertThat(pins.pin(rawRoot, HOLDER)).isInstanceOf(PinResult.Pinned.class);
    assertThat(pins.list()).containsExactly(rawRoot);
    assertThat(pins.isPinned(Cid.v1(Multicodec.DAG_PB, rawRoot.multihash()))).isFalse();
  }

  @Test
  void pins_shouldSurviveReopen_andProtectTheirBlocksFromGc() {
    final Path blockDir = dir.resolve("blocks");
    final Path dataFile = dir.resolve("datastore.mv.db");
    final Cid root = dag.node("root", dag.node("mid", dag.leaf("a")), dag.leaf("b"));
    final Cid stray = dag.leaf("stray");
    try (FlatFsBlockstore store = new FlatFsBlockstore(blockDir);
        MvStoreDatastore state = new MvStoreDatastore(dataFile)) {
      dag.putAll(store);
      assertThat(new PinStore(state, store, TestListCodec.resolver()).pin(root, HOLDER))
          .isInstanceOf(PinResult.Pinned.class);
    }
    try (FlatFsBlockstore store = new FlatFsBlockstore(blockDir);
        MvStoreDatastore state = new MvStoreDatastore(dataFile)) {
      final PinStore reopened = new PinStore(state, store, TestListCodec.resolver());
      assertThat(reopened.list()).containsExactly(root);
      assertThat(reopened.isPinned(root)).isTrue();
      assertThat(reopened.gc().removed()).isEqualTo(1);
      assertThat(store.has(stray)).isFalse();
      assertThat(keys(store)).hasSize(4).contains(raw(root));
      assertThat(store.blockCount()).isEqualTo(4);
    }
  }

  @Test
  void gc_shouldNeverRemoveAPinnedBlock_whilePinsAreAddedConcurrently() throws Exception {
    final int writers = 4;
    final int dagsPerWriter = 30;
    final AtomicBoolean done = new AtomicBoolean();
    final ExecutorService pool = Executors.newFixedThreadPool(writers + 1);
    final List<Cid> pinned = new ArrayList<>();
    try {
      final Future<Integer> collector = pool.submit(() -> {
        int runs = 0;
        while (!done.get()) {
          pins.gc();
          runs++;
        }
        return runs;
      });
      final List<Future<List<Cid>>> work = new ArrayList<>();
      for (int w = 0; w < writers; w++) {
        final int writer = w;
        work.add(pool.submit(() -> pinDags(writer, dagsPerWriter)));
      }
      for (final Future<List<Cid>> future : work) {
        pinned.addAll(future.get(120, TimeUnit.SECONDS));
      }
      done.set(true);
      assertThat(collector.get(60, TimeUnit.SECONDS)).isPositive();
    } finally {
      done.set(true);
      pool.shutdownNow();
    }
    assertThat(pinned).hasSize(writers * dagsPerWriter);
    pins.gc();
    final DagWalker.Result all = new DagWalker(blocks, TestListCodec.resolver(), 10_000)
        .walk(pinned);
    assertThat(all.missing()).isEmpty();
    assertThat(blocks.count()).isEqualTo(all.reached().size());
  }

  /** Builds and pins DAGs, putting blocks again whenever a GC took them before the pin. */
  private List<Cid> pinDags(final int writer, final int count) {
    final List<Cid> roots = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      final TestDag own = new TestDag();
      final Cid root = own.node("w" + writer + "-" + i,
          own.node("mid", own.leaf("w" + writer + "-" + i + "-a"), own.leaf("common")),
          own.leaf("w" + writer + "-" + i + "-b"));
      PinResult result;
      do {
        own.putAll(blocks);
        result = pins.pin(root, HOLDER);
      } while (result instanceof PinResult.Incomplete);
      roots.add(root);
    }
    return roots;
  }
}
