package io.relaypinner.relay.storage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.relaypinner.ipfs.blockstore.Blockstore;
import io.relaypinner.ipfs.blockstore.MemoryBlockstore;
import io.relaypinner.ipfs.blockstore.StorageFullException;
import io.relaypinner.ipfs.dagpb.DagPb;
import io.relaypinner.ipfs.dagpb.PbLink;
import io.relaypinner.ipfs.dagpb.PbNode;
import io.relaypinner.ipfs.datastore.MemoryDatastore;
import io.relaypinner.ipfs.pin.CodecLinkResolver;
import io.relaypinner.ipfs.pin.PinHolder;
import io.relaypinner.ipfs.pin.PinStore;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.multiformats.Multicodec;
import io.relaypinner.multiformats.Multihash;
import io.relaypinner.orbitdb.BlockFetcher;
import io.relaypinner.orbitdb.OrbitDbAddress;
import io.relaypinner.relay.testing.MutableClock;
import io.relaypinner.relay.testing.TestPins;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** {@link StorageGc}, {@link GatewayCache} and {@link StorageQuota} on a memory store and a {@link MutableClock}. */
class StorageGcTest {
  private static final Duration GRACE = Duration.ofMinutes(15);

  @org.junit.jupiter.api.io.TempDir
  java.nio.file.Path tempDir;

  private final MutableClock clock = new MutableClock(Instant.parse("2026-11-24T10:00:00Z"));
  private final MemoryBlockstore blocks = new MemoryBlockstore();
  private final PinStore pins =
      new PinStore(new MemoryDatastore(), blocks, CodecLinkResolver.standard());
  private final AtomicLong used = new AtomicLong();
  private final AtomicInteger pressure = new AtomicInteger();
  private final Random random = new Random(7);

  private StorageQuota quota(final long max) {
    return new StorageQuota(max, () -> bytesStored(), pressure::incrementAndGet);
  }

  private long bytesStored() {
    final AtomicLong total = new AtomicLong(used.get());
    blocks.forEachKey(cid -> total.addAndGet(blocks.size(cid).orElse(0)));
    return total.get();
  }

  private StorageGc gc(final GatewayCache cache, final StorageQuota quota, final GcPolicy policy) {
    return new StorageGc(pins, cache, quota, clock, GRACE, policy);
  }

  private Cid raw(final Blockstore store, final int size) {
    final byte[] data = new byte[size];
    random.nextBytes(data);
    final Cid cid = Cid.v1(Multicodec.RAW, Multihash.sha2_256(data));
    store.put(cid, data);
    return cid;
  }

  /** A dag-pb node over {@code children}. */
  private Cid node(final Blockstore store, final List<Cid> children) {
    final List<PbLink> links = new ArrayList<>();
    for (final Cid child : children) {
      links.add(PbLink.of(child, "", 1));
    }
    final byte[] block = DagPb.encode(PbNode.of(new byte[0], links));
    final Cid cid = DagPb.cidOf(block);
    store.put(cid, block);
    return cid;
  }

  private Map<Multihash, Integer> sizes(final Cid... cids) {
    final Map<Multihash, Integer> out = new HashMap<>();
    for (final Cid cid : cids) {
      out.put(cid.multihash(), blocks.size(cid).orElseThrow());
    }
    return out;
  }

  @Test
  void pinnedBlocks_areNeverRemoved_unpinnedOnesGoAfterTheGracePeriod() {
    final Cid leaf = raw(blocks, 1000);
    final Cid root = node(blocks, List.of(leaf));
    assertThat(pins.pin(root, TestPins.HOLDER))
        .isInstanceOf(io.relaypinner.ipfs.pin.PinResult.Pinned.class);
    final Cid loose = raw(blocks, 500);
    final StorageGc gc = gc(new GatewayCache(1 << 20), quota(0), GcPolicy.ALWAYS);

    assertThat(gc.runOnce()).isEqualTo(StorageGc.Outcome.DONE);
    assertThat(blocks.has(loose)).as("first seen now: in its grace period").isTrue();
    clock.advance(GRACE.minusSeconds(1));
    gc.runOnce();
    assertThat(blocks.has(loose)).isTrue();
    clock.advance(Duration.ofSeconds(1));
    gc.runOnce();
    assertThat(blocks.has(loose)).isFalse();
    assertThat(blocks.has(root)).isTrue();
    assertThat(blocks.has(leaf)).isTrue();
    assertThat(gc.removedBlocks()).isEqualTo(1);
  }

  @Test
  void aReleasedHold_freesBlocksOnlyWhenNothingElseHoldsThem_thenAfterTheGrace() {
    final PinHolder database = PinHolders.replication(new OrbitDbAddress(Cid.v1(
        Multicodec.DAG_CBOR, Multihash.sha2_256("db".getBytes(StandardCharsets.UTF_8)))));
    final PinHolder request = PinHolders.request("owner", "request");
    final Cid media = node(blocks, List.of(raw(blocks, 1000)));
    final Cid alone = node(blocks, List.of(raw(blocks, 700)));
    // The request pins both (the media in another spelling), a replicated database the media.
    pins.pin(Cid.parse(media.toV1().toString().toUpperCase(java.util.Locale.ROOT)), request);
    pins.pin(alone, request);
    assertThat(pins.holdIfPinned(media, database, false)).isTrue();
    final StorageGc gc = gc(new GatewayCache(1 << 20), quota(0), GcPolicy.ALWAYS);

    // The tenant deletes its request: only its own holds go.
    assertThat(pins.release(media, request)).isTrue();
    assertThat(pins.release(alone, request)).isTrue();
    gc.runOnce();
    clock.advance(GRACE);
    gc.runOnce();

    assertThat(pins.isPinned(media)).isTrue();
    assertThat(blocks.has(media)).isTrue();
    assertThat(blocks.count()).as("the media DAG stays, the other goes").isEqualTo(2);
    assertThat(blocks.has(alone)).isFalse();
    assertThat(gc.removedBlocks()).isEqualTo(2);
  }

  @Test
  void aPinInProgress_keepsItsBlocks_throughAnyNumberOfRunsWithinTheGrace() {
    final StorageGc gc = gc(new GatewayCache(1 << 20), quota(0), GcPolicy.ALWAYS);
    // A network pin writes its DAG block by block; GC runs in between; then the pin lands.
    final List<Cid> written = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      written.add(raw(blocks, 300));
      gc.runOnce();
      clock.advance(Duration.ofMinutes(2));
    }
    final Cid root = node(blocks, written);
    gc.runOnce();
    assertThat(pins.pin(root, TestPins.HOLDER))
        .isInstanceOf(io.relaypinner.ipfs.pin.PinResult.Pinned.class);
    clock.advance(GRACE.multipliedBy(3));
    gc.runOnce();
    for (final Cid cid : written) {
      assertThat(blocks.has(cid)).isTrue();
    }
    assertThat(blocks.count()).isEqualTo(6);
  }

  @Test
  void cachedBlocks_stay_evictedOnesGoAtOnce_unlessAPinReachesThem() {
    final GatewayCache cache = new GatewayCache(2_500);
    final StorageGc gc = gc(cache, quota(0), GcPolicy.ALWAYS);
    final Cid a = raw(blocks, 1000);
    final Cid b = raw(blocks, 1000);
    final Cid c = raw(blocks, 1000);
    cache.admit(sizes(a));
    cache.admit(sizes(b));
    // a is fetched through the gateway and then pinned by a media pin.
    final Cid pinnedRoot = node(blocks, List.of(a));
    pins.pin(pinnedRoot, TestPins.HOLDER);
    clock.advance(GRACE.multipliedBy(2));
    gc.runOnce();
    assertThat(blocks.has(a)).isTrue();
    assertThat(blocks.has(b)).isTrue();

    cache.admit(sizes(b));   // b is used again: a is now the least recently used
    assertThat(cache.admit(sizes(c))).as("over budget: evicts").isTrue();
    assertThat(cache.holds(a.multihash())).isFalse();
    assertThat(cache.bytes()).isLessThanOrEqualTo(2_500);
    gc.runOnce();
    assertThat(blocks.has(a)).as("evicted but pinned").isTrue();
    assertThat(blocks.has(b)).isTrue();
    assertThat(blocks.has(c)).isTrue();

    cache.admit(sizes(raw(blocks, 1000)));   // evicts b
    gc.runOnce();
    assertThat(blocks.has(b)).as("evicted, unpinned: deleted without waiting").isFalse();
    assertThat(cache.evictions()).isEqualTo(2);
  }

  @Test
  void aHeldBlock_staysWhenEvicted_untilItsLastHoldIsReleased_thenGoesAfterTheGrace() {
    // Issue 36: the root of a DAG the gateway fetches, cached on its own before, evicted by
    // other requests' admissions while the fetch runs.
    final GatewayCache cache = new GatewayCache(1_500);
    final StorageGc gc = gc(cache, quota(0), GcPolicy.ALWAYS);
    final Cid root = raw(blocks, 1000);
    cache.admit(sizes(root));
    cache.hold(root.multihash());
    cache.hold(root.multihash());   // two fetches rely on it
    assertThat(cache.admit(sizes(raw(blocks, 1000)))).as("evicts the root").isTrue();
    assertThat(cache.bytes()).isLessThanOrEqualTo(1_500);
    gc.runOnce();
    assertThat(blocks.has(root)).as("evicted, held by a fetch in progress").isTrue();
    cache.release(root.multihash());
    clock.advance(GRACE.multipliedBy(2));
    gc.runOnce();
    assertThat(blocks.has(root)).as("one hold left").isTrue();

    cache.release(root.multihash());
    assertThat(cache.holds(root.multihash())).isFalse();
    gc.runOnce();
    assertThat(blocks.has(root)).as("unpinned, uncached: seen for the first time").isTrue();
    clock.advance(GRACE);
    gc.runOnce();
    assertThat(blocks.has(root)).isFalse();
    cache.release(root.multihash());   // one release too many: nothing happens
    assertThat(cache.holds(root.multihash())).isFalse();
  }

  @Test
  void thePolicy_canSkipRuns_andNothingIsDeleted() {
    final AtomicBoolean leader = new AtomicBoolean(false);
    final StorageGc gc = gc(new GatewayCache(1 << 20), quota(0), leader::get);
    final Cid loose = raw(blocks, 100);
    assertThat(gc.runOnce()).isEqualTo(StorageGc.Outcome.SKIPPED);
    clock.advance(GRACE.multipliedBy(2));
    assertThat(gc.runOnce()).isEqualTo(StorageGc.Outcome.SKIPPED);
    assertThat(blocks.has(loose)).isTrue();
    leader.set(true);
    gc.runOnce();
    clock.advance(GRACE);
    gc.runOnce();
    assertThat(blocks.has(loose)).isFalse();
    assertThat(gc.skipped()).isEqualTo(2);
    assertThat(gc.runs()).isEqualTo(2);
  }

  @Test
  void theQuota_refusesNewBlocks_countsThem_andNeverTouchesWhatIsStored() {
    final StorageQuota quota = quota(3_000);
    final Blockstore guarded = quota.guard(blocks, "pin");
    final Cid first = raw(guarded, 1_500);
    final Cid root = node(guarded, List.of(first));
    pins.pin(root, TestPins.HOLDER);
    final byte[] big = new byte[2_000];
    random.nextBytes(big);
    final Cid bigCid = Cid.v1(Multicodec.RAW, Multihash.sha2_256(big));
    assertThatThrownBy(() -> guarded.put(bigCid, big)).isInstanceOf(StorageFullException.class)
        .hasMessageContaining("3000");
    assertThat(blocks.has(bigCid)).isFalse();
    assertThat(quota.refusedCount("pin")).isEqualTo(1);
    assertThat(pressure.get()).isPositive();
    // A block held already is no new content: its put passes, as do reads.
    guarded.put(first, blocks.get(first).orElseThrow());
    assertThat(guarded.get(root)).isPresent();
    assertThat(blocks.has(first)).isTrue();
    assertThat(pins.isPinned(root)).isTrue();
  }

  @Test
  void admit_shouldRefuseNewContentWithoutStartingIt_andCountWhatAsked_whenTheQuotaIsReached() {
    final StorageQuota quota = quota(3_000);
    final AtomicInteger started = new AtomicInteger();
    final BlockFetcher fetcher = quota.guard(cid -> {
      started.incrementAndGet();
      return CompletableFuture.completedFuture(new byte[] {1});
    }, "replication");
    final Cid cid = Cid.v1(Multicodec.RAW, Multihash.sha2_256(new byte[] {1}));
    assertThat(fetcher.fetch(cid)).isCompleted();
    assertThat(quota.admit("pin", () -> CompletableFuture.completedFuture("pinned")))
        .isCompletedWithValue("pinned");

    used.set(3_000);
    assertThat(fetcher.fetch(cid)).failsWithin(Duration.ZERO)
        .withThrowableOfType(ExecutionException.class)
        .withCauseInstanceOf(StorageFullException.class);
    assertThat(started.get()).isEqualTo(1);
    assertThat(quota.admit("import", () -> CompletableFuture.completedFuture("imported"),
        e -> CompletableFuture.completedFuture("507"))).isCompletedWithValue("507");
    assertThat(quota.refusedCount("replication")).isEqualTo(1);
    assertThat(quota.refusedCount("import")).isEqualTo(1);
    assertThat(quota.refusedCount("pin")).isZero();
  }

  @Test
  void underPressure_gcShrinksTheCache_andFreesRoom_butKeepsPinnedData() {
    final StorageQuota quota = quota(10_000);
    final GatewayCache cache = new GatewayCache(8_000);
    final StorageGc gc = gc(cache, quota, GcPolicy.ALWAYS);
    final Cid pinned = raw(blocks, 3_500);
    pins.pin(pinned, TestPins.HOLDER);
    final Cid cached1 = raw(blocks, 3_000);
    final Cid cached2 = raw(blocks, 3_000);
    cache.admit(sizes(cached1));
    cache.admit(sizes(cached2));
    assertThat(quota.underPressure()).isTrue();
    final Blockstore guarded = quota.guard(blocks, "pin");
    final byte[] more = new byte[1_500];
    random.nextBytes(more);
    final Cid moreCid = Cid.v1(Multicodec.RAW, Multihash.sha2_256(more));
    assertThatThrownBy(() -> guarded.put(moreCid, more)).isInstanceOf(StorageFullException.class);

    gc.runOnce();
    assertThat(quota.underPressure()).isFalse();
    assertThat(blocks.has(pinned)).isTrue();
    assertThat(blocks.has(cached1)).as("least recently used goes first").isFalse();
    assertThat(blocks.has(cached2)).isTrue();
    guarded.put(moreCid, more);
    assertThat(blocks.has(moreCid)).isTrue();
  }

  @Test
  void requestRun_mergesRequests_whileOneIsQueued() {
    final StorageGc gc = gc(new GatewayCache(1 << 20), quota(0), GcPolicy.ALWAYS);
    final List<Runnable> queued = new ArrayList<>();
    gc.executeOn(queued::add);
    gc.requestRun();
    gc.requestRun();
    gc.requestRun();
    assertThat(queued).hasSize(1);
    queued.get(0).run();
    gc.requestRun();
    assertThat(queued).hasSize(2);
    assertThat(gc.runs()).isEqualTo(1);
  }

  @Test
  void theCache_isBoundedInBlocksToo() {
    final GatewayCache cache = new GatewayCache(1 << 30, 3);
    for (int i = 0; i < 10; i++) {
      cache.admit(sizes(raw(blocks, 10)));
    }
    assertThat(cache.blockCount()).isEqualTo(3);
    assertThat(cache.drainEvicted()).hasSize(3);
    assertThat(cache.drainEvicted()).isEmpty();
    assertThat(cache.evictions()).isEqualTo(7);
  }
  @Test
  void entriesListedByAReplicatedLog_areKept_whileTheyWaitForTheirMediaPin() {
    final MemoryDatastore datastore = new MemoryDatastore();
    final Cid waiting = raw(blocks, 200);
    final Cid oldStyle = raw(blocks, 200);
    final Cid loose = raw(blocks, 200);
    datastore.put("/orbitdb/logs/zdpuManifest/batches/" + waiting,
        io.relaypinner.ipfs.dagcbor.DagCbor.encode(io.relaypinner.ipfs.dagcbor.DagCborValue.list(
            List.of(io.relaypinner.ipfs.dagcbor.DagCborValue.of(waiting.toString())))));
    datastore.put("/orbitdb/logs/zdpuManifest/entries/" + oldStyle, new byte[0]);
    datastore.put("/orbitdb/logs/zdpuManifest/batches/garbage", new byte[] {1, 2, 3});
    // Today's layout: a marker per verified entry, also under a relay's scope (shared stores).
    final Cid marked = raw(blocks, 200);
    final Cid markedByAnotherRelay = raw(blocks, 200);
    datastore.put("/orbitdb/logs/zdpuManifest/e/" + marked, new byte[0]);
    datastore.put("/orbitdb/logs/zdpuManifest/r/12D3KooWRelay2/e/" + markedByAnotherRelay,
        new byte[0]);
    final StorageGc gc = new StorageGc(pins, new GatewayCache(1 << 20), quota(0), clock, GRACE,
        GcPolicy.ALWAYS, new LogMembers(datastore));
    gc.runOnce();
    clock.advance(GRACE.multipliedBy(2));
    gc.runOnce();
    assertThat(blocks.has(waiting)).isTrue();
    assertThat(blocks.has(oldStyle)).isTrue();
    assertThat(blocks.has(marked)).isTrue();
    assertThat(blocks.has(markedByAnotherRelay)).isTrue();
    assertThat(blocks.has(loose)).isFalse();
  }
  /**
   * Issue 36: GC in bounded memory. The pins' mark and this GC's sightings and kept set live in
   * scratch files (the heap frontier lowered to 4 CIDs, far below the store's 2,000 blocks): the
   * live set (pinned DAGs, a log's waiting entry) survives, garbage goes after its grace
   * period, sightings carry from run to run through the file, and a crash (a new GC on the same
   * directory, the old one never closed) only starts the grace over: nothing is deleted early.
   */
  @Test
  void onDiskScratch_keepsTheLiveSet_removesGarbageAfterTheGrace_andACrashOnlyDelaysIt() {
    final java.nio.file.Path scratchDir = tempDir.resolve("gc");
    final io.relaypinner.ipfs.pin.GcScratch scratch =
        io.relaypinner.ipfs.pin.GcScratch.onDisk(scratchDir, 4);
    final PinStore bounded = new PinStore(new MemoryDatastore(), blocks,
        CodecLinkResolver.standard(), PinStore.DEFAULT_MAX_PIN_BLOCKS,
        PinStore.DEFAULT_MAX_MARK_BLOCKS, scratch);
    final List<Cid> live = new ArrayList<>();
    for (int r = 0; r < 20; r++) {
      final List<Cid> leaves = new ArrayList<>();
      for (int l = 0; l < 50; l++) {
        leaves.add(raw(blocks, 64));
      }
      final Cid root = node(blocks, leaves);
      assertThat(bounded.pin(root, TestPins.HOLDER))
          .isInstanceOf(io.relaypinner.ipfs.pin.PinResult.Pinned.class);
      live.add(root);
      live.addAll(leaves);
    }
    final Cid waiting = raw(blocks, 64);
    final MemoryDatastore logs = new MemoryDatastore();
    logs.put("/orbitdb/logs/zdpuManifest/e/" + waiting, new byte[0]);
    final List<Cid> garbage = new ArrayList<>();
    for (int g = 0; g < 1_000; g++) {
      garbage.add(raw(blocks, 64));
    }
    final StorageGc gc = new StorageGc(bounded, new GatewayCache(1 << 20), quota(0), clock,
        GRACE, GcPolicy.ALWAYS, new LogMembers(logs), scratch);

    gc.runOnce();
    assertThat(scratchDir.resolve("gc-sightings.scratch")).exists();
    assertThat(garbage).allMatch(blocks::has);
    clock.advance(GRACE.minusSeconds(1));
    // A crash: a new GC on the same directory; the sightings file is not trusted.
    final StorageGc restarted = new StorageGc(bounded, new GatewayCache(1 << 20), quota(0),
        clock, GRACE, GcPolicy.ALWAYS, new LogMembers(logs), scratch);
    restarted.runOnce();
    clock.advance(Duration.ofSeconds(1));
    restarted.runOnce();
    assertThat(garbage).as("first seen again after the crash: in their grace").allMatch(
        blocks::has);
    clock.advance(GRACE);
    restarted.runOnce();

    assertThat(garbage).noneMatch(blocks::has);
    assertThat(live).allMatch(blocks::has);
    assertThat(blocks.has(waiting)).isTrue();
    assertThat(blocks.count()).isEqualTo(live.size() + 1);
    assertThat(restarted.removedBlocks()).isEqualTo(garbage.size());
    restarted.close();
    assertThat(scratchDir.resolve("gc-sightings.scratch")).doesNotExist();
  }

  @Test
  void pressureRequests_areSpacedOnTheClock() {
    final StorageGc gc = gc(new GatewayCache(1 << 20), quota(0), GcPolicy.ALWAYS);
    final List<Runnable> queued = new ArrayList<>();
    gc.executeOn(task -> {
      queued.add(task);
      task.run();
    });
    gc.requestRunUnderPressure();
    gc.requestRunUnderPressure();
    assertThat(queued).hasSize(1);
    clock.advance(StorageGc.PRESSURE_GAP);
    gc.requestRunUnderPressure();
    assertThat(queued).hasSize(2);
    gc.requestRun();   // an eviction is not pressure: no spacing
    assertThat(queued).hasSize(3);
  }

  /** A policy for stores shared with other relays, whose answer the test sets. */
  private static GcPolicy shared(final AtomicBoolean leader) {
    return new GcPolicy() {
      @Override
      public boolean mayCollect() {
        return leader.get();
      }

      @Override
      public boolean sharedStores() {
        return true;
      }
    };
  }

  @Test
  void sharedStores_deleteNothingOnAFirstSighting_notEvenWhatTheCacheEvicted() {
    final GatewayCache cache = new GatewayCache(1_500);
    final StorageGc gc = gc(cache, quota(0), shared(new AtomicBoolean(true)));
    final Cid old = raw(blocks, 1000);
    final Cid evicted = raw(blocks, 1000);
    cache.admit(sizes(evicted));
    cache.admit(sizes(raw(blocks, 1000)));   // evicts it
    // Another relay may be writing these right now (its pin lock is not ours): a first sighting
    // deletes nothing, whatever the time since the block was written.
    clock.advance(GRACE.multipliedBy(3));
    gc.runOnce();
    assertThat(blocks.has(old)).isTrue();
    assertThat(blocks.has(evicted)).as("evicted, but shared: a second look first").isTrue();
    clock.advance(GRACE.minusSeconds(1));
    gc.runOnce();
    assertThat(blocks.has(old)).isTrue();
    clock.advance(Duration.ofSeconds(1));
    gc.runOnce();
    assertThat(blocks.has(old)).isFalse();
    assertThat(blocks.has(evicted)).isFalse();
  }

  @Test
  void sharedStores_aLeaderThatLosesTheLeaseStopsDeleting_andStartsOverWhenItRegainsIt() {
    // How many more times the policy answers yes (the lease as this relay holds it).
    final AtomicInteger yes = new AtomicInteger(Integer.MAX_VALUE);
    final StorageGc gc = gc(new GatewayCache(1 << 20), quota(0), new GcPolicy() {
      @Override
      public boolean mayCollect() {
        return yes.getAndUpdate(n -> Math.max(0, n - 1)) > 0;
      }

      @Override
      public boolean sharedStores() {
        return true;
      }
    });
    final Cid a = raw(blocks, 100);
    final Cid b = raw(blocks, 100);
    gc.runOnce();
    clock.advance(GRACE);
    // The lease is lost after the run started: it is asked again before the first delete.
    yes.set(1);
    assertThat(gc.runOnce()).isEqualTo(StorageGc.Outcome.DONE);
    assertThat(blocks.has(a)).isTrue();
    assertThat(blocks.has(b)).isTrue();

    // Not the leader for a while; meanwhile the blocks may have been deleted and written anew.
    assertThat(gc.runOnce()).isEqualTo(StorageGc.Outcome.SKIPPED);
    yes.set(Integer.MAX_VALUE);
    clock.advance(GRACE);
    gc.runOnce();
    assertThat(blocks.has(a)).as("regained: its sightings start over").isTrue();
    clock.advance(GRACE);
    gc.runOnce();
    assertThat(blocks.has(a)).isFalse();
    assertThat(blocks.has(b)).isFalse();
  }

  @Test
  void sharedStores_eachPageOfDeletesRunsUnderThePolicy_andAStaleFenceEndsTheRun() {
    // The GC leader's pages run under its lease's fence: here the first page passes, the second
    // finds the lease taken over (as PostgreSQL's StaleFenceException would).
    final AtomicInteger pages = new AtomicInteger();
    final StorageGc gc = gc(new GatewayCache(1 << 20), quota(0), new GcPolicy() {
      @Override
      public boolean mayCollect() {
        return true;
      }

      @Override
      public boolean sharedStores() {
        return true;
      }

      @Override
      public void aroundDeletes(final Runnable page) {
        if (pages.incrementAndGet() > 1) {
          throw new IllegalStateException("stale fence");
        }
        page.run();
      }
    });
    final int count = 2 * PinStore.DELETE_PAGE + 1;
    for (int i = 0; i < count; i++) {
      raw(blocks, 10);
    }
    gc.runOnce();
    clock.advance(GRACE);
    assertThat(gc.runOnce()).isEqualTo(StorageGc.Outcome.FAILED);
    assertThat(pages).hasValue(2);
    assertThat(gc.removedBlocks()).isZero();
    final AtomicInteger left = new AtomicInteger();
    blocks.forEachKey(cid -> left.incrementAndGet());
    assertThat(left).hasValue(count - PinStore.DELETE_PAGE);
  }
}
