package io.relaypinner.orbitdb.log;

import static org.assertj.core.api.Assertions.assertThat;

import io.relaypinner.ipfs.blockstore.Blockstore;
import io.relaypinner.ipfs.blockstore.MemoryBlockstore;
import io.relaypinner.ipfs.blockstore.StoreUnavailableException;
import io.relaypinner.ipfs.dagcbor.DagCborValue;
import io.relaypinner.ipfs.datastore.Datastore;
import io.relaypinner.ipfs.datastore.Fence;
import io.relaypinner.ipfs.datastore.MemoryDatastore;
import io.relaypinner.ipfs.datastore.StaleFenceException;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.orbitdb.BlockFetcher;
import io.relaypinner.orbitdb.BlockstoreFetcher;
import io.relaypinner.orbitdb.JavaWriter;
import io.relaypinner.orbitdb.JsDump;
import io.relaypinner.orbitdb.OrbitDbAddress;
import io.relaypinner.orbitdb.RejectReason;
import io.relaypinner.orbitdb.TestSupportAccess;
import io.relaypinner.orbitdb.identity.Identities;
import io.relaypinner.orbitdb.identity.IdentityVerifiers;
import io.relaypinner.testkit.MutableClock;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class OrbitDbLogTest {
  private final MemoryBlockstore remote = new MemoryBlockstore();
  private final MemoryBlockstore local = new MemoryBlockstore();
  private final MemoryDatastore datastore = new MemoryDatastore();
  private final Map<Cid, AtomicInteger> fetches = new ConcurrentHashMap<>();
  private final Set<Cid> withheld = ConcurrentHashMap.newKeySet();
  private final BlockFetcher fetcher = cid -> {
    fetches.computeIfAbsent(cid, k -> new AtomicInteger()).incrementAndGet();
    if (withheld.contains(cid)) {
      return CompletableFuture.failedFuture(new java.util.NoSuchElementException("withheld"));
    }
    return new BlockstoreFetcher(remote).fetch(cid);
  };

  private final MutableClock clock = new MutableClock(Instant.parse("2026-01-01T00:00:00Z"));

  private OrbitDbLog log(final OrbitDbAddress address, final LogConfig config) {
    return new OrbitDbLog(address, TestVerifiers.of(address, remote, local, fetcher, Runnable::run),
        local, fetcher, datastore, config, Runnable::run, clock);
  }

  private static JoinResult get(final CompletableFuture<JoinResult> f) throws Exception {
    return f.get(10, TimeUnit.SECONDS);
  }

  @ParameterizedTest
  @ValueSource(strings = {"stack-a", "stack-b", "stack-c"})
  void join_shouldAddEveryJsEntry_whenGivenTheJsHead(final String stack) throws Exception {
    final JsDump dump = JsDump.resource("orbitdb-vectors-" + stack + ".json");
    dump.copyTo(remote);
    for (final String name : List.of("events-pk", "documents-pk", "keyvalue-pk", "events-did")) {
      final JsDump.Db db = dump.db(name);
      final OrbitDbLog log = new OrbitDbLog(db.address(), new EntryVerifier(db.address(),
          TestSupportAccess.of(dump, db), new Identities(local, fetcher,
              IdentityVerifiers.defaults(), Runnable::run, 100), Runnable::run), local, fetcher,
          datastore, LogConfig.DEFAULT, Runnable::run);
      final JoinResult result = get(log.join(Cid.parse(db.heads().get(0))));
      assertThat(result.rejected()).isEmpty();
      assertThat(result.added()).hasSize(db.entries().size());
      assertThat(log.heads()).containsExactly(Cid.parse(db.heads().get(0)));
      final List<String> hashes = log.entries().stream().map(Entry::hash).toList();
      final List<String> jsHashes = new java.util.ArrayList<>();
      db.entries().forEach(e -> jsHashes.add(e.get("hash").asText()));
      assertThat(hashes).containsExactlyElementsOf(jsHashes);
    }
  }

  @Test
  void join_shouldFetchEachBlockOnce_whenRefsRevisitEntries() throws Exception {
    final JavaWriter writer = new JavaWriter();
    remote.put(writer.identityCid(), writer.identityBlock());
    final OrbitDbAddress address = JavaWriter.database(remote, "chain", List.of(writer.id()));
    final List<Entry> chain = writer.chain(remote, address, 40);
    final OrbitDbLog log = log(address, LogConfig.DEFAULT.withMaxConcurrentFetches(4));

    final JoinResult result = get(log.join(chain.get(39).cid()));

    assertThat(result.added()).hasSize(40);
    assertThat(result.truncated()).isFalse();
    assertThat(log.heads()).containsExactly(chain.get(39).cid());
    assertThat(fetches.values()).allMatch(n -> n.get() == 1);
    assertThat(fetches).hasSize(41); // 40 entries and one identity
    // Known entries are neither fetched nor verified again.
    fetches.clear();
    final JoinResult again = get(log.join(chain.get(39).cid()));
    assertThat(again.added()).isEmpty();
    assertThat(fetches).isEmpty();
    assertThat(log.entries()).containsExactlyElementsOf(chain);
  }

  @Test
  void join_shouldReadLocalBlocks_whenAlreadyInBlockstore() throws Exception {
    final JavaWriter writer = new JavaWriter();
    remote.put(writer.identityCid(), writer.identityBlock());
    final OrbitDbAddress address = JavaWriter.database(remote, "local", List.of(writer.id()));
    final List<Entry> chain = writer.chain(remote, address, 5);
    for (final Entry e : chain.subList(0, 3)) {
      local.put(e.cid(), e.block());
    }
    final OrbitDbLog log = log(address, LogConfig.DEFAULT);
    final JoinResult result = get(log.join(chain.get(4).cid()));
    assertThat(result.added()).hasSize(5);
    assertThat(fetches.keySet()).containsExactlyInAnyOrder(chain.get(4).cid(),
        chain.get(3).cid(), writer.identityCid());
  }

  @Test
  void join_shouldStopAndResume_whenEntryCapReached() throws Exception {
    final JavaWriter writer = new JavaWriter();
    remote.put(writer.identityCid(), writer.identityBlock());
    final OrbitDbAddress address = JavaWriter.database(remote, "capped", List.of(writer.id()));
    final List<Entry> chain = writer.chain(remote, address, 25);
    final OrbitDbLog log = log(address, LogConfig.DEFAULT.withMaxEntriesPerJoin(10)
        .withMaxConcurrentFetches(1));

    final JoinResult first = get(log.join(chain.get(24).cid()));
    assertThat(first.truncated()).isTrue();
    assertThat(first.added()).hasSize(10);
    assertThat(log.pending()).isNotEmpty();
    assertThat(get(log.resume()).added()).hasSize(10);
    final JoinResult last = get(log.resume());
    assertThat(last.added()).hasSize(5);
    assertThat(last.truncated()).isFalse();
    assertThat(log.pending()).isEmpty();
    assertThat(log.size()).isEqualTo(25);
    assertThat(log.heads()).containsExactly(chain.get(24).cid());
    assertThat(log.counters()).containsEntry("truncated", 2L);
  }

  @Test
  void join_shouldNotFollowLinks_whenBeyondMaxDepth() throws Exception {
    final JavaWriter writer = new JavaWriter();
    remote.put(writer.identityCid(), writer.identityBlock());
    final OrbitDbAddress address = JavaWriter.database(remote, "deep", List.of(writer.id()));
    final List<Entry> chain = writer.chain(remote, address, 20);
    final OrbitDbLog log = log(address, LogConfig.DEFAULT.withMaxDepth(3));
    final JoinResult result = get(log.join(chain.get(19).cid()));
    assertThat(result.truncated()).isTrue();
    // refs reach 16 back, so depth 3 covers more than 4 entries, but not all 20.
    assertThat(result.added().size()).isBetween(4, 19);
  }

  @Test
  void join_shouldRejectAndNotFollow_whenEntryIsByUnauthorizedWriter() throws Exception {
    final JavaWriter writer = new JavaWriter();
    final JavaWriter intruder = new JavaWriter();
    remote.put(writer.identityCid(), writer.identityBlock());
    remote.put(intruder.identityCid(), intruder.identityBlock());
    final OrbitDbAddress address = JavaWriter.database(remote, "guarded", List.of(writer.id()));
    final List<Entry> chain = writer.chain(remote, address, 3);
    final byte[] bad = intruder.entry(address, 4, List.of(chain.get(2).cid()), List.of(),
        DagCborValue.of("spam"));
    final OrbitDbLog log = log(address, LogConfig.DEFAULT);

    final JoinResult result = get(log.joinBlock(bad));

    assertThat(result.rejected()).containsExactly(Map.entry(RejectReason.UNAUTHORIZED_WRITER,
        1));
    assertThat(result.added()).isEmpty();
    assertThat(log.size()).isZero();
    assertThat(local.has(Entry.decode(bad).cid())).isFalse();
    assertThat(fetches).doesNotContainKey(chain.get(2).cid());
    assertThat(log.counters()).containsEntry("rejected.unauthorized_writer", 1L);
  }

  @Test
  void joinBlock_shouldCountMalformed_whenBytesAreGarbage() throws Exception {
    final JavaWriter writer = new JavaWriter();
    final OrbitDbAddress address = JavaWriter.database(remote, "g", List.of(writer.id()));
    final OrbitDbLog log = log(address, LogConfig.DEFAULT);
    final JoinResult result = get(log.joinBlock(new byte[] {(byte) 0xa1, 0x61, 0x78}));
    assertThat(result.rejected()).containsEntry(RejectReason.MALFORMED_ENTRY, 1);
  }

  @Test
  void join_shouldKeepTwoHeadsThenMerge_whenWritersBranch() throws Exception {
    final JavaWriter a = new JavaWriter();
    final JavaWriter b = new JavaWriter();
    remote.put(a.identityCid(), a.identityBlock());
    remote.put(b.identityCid(), b.identityBlock());
    final OrbitDbAddress address = JavaWriter.database(remote, "branches",
        List.of(a.id(), b.id()));
    final List<Entry> base = a.chain(remote, address, 2);
    final Entry left = put(a.entry(address, 3, List.of(base.get(1).cid()), List.of(),
        DagCborValue.of("left")));
    final Entry right = put(b.entry(address, 3, List.of(base.get(1).cid()), List.of(),
        DagCborValue.of("right")));
    final OrbitDbLog log = log(address, LogConfig.DEFAULT);

    get(log.join(left.cid()));
    get(log.joinBlock(right.block()));
    assertThat(log.heads()).containsExactlyInAnyOrder(left.cid(), right.cid());

    final Entry merge = put(a.entry(address, 4, List.of(left.cid(), right.cid()), List.of(),
        DagCborValue.of("merge")));
    final JoinResult result = get(log.joinBlock(merge.block()));
    assertThat(result.added()).containsExactly(merge);
    assertThat(log.heads()).containsExactly(merge.cid());
    assertThat(log.headBlocks()).hasSize(1);
  }

  @Test
  void join_shouldRetryUnavailableBlocks_whenTheyBecomeAvailable() throws Exception {
    final JavaWriter writer = new JavaWriter();
    remote.put(writer.identityCid(), writer.identityBlock());
    final OrbitDbAddress address = JavaWriter.database(remote, "flaky", List.of(writer.id()));
    final List<Entry> chain = writer.chain(remote, address, 3);
    withheld.add(chain.get(0).cid());
    final OrbitDbLog log = log(address, LogConfig.DEFAULT);

    final JoinResult first = get(log.join(chain.get(2).cid()));
    assertThat(first.added()).hasSize(2);
    assertThat(first.unavailable()).containsExactly(chain.get(0).cid());
    assertThat(log.pending()).containsExactly(chain.get(0).cid());

    withheld.clear();
    clock.advance(OrbitDbLog.RETRY_MIN);
    assertThat(get(log.resume()).added()).containsExactly(chain.get(0));
    assertThat(log.pending()).isEmpty();
  }

  @Test
  void join_shouldRetryLater_whenIdentityBlockUnavailable() throws Exception {
    final JavaWriter writer = new JavaWriter();
    remote.put(writer.identityCid(), writer.identityBlock());
    final OrbitDbAddress address = JavaWriter.database(remote, "no-id", List.of(writer.id()));
    final List<Entry> chain = writer.chain(remote, address, 2);
    withheld.add(writer.identityCid());
    final OrbitDbLog log = log(address, LogConfig.DEFAULT);

    final JoinResult first = get(log.joinBlock(chain.get(1).block()));
    assertThat(first.rejected()).isEmpty();
    assertThat(first.unavailable()).containsExactly(chain.get(1).cid());
    assertThat(log.size()).isZero();

    withheld.clear();
    clock.advance(OrbitDbLog.RETRY_MIN);
    assertThat(get(log.resume()).added()).containsExactlyInAnyOrderElementsOf(chain);
  }

  /**
   * A shared store that goes away during joins: an entry whose block cannot be stored is not
   * linked (never counted, never a head), it stays on the frontier and is stored and linked once
   * the blockstore is back; a join whose datastore write fails keeps the log incomplete until a
   * later join writes it (the markers of both joins together).
   */
  @Test
  void storeOutages_neverLinkWhatIsNotStored_andTheLogCompletesOnceTheStoresAreBack()
      throws Exception {
    final JavaWriter writer = new JavaWriter();
    remote.put(writer.identityCid(), writer.identityBlock());
    final OrbitDbAddress address = JavaWriter.database(remote, "outage", List.of(writer.id()));
    final List<Entry> chain = writer.chain(remote, address, 4);
    final java.util.concurrent.atomic.AtomicBoolean blocksDown =
        new java.util.concurrent.atomic.AtomicBoolean(true);
    final java.util.concurrent.atomic.AtomicBoolean dataDown =
        new java.util.concurrent.atomic.AtomicBoolean();
    final Blockstore blocks = new Blockstore() {
      private void check() {
        if (blocksDown.get()) {
          throw new StoreUnavailableException("s3", "down", null);
        }
      }

      @Override
      public boolean has(final Cid cid) {
        check();
        return local.has(cid);
      }

      @Override
      public java.util.Optional<byte[]> get(final Cid cid) {
        check();
        return local.get(cid);
      }

      @Override
      public java.util.Optional<Integer> size(final Cid cid) {
        check();
        return local.size(cid);
      }

      @Override
      public void put(final Cid cid, final byte[] data) {
        check();
        local.put(cid, data);
      }

      @Override
      public boolean delete(final Cid cid) {
        check();
        return local.delete(cid);
      }

      @Override
      public void forEachKey(final java.util.function.Consumer<Cid> visitor) {
        check();
        local.forEachKey(visitor);
      }
    };
    final Datastore data = new Datastore() {
      private void check() {
        if (dataDown.get()) {
          throw new StoreUnavailableException("postgres", "down", null);
        }
      }

      @Override
      public java.util.Optional<byte[]> get(final String key) {
        return datastore.get(key);
      }

      @Override
      public void put(final String key, final byte[] value) {
        check();
        datastore.put(key, value);
      }

      @Override
      public boolean delete(final String key) {
        check();
        return datastore.delete(key);
      }

      @Override
      public void write(final Map<String, byte[]> puts, final java.util.Collection<String> dels) {
        check();
        datastore.write(puts, dels);
      }

      @Override
      public List<Datastore.Entry> scan(final String prefix) {
        return datastore.scan(prefix);
      }

      @Override
      public void close() {
      }
    };
    final OrbitDbLog log = new OrbitDbLog(address,
        TestVerifiers.of(address, remote, local, fetcher, Runnable::run), blocks, fetcher, data,
        LogConfig.DEFAULT, Runnable::run, clock);

    // The blockstore is down: nothing is linked, the head waits on the frontier.
    final JoinResult down = get(log.join(chain.get(3).cid()));
    assertThat(down.added()).isEmpty();
    assertThat(log.size()).isZero();
    assertThat(log.heads()).isEmpty();
    assertThat(log.isComplete()).isFalse();
    assertThat(log.missing()).contains(chain.get(3).cid());
    assertThat(log.counters()).containsKey("store-unavailable");

    // Back: the next round (after RETRY_MIN, not a growing back-off) stores and links it all.
    blocksDown.set(false);
    clock.advance(OrbitDbLog.RETRY_MIN);
    assertThat(get(log.resume()).added()).hasSize(4);
    assertThat(log.isComplete()).isTrue();
    assertThat(log.heads()).containsExactly(chain.get(3).cid());
    for (final Entry entry : chain) {
      assertThat(local.has(entry.cid())).isTrue();
    }

    // The datastore refuses writes when a new entry is joined: linked in memory, the log not
    // complete until a later join wrote it.
    final Entry fifth = put(writer.entry(address, 5, List.of(chain.get(3).cid()), List.of(),
        DagCborValue.map(Map.of("i", DagCborValue.of(5)))));
    dataDown.set(true);
    final JoinResult unsaved = get(log.joinBlock(fifth.block()));
    assertThat(unsaved.complete()).isFalse();
    assertThat(log.isComplete()).isFalse();
    dataDown.set(false);
    assertThat(get(log.resume()).complete()).isTrue();
    assertThat(log.isComplete()).isTrue();

    final OrbitDbLog reopened = log(address, LogConfig.DEFAULT);
    assertThat(reopened.size()).isEqualTo(5);
    assertThat(reopened.heads()).containsExactly(fifth.cid());
    assertThat(reopened.contains(fifth.cid())).isTrue();
  }

  @Test
  void forEachEntry_shouldPassEveryEntryOnce_acrossMarkerPages() throws Exception {
    final JavaWriter writer = new JavaWriter();
    remote.put(writer.identityCid(), writer.identityBlock());
    final OrbitDbAddress address = JavaWriter.database(remote, "paged", List.of(writer.id()));
    final int length = 2 * OrbitDbLog.SCAN_PAGE + 10;
    final List<Entry> chain = writer.chain(remote, address, length);
    final java.util.concurrent.ExecutorService pool =
        java.util.concurrent.Executors.newFixedThreadPool(2);
    try {
      final OrbitDbLog log = new OrbitDbLog(address,
          TestVerifiers.of(address, remote, local, fetcher, pool), local, fetcher, datastore,
          LogConfig.DEFAULT, pool);
      assertThat(log.join(chain.get(length - 1).cid()).get(60, TimeUnit.SECONDS).complete())
          .isTrue();

      final Map<Cid, AtomicInteger> seen = new ConcurrentHashMap<>();
      log.forEachEntry(e -> seen.computeIfAbsent(e.cid(), k -> new AtomicInteger())
          .incrementAndGet());
      assertThat(seen).hasSize(length);
      assertThat(seen.values()).allMatch(n -> n.get() == 1);
      assertThat(log.entries()).extracting(Entry::cid)
          .containsExactlyElementsOf(chain.stream().map(Entry::cid).toList());
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void constructor_shouldRestoreEntriesAndHeads_whenReopened() throws Exception {
    final JavaWriter writer = new JavaWriter();
    remote.put(writer.identityCid(), writer.identityBlock());
    final OrbitDbAddress address = JavaWriter.database(remote, "persist", List.of(writer.id()));
    final List<Entry> chain = writer.chain(remote, address, 6);
    get(log(address, LogConfig.DEFAULT).join(chain.get(5).cid()));

    final OrbitDbLog reopened = log(address, LogConfig.DEFAULT);
    assertThat(reopened.size()).isEqualTo(6);
    assertThat(reopened.heads()).containsExactly(chain.get(5).cid());
    assertThat(datastore.scan("/orbitdb/logs/")).isNotEmpty();
  }

  private Entry put(final byte[] block) {
    final Entry entry = Entry.decode(block);
    remote.put(entry.cid(), block);
    return entry;
  }

  @Test
  void nodesSharingADatastore_eachKeepTheirOwnState_andReadEachOthersHeads() throws Exception {
    final JavaWriter writer = new JavaWriter();
    remote.put(writer.identityCid(), writer.identityBlock());
    final OrbitDbAddress address = JavaWriter.database(remote, "shared", List.of(writer.id()));
    final List<Entry> chain = writer.chain(remote, address, 10);
    final OrbitDbLog first = log(address, LogConfig.DEFAULT.withStateScope("relayA"));
    final OrbitDbLog second = log(address, LogConfig.DEFAULT.withStateScope("relayB"));

    get(first.join(chain.get(5).cid()));
    assertThat(second.storedHeads()).containsExactly(chain.get(5).cid());
    // What the first node verified (its markers) leaves the second node's heads and count to it:
    // joining the other's heads adds the entries to its own log (read locally, no network).
    fetches.clear();
    assertThat(get(second.join(chain.get(5).cid())).added()).hasSize(6);
    assertThat(fetches.keySet()).doesNotContainAnyElementsOf(
        chain.stream().map(Entry::cid).toList());
    get(second.join(chain.get(9).cid()));
    assertThat(second.heads()).containsExactly(chain.get(9).cid());
    assertThat(second.size()).isEqualTo(10);
    assertThat(first.size()).isEqualTo(6);
    assertThat(first.storedHeads()).containsExactly(chain.get(9).cid());
    assertThat(OrbitDbLog.hasStoredEntries(datastore, address)).isTrue();
    // Each node loads its own state again.
    assertThat(log(address, LogConfig.DEFAULT.withStateScope("relayA")).size()).isEqualTo(6);
  }

  /** A shared datastore that checks fences as PostgreSQL does: one current epoch per name. */
  private static final class FencedDatastore extends ForwardingDatastore {
    final Map<String, Long> epochs = new ConcurrentHashMap<>();
    private final MemoryDatastore inner;

    FencedDatastore() {
      this(new MemoryDatastore());
    }

    private FencedDatastore(final MemoryDatastore inner) {
      super(inner);
      this.inner = inner;
    }

    @Override
    public void write(final Map<String, byte[]> puts, final java.util.Collection<String> deletes,
        final Fence fence) {
      if (!Long.valueOf(fence.epoch()).equals(epochs.get(fence.name()))) {
        throw new StaleFenceException("postgres", fence);
      }
      inner.write(puts, deletes);
    }
  }

  /** Ownership of one leased log, as the test says. */
  private static final class Owner implements LogFences {
    volatile Fence fence;

    @Override
    public boolean leased(final OrbitDbAddress address) {
      return true;
    }

    @Override
    public java.util.Optional<Fence> fence(final OrbitDbAddress address) {
      return java.util.Optional.ofNullable(fence);
    }
  }

  @Test
  void sharedHeads_shouldBeWrittenByTheOwnerAlone_andNotByAFormerOwnerWithAStaleFence()
      throws Exception {
    final JavaWriter writer = new JavaWriter();
    remote.put(writer.identityCid(), writer.identityBlock());
    final OrbitDbAddress address = JavaWriter.database(remote, "fenced", List.of(writer.id()));
    final List<Entry> chain = writer.chain(remote, address, 10);
    final FencedDatastore shared = new FencedDatastore();
    final Owner a = new Owner();
    final Owner b = new Owner();
    final OrbitDbLog logA = new OrbitDbLog(address,
        TestVerifiers.of(address, remote, local, fetcher, Runnable::run), local, fetcher, shared,
        LogConfig.DEFAULT.withStateScope("relayA"), new LogMemory(), Runnable::run, clock, a);
    final OrbitDbLog logB = new OrbitDbLog(address,
        TestVerifiers.of(address, remote, local, fetcher, Runnable::run), local, fetcher, shared,
        LogConfig.DEFAULT.withStateScope("relayB"), new LogMemory(), Runnable::run, clock, b);
    // A owns the log at epoch 1: its heads are the shared ones; B, a follower, writes its own.
    shared.epochs.put(address.toString(), 1L);
    a.fence = new Fence(address.toString(), "relayA", 1);
    get(logA.join(chain.get(3).cid()));
    get(logB.join(chain.get(5).cid()));
    assertThat(logB.storedHeads()).containsExactly(chain.get(3).cid());
    assertThat(logB.heads()).containsExactly(chain.get(5).cid());
    // B takes the lease over at epoch 2 while A, paused, still holds its fence of epoch 1.
    shared.epochs.put(address.toString(), 2L);
    b.fence = new Fence(address.toString(), "relayB", 2);
    get(logB.join(chain.get(7).cid()));
    assertThat(logA.storedHeads()).containsExactly(chain.get(7).cid());
    // A's late join is refused whole: the shared heads stay B's, A's state stays unsaved.
    get(logA.join(chain.get(4).cid()));
    assertThat(logA.storedHeads()).containsExactly(chain.get(7).cid());
    assertThat(logA.counters()).containsEntry("stale-fence", 1L);
    // A learns it lost the lease: its next write is its own state only, and lands.
    a.fence = null;
    get(logA.join(chain.get(9).cid()));
    assertThat(logA.storedHeads()).containsExactly(chain.get(7).cid());
    assertThat(new OrbitDbLog(address,
        TestVerifiers.of(address, remote, local, fetcher, Runnable::run), local, fetcher, shared,
        LogConfig.DEFAULT.withStateScope("relayA"), new LogMemory(), Runnable::run, clock, a)
        .size()).isEqualTo(10);
  }
}
