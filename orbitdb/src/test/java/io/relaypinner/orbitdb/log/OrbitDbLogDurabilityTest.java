package io.relaypinner.orbitdb.log;

import static org.assertj.core.api.Assertions.assertThat;

import io.relaypinner.ipfs.blockstore.Blockstore;
import io.relaypinner.ipfs.blockstore.MemoryBlockstore;
import io.relaypinner.ipfs.datastore.Datastore;
import io.relaypinner.ipfs.datastore.MemoryDatastore;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.multiformats.Multihash;
import io.relaypinner.orbitdb.BlockstoreFetcher;
import io.relaypinner.orbitdb.JavaWriter;
import io.relaypinner.orbitdb.OrbitDbAddress;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/**
 * The order of a join's storage work: its entry and identity blocks are staged, one barrier makes
 * them durable, then one datastore write records the heads; a datastore write never sees a staged
 * (not yet durable) block.
 */
class OrbitDbLogDurabilityTest {
  private final List<String> events = Collections.synchronizedList(new ArrayList<>());
  private final MemoryBlockstore remote = new MemoryBlockstore();
  private final Staging local = new Staging();
  private final Recording datastore = new Recording();

  /** Staged blocks stay apart (not durable) until {@link #sync}. */
  private final class Staging implements Blockstore {
    final MemoryBlockstore durable = new MemoryBlockstore();
    final Map<Multihash, Cid> staged = new ConcurrentHashMap<>();
    final Map<Multihash, byte[]> bytes = new ConcurrentHashMap<>();
    int stagedTotal;

    @Override
    public boolean has(final Cid cid) {
      return staged.containsKey(cid.multihash()) || durable.has(cid);
    }

    @Override
    public Optional<byte[]> get(final Cid cid) {
      final byte[] data = bytes.get(cid.multihash());
      return data != null ? Optional.of(data) : durable.get(cid);
    }

    @Override
    public Optional<Integer> size(final Cid cid) {
      return get(cid).map(d -> d.length);
    }

    @Override
    public void put(final Cid cid, final byte[] data) {
      events.add("put");
      durable.put(cid, data);
    }

    @Override
    public synchronized void stage(final Cid cid, final byte[] data) {
      stagedTotal++;
      bytes.put(cid.multihash(), data);
      staged.put(cid.multihash(), cid);
    }

    @Override
    public synchronized void sync() {
      if (!staged.isEmpty()) {
        events.add("sync " + staged.size());
      }
      staged.forEach((mh, cid) -> durable.put(cid, bytes.remove(mh)));
      staged.clear();
    }

    @Override
    public boolean delete(final Cid cid) {
      return durable.delete(cid);
    }

    @Override
    public void forEachKey(final Consumer<Cid> visitor) {
      durable.forEachKey(visitor);
    }
  }

  /** Logs every write with the number of blocks still staged at that moment. */
  private final class Recording implements Datastore {
    final MemoryDatastore memory = new MemoryDatastore();
    /** Bytes (keys and values) of each write. */
    final List<Integer> writeBytes = Collections.synchronizedList(new ArrayList<>());

    @Override
    public Optional<byte[]> get(final String key) {
      return memory.get(key);
    }

    @Override
    public void put(final String key, final byte[] value) {
      events.add("datastore put, staged " + local.staged.size());
      memory.put(key, value);
    }

    @Override
    public boolean delete(final String key) {
      return memory.delete(key);
    }

    @Override
    public void write(final Map<String, byte[]> puts, final Collection<String> deletes) {
      events.add("datastore write, staged " + local.staged.size());
      int bytes = 0;
      for (final Map.Entry<String, byte[]> put : puts.entrySet()) {
        bytes += put.getKey().length() + put.getValue().length;
      }
      for (final String key : deletes) {
        bytes += key.length();
      }
      writeBytes.add(bytes);
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
  }

  private OrbitDbLog log(final OrbitDbAddress address) {
    final BlockstoreFetcher fetcher = new BlockstoreFetcher(remote);
    return new OrbitDbLog(address, TestVerifiers.of(address, remote, local, fetcher,
        Runnable::run),
        local, fetcher, datastore, LogConfig.DEFAULT, Runnable::run);
  }

  @Test
  void join_shouldStageItsBlocks_andMakeThemDurableInOneBarrier_beforeTheHeadsAreWritten()
      throws Exception {
    final JavaWriter writer = new JavaWriter();
    remote.put(writer.identityCid(), writer.identityBlock());
    final OrbitDbAddress address = JavaWriter.database(remote, "durable", List.of(writer.id()));
    final List<Entry> chain = writer.chain(remote, address, 30);
    final OrbitDbLog log = log(address);
    events.clear();

    final JoinResult first = log.join(chain.get(19).cid()).get(10, TimeUnit.SECONDS);
    final JoinResult second = log.join(chain.get(29).cid()).get(10, TimeUnit.SECONDS);

    assertThat(first.added()).hasSize(20);
    assertThat(second.added()).hasSize(10);
    // Entry blocks (and the writer's identity, once) were staged, none put one by one.
    assertThat(local.stagedTotal).isEqualTo(31);
    assertThat(events).doesNotContain("put");
    // One barrier per join, right before the join's one datastore write, which sees none staged.
    assertThat(events).containsExactly("sync 21", "datastore write, staged 0",
        "sync 10", "datastore write, staged 0");
    assertThat(log.heads()).containsExactly(chain.get(29).cid());
  }

  @Test
  void joinBlocks_shouldJoinABurstOfHeadsInOneJoin_oneBarrierAndOneWrite() throws Exception {
    final JavaWriter writer = new JavaWriter();
    remote.put(writer.identityCid(), writer.identityBlock());
    final OrbitDbAddress address = JavaWriter.database(remote, "burst", List.of(writer.id()));
    final List<Entry> chain = writer.chain(remote, address, 15);
    final OrbitDbLog log = log(address);
    log.join(chain.get(9).cid()).get(10, TimeUnit.SECONDS);
    events.clear();

    final List<byte[]> burst = new ArrayList<>();
    for (final Entry entry : chain.subList(10, 15)) {
      burst.add(entry.block());
    }
    burst.add(new byte[] {1, 2, 3});
    final JoinResult result = log.joinBlocks(burst).get(10, TimeUnit.SECONDS);

    assertThat(result.added()).hasSize(5);
    assertThat(result.rejected()).containsKey(io.relaypinner.orbitdb.RejectReason.MALFORMED_ENTRY);
    assertThat(events).containsExactly("sync 5", "datastore write, staged 0");
    assertThat(log.heads()).containsExactly(chain.get(14).cid());
    assertThat(log.isComplete()).isTrue();
  }

  @Test
  void anEntryOnTopOfAGap_shouldWriteWhatChanged_notEveryIncompleteEntry() throws Exception {
    final JavaWriter writer = new JavaWriter();
    remote.put(writer.identityCid(), writer.identityBlock());
    final OrbitDbAddress address = JavaWriter.database(remote, "gap-writes", List.of(writer.id()));
    final List<Entry> chain = writer.chain(remote, address, 301);
    final byte[] first = remote.get(chain.get(0).cid()).orElseThrow();
    remote.delete(chain.get(0).cid());
    final OrbitDbLog log = log(address);
    log.join(chain.get(299).cid()).get(10, TimeUnit.SECONDS);
    assertThat(log.incompleteCount()).isEqualTo(299);
    datastore.writeBytes.clear();

    // A writer's next entry, on top of 299 incomplete ones: its write carries that one entry.
    log.joinBlock(chain.get(300).block()).get(10, TimeUnit.SECONDS);

    assertThat(log.incompleteCount()).isEqualTo(300);
    assertThat(datastore.writeBytes).hasSize(1);
    // Its marker, its incomplete key, the count, the heads and the frontier: well under the
    // 300 CIDs (about 15 KB) a write of the whole set would take.
    assertThat(datastore.writeBytes.get(0)).isLessThan(1_000);

    // The incomplete entries are known again after a restart, and gone once complete.
    final OrbitDbLog reopened = log(address);
    assertThat(reopened.incompleteCount()).isEqualTo(300);
    remote.put(chain.get(0).cid(), first);
    assertThat(reopened.resume().get(10, TimeUnit.SECONDS).complete()).isTrue();
    assertThat(datastore.scan("/orbitdb/logs/")).extracting(Datastore.Entry::key)
        .noneMatch(key -> key.contains("/i/"));
    assertThat(log(address).isComplete()).isTrue();
  }
}
