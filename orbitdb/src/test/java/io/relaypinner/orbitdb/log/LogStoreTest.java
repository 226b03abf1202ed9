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
import java.util.Optional;
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

  @Test
  void members_shouldBeReadFromOneSnapshot_notPageByPage() {
    datastore.put(prefix + "e/" + a, new byte[0]);
    final Datastore snapshotsOnly = new Datastore() {
      @Override
      public Optional<byte[]> get(final String key) {
        return datastore.get(key);
      }

      @Override
      public void put(final String key, final byte[] value) {
        datastore.put(key, value);
      }

      @Override
      public boolean delete(final String key) {
        return datastore.delete(key);
      }

      @Override
      public List<Entry> scan(final String scanned) {
        return datastore.scan(scanned);
      }

      @Override
      public List<Entry> scan(final String scanned, final String after, final int limit) {
        throw new AssertionError("a page: a log converted meanwhile could hide its entries");
      }

      @Override
      public void close() {
      }
    };

    final List<Cid> all = new ArrayList<>();
    LogStore.forEachMember(snapshotsOnly, all::add);
    LogStore.forEachMember(snapshotsOnly, address, all::add);

    assertThat(all).containsExactly(a, a);
  }
}
