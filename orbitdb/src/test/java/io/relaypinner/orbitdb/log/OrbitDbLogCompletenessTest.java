package io.relaypinner.orbitdb.log;

import static org.assertj.core.api.Assertions.assertThat;

import io.relaypinner.ipfs.blockstore.MemoryBlockstore;
import io.relaypinner.ipfs.dagcbor.DagCborValue;
import io.relaypinner.ipfs.datastore.Datastore;
import io.relaypinner.ipfs.datastore.MemoryDatastore;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.orbitdb.BlockFetcher;
import io.relaypinner.orbitdb.BlockstoreFetcher;
import io.relaypinner.orbitdb.JavaWriter;
import io.relaypinner.orbitdb.OrbitDbAddress;
import io.relaypinner.orbitdb.RejectReason;
import io.relaypinner.testkit.MutableClock;
import java.time.Instant;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The log's incremental completeness, on a fixed clock with logs written by {@link JavaWriter}:
 * gaps, forks, refused entries, unverifiable identities, oversized blocks and parents that never
 * arrive.
 */
class OrbitDbLogCompletenessTest {
  private final MemoryBlockstore remote = new MemoryBlockstore();
  private final MemoryBlockstore local = new MemoryBlockstore();
  private final MemoryDatastore datastore = new MemoryDatastore();
  private final Map<Cid, AtomicInteger> fetches = new ConcurrentHashMap<>();
  private final Set<Cid> withheld = ConcurrentHashMap.newKeySet();
  private final MutableClock clock = new MutableClock(Instant.parse("2026-01-01T00:00:00Z"));
  private final BlockFetcher fetcher = cid -> {
    fetches.computeIfAbsent(cid, k -> new AtomicInteger()).incrementAndGet();
    if (withheld.contains(cid)) {
      return CompletableFuture.failedFuture(new NoSuchElementException("withheld"));
    }
    return new BlockstoreFetcher(remote).fetch(cid);
  };
  private final JavaWriter writer = new JavaWriter();

  private OrbitDbLog log(final OrbitDbAddress address) {
    return log(address, LogConfig.DEFAULT);
  }

  private OrbitDbLog log(final OrbitDbAddress address, final LogConfig config) {
    return log(address, config, new LogMemory());
  }

  private OrbitDbLog log(final OrbitDbAddress address, final LogConfig config,
      final LogMemory memory) {
    return new OrbitDbLog(address, TestVerifiers.of(address, remote, local, fetcher, Runnable::run),
        local, fetcher, datastore, config, memory, Runnable::run, clock);
  }

  private OrbitDbAddress database(final String name, final JavaWriter... writers) {
    final List<String> ids = new java.util.ArrayList<>();
    for (final JavaWriter w : writers) {
      remote.put(w.identityCid(), w.identityBlock());
      ids.add(w.id());
    }
    return JavaWriter.database(remote, name, ids);
  }

  private Entry put(final byte[] block) {
    final Entry entry = Entry.decode(block);
    remote.put(entry.cid(), block);
    return entry;
  }

  private static JoinResult get(final CompletableFuture<JoinResult> f) throws Exception {
    return f.get(10, TimeUnit.SECONDS);
  }

  private int fetchesOf(final Cid cid) {
    final AtomicInteger n = fetches.get(cid);
    return n == null ? 0 : n.get();
  }

  @Test
  void gap_shouldKeepLaterEntriesIncomplete_untilTheMissingEntryArrives() throws Exception {
    final OrbitDbAddress address = database("gap", writer);
    // next = previous; refs = 2, 4, ... back: entry 3 needs 2 through next, 4 through refs.
    final List<Entry> chain = writer.chain(remote, address, 5);
    withheld.add(chain.get(2).cid());
    final OrbitDbLog log = log(address);

    final JoinResult first = get(log.join(chain.get(4).cid()));

    assertThat(first.added()).extracting(Entry::cid).containsExactlyInAnyOrder(
        chain.get(4).cid(), chain.get(3).cid(), chain.get(1).cid(), chain.get(0).cid());
    assertThat(first.complete()).isFalse();
    assertThat(log.isComplete()).isFalse();
    assertThat(log.missing()).containsExactly(chain.get(2).cid());
    assertThat(first.completed()).containsExactlyInAnyOrder(chain.get(0).cid(),
        chain.get(1).cid());
    assertThat(log.isComplete(chain.get(1).cid())).isTrue();
    assertThat(log.isComplete(chain.get(3).cid())).isFalse();
    assertThat(log.isComplete(chain.get(4).cid())).isFalse();
    assertThat(log.incompleteCount()).isEqualTo(2);

    withheld.clear();
    clock.advance(OrbitDbLog.RETRY_MIN);
    final JoinResult filled = get(log.resume());

    assertThat(filled.added()).extracting(Entry::cid).containsExactly(chain.get(2).cid());
    assertThat(filled.completed()).containsExactlyInAnyOrder(chain.get(2).cid(),
        chain.get(3).cid(), chain.get(4).cid());
    assertThat(filled.complete()).isTrue();
    assertThat(log.isComplete()).isTrue();
    assertThat(log.missing()).isEmpty();
    assertThat(log.incompleteCount()).isZero();
    assertThat(log.heads()).containsExactly(chain.get(4).cid());
  }

  @Test
  void gap_shouldStillBeKnown_afterReopening() throws Exception {
    final OrbitDbAddress address = database("gap-persisted", writer);
    final List<Entry> chain = writer.chain(remote, address, 4);
    withheld.add(chain.get(1).cid());
    get(log(address).join(chain.get(3).cid()));

    final OrbitDbLog reopened = log(address);

    assertThat(reopened.isComplete()).isFalse();
    assertThat(reopened.missing()).containsExactly(chain.get(1).cid());
    assertThat(reopened.isComplete(chain.get(0).cid())).isTrue();
    assertThat(reopened.isComplete(chain.get(3).cid())).isFalse();
    withheld.clear();
    assertThat(get(reopened.resume()).complete()).isTrue();
    assertThat(reopened.size()).isEqualTo(4);
  }

  @Test
  void fork_shouldBeCompleteWithTwoHeads_andOneAfterTheMerge() throws Exception {
    final JavaWriter other = new JavaWriter();
    final OrbitDbAddress address = database("fork", writer, other);
    final List<Entry> base = writer.chain(remote, address, 2);
    final Entry left = put(writer.entry(address, 3, List.of(base.get(1).cid()), List.of(),
        DagCborValue.of("left")));
    final Entry right = put(other.entry(address, 3, List.of(base.get(1).cid()), List.of(),
        DagCborValue.of("right")));
    final OrbitDbLog log = log(address);

    final JoinResult leftResult = get(log.joinBlock(left.block()));
    final JoinResult rightResult = get(log.joinBlock(right.block()));

    assertThat(leftResult.completed()).containsExactlyInAnyOrder(base.get(0).cid(),
        base.get(1).cid(), left.cid());
    assertThat(rightResult.added()).containsExactly(right);
    assertThat(rightResult.completed()).containsExactly(right.cid());
    assertThat(log.isComplete()).isTrue();
    assertThat(log.heads()).containsExactlyInAnyOrder(left.cid(), right.cid());

    final Entry merge = put(writer.entry(address, 4, List.of(left.cid(), right.cid()),
        List.of(), DagCborValue.of("merge")));
    final JoinResult merged = get(log.joinBlock(merge.block()));
    assertThat(merged.completed()).containsExactly(merge.cid());
    assertThat(log.heads()).containsExactly(merge.cid());
  }

  @Test
  void refusedEntry_shouldNotBeStoredNorFollowed_andResolvesWhatWaitsOnIt() throws Exception {
    final JavaWriter intruder = new JavaWriter();
    remote.put(intruder.identityCid(), intruder.identityBlock());
    final OrbitDbAddress address = database("refused", writer);
    final List<Entry> base = writer.chain(remote, address, 1);
    final Entry forged = put(intruder.entry(address, 2, List.of(base.get(0).cid()), List.of(),
        DagCborValue.of("spam")));
    final Entry after = put(writer.entry(address, 3, List.of(forged.cid()), List.of(),
        DagCborValue.of("after")));
    final OrbitDbLog log = log(address);

    final JoinResult result = get(log.joinBlock(after.block()));

    assertThat(result.added()).containsExactly(after);
    assertThat(result.rejected()).containsExactly(Map.entry(RejectReason.UNAUTHORIZED_WRITER,
        1));
    assertThat(local.has(forged.cid())).isFalse();
    // The refused entry's links are not followed, and its writer's identity is not stored.
    assertThat(fetchesOf(base.get(0).cid())).isZero();
    assertThat(local.has(intruder.identityCid())).isFalse();
    assertThat(local.has(writer.identityCid())).isTrue();
    // Nothing more can come for the refused link: what waited on it is complete.
    assertThat(result.completed()).containsExactly(after.cid());
    assertThat(log.isComplete()).isTrue();
    assertThat(log.counters()).containsEntry("rejected.unauthorized_writer", 1L);
  }

  @Test
  void unverifiableIdentity_shouldKeepTheEntryMissing_untilItsIdentityArrives()
      throws Exception {
    final OrbitDbAddress address = database("no-identity", writer);
    final List<Entry> chain = writer.chain(remote, address, 2);
    withheld.add(writer.identityCid());
    final OrbitDbLog log = log(address);

    final JoinResult first = get(log.joinBlock(chain.get(1).block()));

    assertThat(first.added()).isEmpty();
    assertThat(first.rejected()).isEmpty();
    assertThat(log.isComplete()).isFalse();
    assertThat(log.missing()).containsExactly(chain.get(1).cid());
    assertThat(local.has(chain.get(1).cid())).isFalse();

    withheld.clear();
    clock.advance(OrbitDbLog.RETRY_MIN);
    final JoinResult later = get(log.resume());
    assertThat(later.added()).containsExactlyInAnyOrderElementsOf(chain);
    assertThat(log.isComplete()).isTrue();
    assertThat(local.has(writer.identityCid())).isTrue();
  }

  @Test
  void oversizedBlock_shouldBeRefusedBeforeDecoding() throws Exception {
    final OrbitDbAddress address = database("big", writer);
    final OrbitDbLog log = log(address);

    final JoinResult result = get(log.joinBlock(new byte[Entry.MAX_BLOCK_SIZE + 1]));

    assertThat(result.rejected()).containsExactly(Map.entry(RejectReason.MALFORMED_ENTRY, 1));
    assertThat(log.counters()).containsEntry("oversized", 1L);
    assertThat(fetches).isEmpty();
    assertThat(log.isComplete()).isTrue();
  }

  @Test
  void parentThatNeverArrives_shouldBeFetchedOncePerBackOff_andCounted() throws Exception {
    final OrbitDbAddress address = database("lost", writer);
    final List<Entry> chain = writer.chain(remote, address, 3);
    final Cid lost = chain.get(0).cid();
    withheld.add(lost);
    final OrbitDbLog log = log(address);

    get(log.join(chain.get(2).cid()));
    assertThat(fetchesOf(lost)).isEqualTo(1);

    // Joins while the back-off runs do not fetch it again, however many there are.
    for (int i = 0; i < 50; i++) {
      get(log.resume());
      get(log.joinBlock(chain.get(2).block()));
    }
    assertThat(fetchesOf(lost)).isEqualTo(1);
    assertThat(log.counters()).containsEntry("deferred", 50L);

    clock.advance(OrbitDbLog.RETRY_MIN);
    get(log.resume());
    assertThat(fetchesOf(lost)).isEqualTo(2);
    // The delay doubles: one second more is not enough now, two are.
    clock.advance(OrbitDbLog.RETRY_MIN);
    get(log.resume());
    assertThat(fetchesOf(lost)).isEqualTo(2);
    clock.advance(OrbitDbLog.RETRY_MIN);
    get(log.resume());
    assertThat(fetchesOf(lost)).isEqualTo(3);
    // Never more than the longest delay apart.
    for (int i = 0; i < 20; i++) {
      clock.advance(OrbitDbLog.RETRY_MAX);
      get(log.resume());
    }
    assertThat(fetchesOf(lost)).isEqualTo(23);
    assertThat(log.counters()).containsEntry("unavailable", 23L);
    assertThat(log.isComplete()).isFalse();
    assertThat(log.missing()).containsExactly(lost);

    // An operator's explicit sync skips the back-off once.
    log.retryMissingNow();
    get(log.resume());
    assertThat(fetchesOf(lost)).isEqualTo(24);
  }

  @Test
  void completion_shouldCostOneStepPerLink_whenAGapInALongLogFills() throws Exception {
    final OrbitDbAddress address = database("long", writer);
    final List<Entry> chain = writer.chain(remote, address, 300);
    withheld.add(chain.get(0).cid());
    final OrbitDbLog log = log(address);

    final JoinResult first = get(log.join(chain.get(299).cid()));
    assertThat(first.added()).hasSize(299);
    assertThat(first.completed()).isEmpty();
    assertThat(log.incompleteCount()).isEqualTo(299);

    withheld.clear();
    clock.advance(OrbitDbLog.RETRY_MIN);
    final JoinResult filled = get(log.resume());
    assertThat(filled.completed()).hasSize(300);
    assertThat(Set.copyOf(filled.completed())).hasSize(300);
    assertThat(log.isComplete()).isTrue();
    assertThat(log.counters()).containsEntry("completed", 300L);
  }

  @Test
  void longLog_shouldHoldBoundedMemory_andReopenFromItsMarkers() throws Exception {
    final OrbitDbAddress address = database("long", writer);
    final List<Entry> chain = writer.chain(remote, address, 40);
    final LogMemory memory = new LogMemory(8, 8, 1_000, 1_000);
    final OrbitDbLog log = log(address, LogConfig.DEFAULT, memory);

    get(log.join(chain.get(39).cid()));

    assertThat(log.size()).isEqualTo(40);
    assertThat(log.isComplete()).isTrue();
    // The head; the verified entries it remembers are in the node's LRU of 8.
    assertThat(log.entriesInMemory()).isEqualTo(1);
    assertThat(memory.verifiedCached()).isLessThanOrEqualTo(8);
    assertThat(log.contains(chain.get(0).cid())).isTrue();
    assertThat(log.entries()).hasSize(40);

    final OrbitDbLog reopened = log(address, LogConfig.DEFAULT, memory);
    assertThat(reopened.size()).isEqualTo(40);
    assertThat(reopened.isComplete()).isTrue();
    assertThat(reopened.heads()).containsExactly(chain.get(39).cid());
    assertThat(reopened.entriesInMemory()).isEqualTo(1);
    assertThat(reopened.isComplete(chain.get(3).cid())).isTrue();

    // A new entry on top joins alone: nothing older is fetched or verified again.
    final Entry next = put(writer.entry(address, 41, List.of(chain.get(39).cid()),
        List.of(chain.get(38).cid()), DagCborValue.of("41")));
    final JoinResult appended = get(reopened.join(next.cid()));
    assertThat(appended.added()).extracting(Entry::cid).containsExactly(next.cid());
    assertThat(appended.complete()).isTrue();
    assertThat(fetchesOf(chain.get(0).cid())).isEqualTo(1);
    assertThat(reopened.size()).isEqualTo(41);
  }

  @Test
  void gap_shouldSurviveARestart_andCompleteWhenItFills() throws Exception {
    final OrbitDbAddress address = database("gap-restart", writer);
    final List<Entry> chain = writer.chain(remote, address, 5);
    withheld.add(chain.get(2).cid());
    get(log(address).join(chain.get(4).cid()));

    final OrbitDbLog reopened = log(address);
    assertThat(reopened.isComplete()).isFalse();
    assertThat(reopened.incompleteCount()).isEqualTo(2);
    assertThat(reopened.missing()).containsExactly(chain.get(2).cid());
    assertThat(reopened.size()).isEqualTo(4);

    withheld.clear();
    clock.advance(OrbitDbLog.RETRY_MIN);
    final JoinResult filled = get(reopened.resume());
    assertThat(filled.complete()).isTrue();
    assertThat(filled.completed()).contains(chain.get(3).cid(), chain.get(4).cid());
    assertThat(reopened.size()).isEqualTo(5);
    assertThat(log(address).isComplete()).isTrue();
  }

  @Test
  void earlierLayout_shouldBeConvertedToMarkersOnce() throws Exception {
    final OrbitDbAddress address = database("earlier", writer);
    final List<Entry> chain = writer.chain(local, address, 5);
    final String prefix = "/orbitdb/logs/"
        + address.manifest().toString(io.relaypinner.multiformats.Multibase.Base.BASE58BTC) + "/";
    final List<DagCborValue> listed = new java.util.ArrayList<>();
    for (final Entry entry : chain) {
      listed.add(DagCborValue.of(entry.cid().toString(
          io.relaypinner.multiformats.Multibase.Base.BASE58BTC)));
    }
    datastore.put(prefix + "batches/first", io.relaypinner.ipfs.dagcbor.DagCbor.encode(
        DagCborValue.list(listed)));

    final OrbitDbLog converted = log(address);

    assertThat(converted.size()).isEqualTo(5);
    assertThat(converted.isComplete()).isTrue();
    assertThat(converted.heads()).containsExactly(chain.get(4).cid());
    assertThat(datastore.scan(prefix + "batches/")).isEmpty();
    assertThat(datastore.scan(prefix + "e/")).hasSize(5);
    assertThat(OrbitDbLog.hasStoredEntries(datastore, address)).isTrue();
    assertThat(log(address).size()).isEqualTo(5);
  }

  /**
   * GC's paged read of the members ({@link LogStore#forEachMember}) while the log's own load
   * converts it from the earlier layout, before each page of the read in turn (pages of one
   * record): every entry is read as a member every time. Pins the order the read relies on:
   * the load writes the markers before it deletes the listed records.
   */
  @Test
  void earlierLayout_convertedWhileGcReadsTheMembers_shouldHideNoEntry() throws Exception {
    final OrbitDbAddress address = database("earlier-during-gc", writer);
    final List<Entry> chain = writer.chain(local, address, 4);
    final String prefix = "/orbitdb/logs/"
        + address.manifest().toString(io.relaypinner.multiformats.Multibase.Base.BASE58BTC) + "/";
    final List<Cid> entries = chain.stream().map(Entry::cid).toList();
    // The log's own writes: a listed record is deleted only once every entry has its marker.
    final Datastore markersFirst = new ForwardingDatastore(datastore) {
      @Override
      public void write(final Map<String, byte[]> puts, final Collection<String> deletes) {
        if (deletes.stream().anyMatch(k -> k.contains("/entries/") || k.contains("/batches/"))) {
          assertThat(entries).allMatch(e -> datastore.get(prefix + "e/" + e).isPresent());
        }
        super.write(puts, deletes);
      }
    };
    int pages = Integer.MAX_VALUE;
    for (int convertAt = 0; convertAt < pages; convertAt++) {
      for (final Datastore.Entry e : datastore.scan("/orbitdb/logs/")) {
        datastore.delete(e.key());
      }
      // Two entries listed one by one, two in a batch: both layouts before the markers.
      datastore.put(prefix + "entries/" + entries.get(0), new byte[0]);
      datastore.put(prefix + "entries/" + entries.get(1), new byte[0]);
      datastore.put(prefix + "batches/" + entries.get(2), LogStore.encodeCids(entries.subList(2,
          4)));
      datastore.put(prefix + "heads", LogStore.encodeCids(List.of(entries.get(3))));
      final int at = convertAt;
      final int[] asked = {0};
      final Datastore gcView = new ForwardingDatastore(datastore) {
        @Override
        public List<Entry> scan(final String scanned, final String after, final int limit) {
          if (asked[0]++ == at) {
            final OrbitDbLog converted = new OrbitDbLog(address,
                TestVerifiers.of(address, remote, local, fetcher, Runnable::run), local, fetcher,
                markersFirst, LogConfig.DEFAULT, new LogMemory(), Runnable::run, clock);
            assertThat(converted.size()).isEqualTo(4);
          }
          return super.scan(scanned, after, limit);
        }
      };

      final Set<Cid> members = new HashSet<>();
      LogStore.forEachMember(gcView, 1, members::add);

      assertThat(members).as("converted before page %d", at).containsAll(entries);
      if (asked[0] <= at) {
        pages = at;
      } else {
        assertThat(datastore.scan(prefix + "entries/")).as("converted").isEmpty();
      }
    }
    assertThat(pages).isGreaterThan(4);
  }

  @Test
  void incompleteEntriesInTheEarlierLayout_shouldBeReadAndRewrittenAsKeys() throws Exception {
    final OrbitDbAddress address = database("earlier-incomplete", writer);
    final List<Entry> chain = writer.chain(remote, address, 6);
    withheld.add(chain.get(1).cid());
    get(log(address).join(chain.get(5).cid()));
    // Rewrite the incomplete entries as the earlier layout stored them: one list per record.
    final String prefix = "/orbitdb/logs/"
        + address.manifest().toString(io.relaypinner.multiformats.Multibase.Base.BASE58BTC) + "/";
    final List<DagCborValue> listed = new java.util.ArrayList<>();
    for (final Datastore.Entry e : datastore.scan(prefix + "i/")) {
      listed.add(DagCborValue.of(e.key().substring(prefix.length() + 2)));
      datastore.delete(e.key());
    }
    assertThat(listed).hasSize(4);
    datastore.put(prefix + "incomplete/0", io.relaypinner.ipfs.dagcbor.DagCbor.encode(
        DagCborValue.list(listed)));

    final OrbitDbLog reopened = log(address);
    assertThat(reopened.incompleteCount()).isEqualTo(4);
    assertThat(reopened.isComplete(chain.get(5).cid())).isFalse();
    // The next write replaces the record by a key per entry.
    final Entry next = put(writer.entry(address, 7, List.of(chain.get(5).cid()),
        List.of(chain.get(4).cid()), DagCborValue.of("7")));
    get(reopened.join(next.cid()));
    assertThat(datastore.scan(prefix + "incomplete/")).isEmpty();
    assertThat(datastore.scan(prefix + "i/")).hasSize(5);

    withheld.clear();
    clock.advance(OrbitDbLog.RETRY_MIN);
    assertThat(get(reopened.resume()).complete()).isTrue();
    assertThat(datastore.scan(prefix + "i/")).isEmpty();
    assertThat(log(address).isComplete()).isTrue();
  }
}
