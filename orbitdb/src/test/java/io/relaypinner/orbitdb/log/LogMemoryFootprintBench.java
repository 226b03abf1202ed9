package io.relaypinner.orbitdb.log;

import io.relaypinner.ipfs.blockstore.MemoryBlockstore;
import io.relaypinner.ipfs.datastore.MemoryDatastore;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.orbitdb.BlockFetcher;
import io.relaypinner.orbitdb.BlockstoreFetcher;
import io.relaypinner.orbitdb.JavaWriter;
import io.relaypinner.orbitdb.OrbitDbAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The heap the logs of a node retain: per followed database, per remembered entry and per
 * incomplete entry (docs/benchmarks.md, "Memory per followed database"). Not a test: surefire's
 * default includes skip it. Run it with
 * {@code mvn -B -pl orbitdb test -Dtest=LogMemoryFootprintBench -Djacoco.skip=true
 * -Dsurefire.failIfNoSpecifiedTests=false [-Dbench.databases=1000 -Dbench.entries=20000 -Dbench.many=40 -Dbench.manyEntries=4200]}.
 * Retained heap is the heap used after a full GC with the logs held, less the same after they
 * are dropped (blocks and datastore stay in both).
 */
class LogMemoryFootprintBench {
  private final MemoryBlockstore remote = new MemoryBlockstore();
  private final MemoryBlockstore local = new MemoryBlockstore();
  private final MemoryDatastore datastore = new MemoryDatastore();
  private final Set<Cid> withheld = ConcurrentHashMap.newKeySet();
  private final BlockFetcher fetcher = cid -> withheld.contains(cid)
      ? CompletableFuture.failedFuture(new NoSuchElementException("withheld"))
      : new BlockstoreFetcher(remote).fetch(cid);
  private final ExecutorService pool = Executors.newFixedThreadPool(2);

  /** The heap in use after full collections (the least of five). */
  static long usedAfterGc() throws InterruptedException {
    long used = Long.MAX_VALUE;
    for (int i = 0; i < 5; i++) {
      System.gc();
      Thread.sleep(100);
      final Runtime r = Runtime.getRuntime();
      used = Math.min(used, r.totalMemory() - r.freeMemory());
    }
    return used;
  }

  private OrbitDbLog open(final OrbitDbAddress address, final LogMemory memory) {
    return new OrbitDbLog(address, TestVerifiers.of(address, remote, local, fetcher, pool), local,
        fetcher, datastore, LogConfig.DEFAULT, memory, pool, java.time.Clock.systemUTC());
  }

  /** Joins {@code databases} logs of {@code entries} each; returns the retained bytes. */
  private long retained(final String name, final int databases, final int entries,
      final boolean withholdRoots, final long[] counts) throws Exception {
    final JavaWriter writer = new JavaWriter();
    remote.put(writer.identityCid(), writer.identityBlock());
    final List<OrbitDbAddress> addresses = new ArrayList<>();
    final List<Cid> heads = new ArrayList<>();
    for (int d = 0; d < databases; d++) {
      final OrbitDbAddress address = JavaWriter.database(remote, name + d,
          List.of(writer.id()));
      final List<Entry> chain = writer.chain(remote, address, entries);
      addresses.add(address);
      heads.add(chain.get(entries - 1).cid());
      if (withholdRoots) {
        withheld.add(chain.get(0).cid());
      }
    }
    final long before = usedAfterGc();
    LogMemory memory = new LogMemory();
    List<OrbitDbLog> logs = new ArrayList<>();
    for (int d = 0; d < databases; d++) {
      final OrbitDbLog log = open(addresses.get(d), memory);
      log.join(heads.get(d)).get(10, TimeUnit.MINUTES);
      logs.add(log);
    }
    counts[0] = memory.incomplete();
    counts[1] = memory.verifiedCached();
    final long held = usedAfterGc();
    logs = null;
    memory = null;
    final long after = usedAfterGc();
    System.out.printf("%s: %d logs of %d entries: retained %,d bytes (heap before %,d KiB, "
        + "after dropping %,d KiB); incomplete %d, verified remembered %d%n", name, databases,
        entries, held - after, before / 1024, after / 1024, counts[0], counts[1]);
    return held - after;
  }

  @Test
  void footprint() throws Exception {
    final int databases = Integer.getInteger("bench.databases", 1_000);
    final int entries = Integer.getInteger("bench.entries", 20_000);
    final long[] counts = new long[2];
    final long perDatabase = retained("small", databases, 1, false, counts) / databases;
    final long verifiedBytes = retained("long", 1, entries, false, counts) - perDatabase;
    final long perVerified = verifiedBytes / Math.max(1, counts[1]);
    final long incompleteBytes = retained("gap", 1, entries, true, counts) - perDatabase
        - counts[1] * perVerified;
    final long perIncomplete = incompleteBytes / Math.max(1, counts[0]);
    final int many = Integer.getInteger("bench.many", 40);
    final int manyEntries = Integer.getInteger("bench.manyEntries", 4_200);
    final long manyBytes = retained("many", many, manyEntries, false, counts);
    System.out.printf("%d followed databases of %d entries each: %,d bytes retained, %,d per "
        + "database%n", many, manyEntries, manyBytes, manyBytes / many);
    System.out.printf("per followed database (its log, one remembered entry): %,d bytes; "
        + "per remembered verified entry: %,d bytes; per incomplete entry: %,d bytes "
        + "(max heap %d MiB)%n", perDatabase, perVerified, perIncomplete,
        Runtime.getRuntime().maxMemory() >> 20);
    pool.shutdownNow();
  }
}
