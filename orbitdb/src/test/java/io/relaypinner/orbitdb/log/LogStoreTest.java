package io.relaypinner.orbitdb.log;

import static org.assertj.core.api.Assertions.assertThat;

import io.relaypinner.ipfs.dagcbor.DagCbor;
import io.relaypinner.ipfs.dagcbor.DagCborValue;
import io.relaypinner.ipfs.datastore.Datastore;
import io.relaypinner.ipfs.datastore.MemoryDatastore;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.multiformats.Multibase;
import io.relaypinner.orbitdb.OrbitDbAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The log's datastore layout, pinned key by key and byte by byte (stores written by earlier
 * builds must still load): a write read back, the scoped layout of shared datastores, the
 * earlier layouts, and the members other modules read through the public API.
 */
class LogStoreTest {
  private final MemoryDatastore datastore = new MemoryDatastore();
  private final OrbitDbAddress address = new OrbitDbAddress(cid("manifest"));
  private final String prefix = "/orbitdb/logs/"
      + address.manifest().toString(Multibase.Base.BASE58BTC) + "/";
  private final Cid a = cid("a");
  private final Cid b = cid("b");
  private final Cid c = cid("c");
  private final Cid d = cid("d");

  private static Cid cid(final String seed) {
    return DagCbor.cid(DagCbor.encode(DagCborValue.of(seed)));
  }

  /** A list record as every build wrote it: dag-cbor list of base58btc CID strings. */
  private static byte[] list(final Cid... cids) {
    final List<DagCborValue> items = new ArrayList<>();
    for (final Cid cid : cids) {
      items.add(DagCborValue.of(cid.toString(Multibase.Base.BASE58BTC)));
    }
    return DagCbor.encode(DagCborValue.list(items));
  }

  private List<String> keys() {
    return datastore.scan("/").stream().map(Datastore.Entry::key).toList();
  }

  private byte[] value(final String key) {
    return datastore.get(key).orElseThrow();
  }

  @Test
  void write_shouldStoreEachRecordUnderItsKey_inTheLayoutEarlierBuildsRead() {
    final LogStore store = new LogStore(datastore, address, "");

    store.write(new LogStore.Write(List.of(a, b), 2, List.of(b), List.of(c), null, false,
        Set.of(b), Set.of()));

    assertThat(keys()).containsExactlyInAnyOrder(prefix + "e/" + a, prefix + "e/" + b,
        prefix + "count", prefix + "heads", prefix + "pending", prefix + "i/" + b);
    assertThat(value(prefix + "e/" + a)).isEmpty();
    assertThat(value(prefix + "i/" + b)).isEmpty();
    assertThat(new String(value(prefix + "count"), StandardCharsets.US_ASCII)).isEqualTo("2");
    assertThat(value(prefix + "heads")).isEqualTo(list(b));
    assertThat(value(prefix + "pending")).isEqualTo(list(c));
  }

  @Test
  void read_shouldReturnWhatWasWritten() {
    final LogStore store = new LogStore(datastore, address, "");
    store.write(new LogStore.Write(List.of(a, b, c), 3, List.of(c), List.of(d), Set.of(d),
        false, Set.of(b, c), Set.of()));

    final LogStore.Stored stored = new LogStore(datastore, address, "").read().orElseThrow();

    assertThat(stored.size()).isEqualTo(3);
    assertThat(stored.heads()).containsExactly(c);
    assertThat(stored.pending()).containsExactly(d);
    assertThat(stored.walk()).containsExactly(d);
    assertThat(stored.incomplete()).containsExactlyInAnyOrder(b, c);
    assertThat(stored.legacyIncomplete()).isEmpty();
    assertThat(store.isMarked(a)).isTrue();
    assertThat(store.isMarked(d)).isFalse();
    assertThat(LogStore.hasStoredEntries(datastore, address)).isTrue();
  }

  @Test
  void write_shouldDeleteWhatNoLongerHolds_andNothingElse() {
    final LogStore store = new LogStore(datastore, address, "");
    store.write(new LogStore.Write(List.of(a, b), 2, List.of(b), List.of(c), Set.of(c), false,
        Set.of(b), Set.of()));

    // The frontier emptied, the walk ended, b completed: their records go; markers stay.
    store.write(new LogStore.Write(List.of(), 2, List.of(b), List.of(), null, true, Set.of(),
        Set.of(b)));

    assertThat(keys()).containsExactlyInAnyOrder(prefix + "e/" + a, prefix + "e/" + b,
        prefix + "count", prefix + "heads");
    final LogStore.Stored stored = store.read().orElseThrow();
    assertThat(stored.walk()).isNull();
    assertThat(stored.pending()).isEmpty();
    assertThat(stored.incomplete()).isEmpty();
  }

  @Test
  void aScopedStore_shouldKeepItsStateUnderItsScope_andWriteTheSharedHeads() {
    final LogStore relay1 = new LogStore(datastore, address, "relay1");
    relay1.write(new LogStore.Write(List.of(a), 1, List.of(a), List.of(b), null, false,
        Set.of(a), Set.of()));

    final String scoped = prefix + "r/relay1/";
    assertThat(keys()).containsExactlyInAnyOrder(scoped + "e/" + a, scoped + "count",
        scoped + "heads", scoped + "pending", scoped + "i/" + a, prefix + "heads");
    assertThat(value(prefix + "heads")).isEqualTo(list(a));
    final LogStore relay2 = new LogStore(datastore, address, "relay2");
    assertThat(relay2.read()).isEmpty();
    assertThat(relay2.isMarked(a)).isFalse();
    assertThat(relay2.sharedHeads()).containsExactly(a);
    assertThat(LogStore.storedHeads(datastore, address)).containsExactly(a);
  }

  @Test
  void earlierIncompleteRecords_shouldBeRead_andDeletedByTheNextWrite() {
    datastore.put(prefix + "count", "3".getBytes(StandardCharsets.US_ASCII));
    datastore.put(prefix + "heads", list(c));
    datastore.put(prefix + "incomplete/0", list(b));
    datastore.put(prefix + "incomplete/1", list(c));
    datastore.put(prefix + "i/" + d, new byte[0]);
    final LogStore store = new LogStore(datastore, address, "");

    final LogStore.Stored stored = store.read().orElseThrow();
    assertThat(stored.incomplete()).containsExactlyInAnyOrder(b, c, d);
    assertThat(stored.legacyIncomplete()).containsExactly(b, c);

    store.write(new LogStore.Write(List.of(), 3, List.of(c), List.of(), null, false,
        Set.of(b, c), Set.of()));
    assertThat(datastore.scan(prefix + "incomplete/")).isEmpty();
    assertThat(datastore.scan(prefix + "i/")).hasSize(3);
  }

  @Test
  void theLayoutBeforeTheMarkers_shouldBeListed_andItsRecordsDeletedOnce() {
    datastore.put(prefix + "entries/" + a, new byte[0]);
    datastore.put(prefix + "entries/not-a-cid", new byte[0]);
    datastore.put(prefix + "batches/" + b, list(b, c));
    datastore.put(prefix + "heads", list(c));
    final LogStore store = new LogStore(datastore, address, "");

    assertThat(store.read()).isEmpty();
    assertThat(LogStore.hasStoredEntries(datastore, address)).isTrue();
    final LogStore.Listed listed = store.readListed();
    assertThat(listed.entries()).containsExactly(a, b, c);
    assertThat(listed.keys()).hasSize(3);

    store.deleteListed(listed);
    assertThat(keys()).containsExactly(prefix + "heads");
  }

  @Test
  void hasStoredEntries_shouldBeFalse_forAnEmptyOrAbsentLog() {
    assertThat(LogStore.hasStoredEntries(datastore, address)).isFalse();
    datastore.put(prefix + "count", "0".getBytes(StandardCharsets.US_ASCII));
    assertThat(LogStore.hasStoredEntries(datastore, address)).isFalse();
    assertThat(OrbitDbLog.hasStoredEntries(datastore, address)).isFalse();
  }

  @Test
  void unreadableLists_shouldReadAsFarAsTheyGo() {
    assertThat(LogStore.decodeCids(new byte[] {1, 2, 3})).isEmpty();
    final byte[] mixed = DagCbor.encode(DagCborValue.list(List.of(
        DagCborValue.of(a.toString(Multibase.Base.BASE58BTC)), DagCborValue.of("garbage"),
        DagCborValue.of(b.toString(Multibase.Base.BASE58BTC)))));
    assertThat(LogStore.decodeCids(mixed)).containsExactly(a);
    assertThat(LogStore.decodeCids(LogStore.encodeCids(List.of(a, b)))).containsExactly(a, b);
  }

  @Test
  void markers_shouldBeReadPageByPage() {
    final LogStore store = new LogStore(datastore, address, "");
    final List<Cid> written = new ArrayList<>();
    for (int i = 0; i < LogStore.SCAN_PAGE + 5; i++) {
      written.add(cid("entry" + i));
    }
    store.write(new LogStore.Write(written, written.size(), List.of(), List.of(), null, false,
        Set.of(), Set.of()));

    final List<Cid> read = new ArrayList<>();
    final String next = store.markers(null, read::add);
    assertThat(read).hasSize(LogStore.SCAN_PAGE);
    assertThat(store.markers(next, read::add)).isNull();
    assertThat(read).containsExactlyInAnyOrderElementsOf(written);
  }

  @Test
  void members_shouldBeEveryEntryALogLists_inEveryLayoutAndScope() {
    datastore.put(prefix + "e/" + a, new byte[0]);
    datastore.put(prefix + "r/relay2/e/" + b, new byte[0]);
    datastore.put(prefix + "entries/" + c, new byte[0]);
    final Cid batched = cid("batched");
    datastore.put(prefix + "batches/first", DagCbor.encode(DagCborValue.list(List.of(
        DagCborValue.of("garbage"), DagCborValue.of(batched.toString())))));
    datastore.put(prefix + "batches/garbage", new byte[] {1, 2, 3});
    // Not members: an incomplete entry's record (its marker says so), heads, the frontier.
    datastore.put(prefix + "i/" + d, new byte[0]);
    datastore.put(prefix + "heads", list(d));
    datastore.put(prefix + "pending", list(d));
    datastore.put(prefix + "count", "1".getBytes(StandardCharsets.US_ASCII));
    final OrbitDbAddress other = new OrbitDbAddress(cid("other manifest"));
    final Cid ofOther = cid("of other");
    new LogStore(datastore, other, "").write(new LogStore.Write(List.of(ofOther), 1,
        List.of(ofOther), List.of(), null, false, Set.of(), Set.of()));
    datastore.put("/orbitdb/unrelated/e/" + d, new byte[0]);

    final List<Cid> all = new ArrayList<>();
    LogStore.forEachMember(datastore, all::add);
    final List<Cid> ofAddress = new ArrayList<>();
    LogStore.forEachMember(datastore, address, ofAddress::add);

    assertThat(all).containsExactlyInAnyOrder(a, b, c, batched, ofOther);
    assertThat(ofAddress).containsExactlyInAnyOrder(a, b, c, batched);
  }

  /**
   * A log of the layout before the markers (and another node's state in that layout) converted
   * just before each page the read asks for, pages of one and of two records: no member is ever
   * hidden. (A single paged pass would miss the entries of a log converted while the reader is
   * between its {@code e/} and its {@code entries/} records.)
   */
  @Test
  void members_shouldHideNone_whenALogIsConvertedBeforeAnyPageOfTheRead() {
    final OrbitDbAddress other = new OrbitDbAddress(cid("other manifest"));
    final Cid ofOther = cid("of other");
    final Cid scopedListed = cid("scoped listed");
    final List<Cid> expected = List.of(a, b, c, d, ofOther, scopedListed);
    for (final int page : new int[] {1, 2}) {
      // Converted before page 0, 1, ...: the last is the read's last page when none is.
      int calls = Integer.MAX_VALUE;
      for (int convertAt = 0; convertAt < calls; convertAt++) {
        final MemoryDatastore stored = new MemoryDatastore();
        stored.put(prefix + "entries/" + a, new byte[0]);
        stored.put(prefix + "entries/" + b, new byte[0]);
        stored.put(prefix + "batches/" + c, list(c, d));
        stored.put(prefix + "heads", list(d));
        new LogStore(stored, other, "").write(new LogStore.Write(List.of(ofOther), 1,
            List.of(ofOther), List.of(), null, false, Set.of(), Set.of()));
        final String otherPrefix = "/orbitdb/logs/"
            + other.manifest().toString(Multibase.Base.BASE58BTC) + "/";
        stored.put(otherPrefix + "r/relay2/entries/" + scopedListed, new byte[0]);
        final int at = convertAt;
        final int[] asked = {0};
        final Datastore racing = new ForwardingDatastore(stored) {
          @Override
          public List<Entry> scan(final String scanned, final String after, final int limit) {
            if (asked[0]++ == at) {
              convert(stored, address, "");
              convert(stored, other, "relay2");
            }
            return stored.scan(scanned, after, limit);
          }
        };

        final List<Cid> all = new ArrayList<>();
        LogStore.forEachMember(racing, page, all::add);

        assertThat(all).as("pages of %d, converted before page %d", page, at)
            .containsAll(expected);
        if (asked[0] <= at) {
          // Never converted: the read ended before that page.
          calls = at;
          assertThat(at).as("pages asked for").isGreaterThanOrEqualTo(10);
        }
      }
    }
  }

  /**
   * The read holds one page: it never asks for the whole keyspace, no page is longer than asked
   * ({@link LogStore#MEMBER_PAGE} in the node; 100 here), and each member is handed on before
   * the next page is read.
   */
  @Test
  void members_shouldBeReadAPageAtATime_handedOnBeforeTheNextPage() {
    final int page = 100;
    final List<Cid> written = new ArrayList<>();
    for (final String manifest : List.of("first manifest", "second manifest")) {
      final List<Cid> entries = new ArrayList<>();
      for (int i = 0; i < page + page / 2; i++) {
        entries.add(cid(manifest + " entry " + i));
      }
      new LogStore(datastore, new OrbitDbAddress(cid(manifest)), "").write(new LogStore.Write(
          entries, entries.size(), List.of(), List.of(), null, false, Set.of(), Set.of()));
      written.addAll(entries);
    }
    final int[] pages = {0};
    final int[] largest = {0};
    final Datastore paged = new ForwardingDatastore(datastore) {
      @Override
      public List<Entry> scan(final String scanned) {
        throw new AssertionError("the whole keyspace under " + scanned + " in the heap");
      }

      @Override
      public List<Entry> scan(final String scanned, final String after, final int limit) {
        final List<Entry> records = datastore.scan(scanned, after, limit);
        pages[0]++;
        largest[0] = Math.max(largest[0], records.size());
        return records;
      }
    };

    final List<Cid> members = new ArrayList<>();
    final List<Integer> pagesReadAtEach = new ArrayList<>();
    LogStore.forEachMember(paged, page, cid -> {
      members.add(cid);
      pagesReadAtEach.add(pages[0]);
    });

    assertThat(members).containsExactlyInAnyOrderElementsOf(written);
    assertThat(largest[0]).isEqualTo(page);
    // Two passes over 2 × (150 markers, count, heads) = 304 records: 4 pages each.
    assertThat(pages[0]).isEqualTo(8);
    // The second pass hands each page's members on before it reads the next.
    assertThat(pagesReadAtEach.get(0)).isEqualTo(5);
    assertThat(pagesReadAtEach.get(pagesReadAtEach.size() - 1)).isEqualTo(8);
    assertThat(LogStore.MEMBER_PAGE).isBetween(1_000, 10_000);
  }

  /** A conversion as the log's load does it: markers written, then listed records deleted. */
  private static void convert(final Datastore stored, final OrbitDbAddress log,
      final String scope) {
    final LogStore store = new LogStore(stored, log, scope);
    final LogStore.Listed listed = store.readListed();
    if (listed.entries().isEmpty()) {
      return;
    }
    store.write(new LogStore.Write(listed.entries(), listed.entries().size(),
        List.of(listed.entries().get(listed.entries().size() - 1)), List.of(), null, false,
        Set.of(), Set.of()));
    store.deleteListed(listed);
  }
}
