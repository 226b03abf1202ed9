package io.relaypinner.orbitdb.log;

import io.relaypinner.ipfs.blockstore.FlatFsBlockstore;
import io.relaypinner.ipfs.blockstore.MemoryBlockstore;
import io.relaypinner.ipfs.datastore.MvStoreDatastore;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.orbitdb.BlockFetcher;
import io.relaypinner.orbitdb.BlockstoreFetcher;
import io.relaypinner.orbitdb.JavaWriter;
import io.relaypinner.orbitdb.OrbitDbAddress;
import io.relaypinner.testkit.MutableClock;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A first sync of a history longer than a log's budget of incomplete entries (docs/benchmarks.md,
 * "A history longer than the incomplete entries' budget"): a Java-written log of
 * {@code bench.entries} entries whose first entry arrives only after the rest were walked back
 * from the head, then resumed until complete (or 12 rounds). Not a test: surefire's default
 * includes skip it. Run it with {@code mvn -B -pl orbitdb test -Dtest=HistoryWalkBench
 * -Djacoco.skip=true -Dsurefire.failIfNoSpecifiedTests=false [-Dbench.entries=250000]}. Uses
 * only the log's API that predates the walk, so it runs on earlier builds too. {@link
 * #onTopOfAGap} ({@code -Dtest=HistoryWalkBench#onTopOfAGap [-Dbench.gap=20000
 * -Dbench.onTop=200]}) times a writer's entries joined one by one on top of a gap; {@link #scan}
 * ({@code -Dtest=HistoryWalkBench#scan [-Dbench.scan=50000]}) what one fallback scan of a long log
 * costs.
 */
class HistoryWalkBench {
  private final MemoryBlockstore remote = new MemoryBlockstore();
  /** The relay's own stores, on disk, so that the heap measured is the log's. */
  private FlatFsBlockstore local;
  private MvStoreDatastore datastore;
  private OrbitDbAddress address;
  private final Set<Cid> withheld = ConcurrentHashMap.newKeySet();
  private final BlockFetcher fetcher = cid -> withheld.contains(cid)
      ? CompletableFuture.failedFuture(new NoSuchElementException("withheld"))
      : new BlockstoreFetcher(remote).fetch(cid);
  private final ExecutorService pool = Executors.newFixedThreadPool(2);
  private final MutableClock clock = new MutableClock(Instant.parse("2026-01-01T00:00:00Z"));

  /**
   * Opens the stores in {@code dir} and writes a linear log of {@code entries} entries into the
   * writer's store, its first entry withheld when {@code gap}; returns the chain, oldest first.
   */
  private List<Entry> setUp(final Path dir, final String name, final int entries,
      final boolean gap) throws Exception {
    local = new FlatFsBlockstore(Files.createDirectories(dir.resolve("blocks")));
    datastore = new MvStoreDatastore(dir.resolve("datastore.mv"));
    final JavaWriter writer = new JavaWriter();
    remote.put(writer.identityCid(), writer.identityBlock());
    address = JavaWriter.database(remote, name, List.of(writer.id()));
    final long t = System.nanoTime();
    final List<Entry> chain = writer.chain(remote, address, entries);
    System.out.printf("wrote %d entries in %d ms%n", entries, (System.nanoTime() - t) / 1_000_000);
    if (gap) {
      withheld.add(chain.get(0).cid());
    }
    return chain;
  }

  /** The relay's log of {@link #address} on the stores {@link #setUp} opened. */
  private OrbitDbLog open() {
    return new OrbitDbLog(address, TestVerifiers.of(address, remote, local, fetcher, pool),
        local, fetcher, datastore, LogConfig.DEFAULT, new LogMemory(), pool, clock);
  }

  @Test
  void walk(@TempDir final Path dir) throws Exception {
    final int entries = Integer.getInteger("bench.entries", 250_000);
    final List<Entry> chain = setUp(dir, "walk", entries, true);
    final Cid head = chain.get(entries - 1).cid();
    chain.clear();

    final long base = LogMemoryFootprintBench.usedAfterGc();
    final OrbitDbLog log = open();
    boolean complete = report("join from the head", log, () -> log.join(head), base);
    for (int round = 1; round <= 12 && !complete; round++) {
      if (round == 2) {
        // The first entry arrives once the rest was walked (or the walk stalled).
        withheld.clear();
      }
      clock.advance(OrbitDbLog.RETRY_MAX);
      complete = report("resume " + round, log, log::resume, base);
    }
    System.out.printf("%s after all rounds: %d of %d entries%n",
        complete ? "COMPLETE" : "INCOMPLETE", log.size(), entries);
    pool.shutdownNow();
    datastore.close();
  }

  /**
   * A writer's entries on top of a log whose first entry is missing ({@code bench.gap} entries
   * wait for it): the time of each join of one entry, whose write carries the incomplete
   * entries.
   */
  @Test
  void onTopOfAGap(@TempDir final Path dir) throws Exception {
    final int entries = Integer.getInteger("bench.gap", 20_000);
    final int rounds = Integer.getInteger("bench.onTop", 200);
    final List<Entry> chain = setUp(dir, "gap", entries + rounds, true);
    final OrbitDbLog log = open();
    log.join(chain.get(entries - 1).cid()).get(30, TimeUnit.MINUTES);
    final long[] nanos = new long[rounds];
    for (int i = 0; i < rounds; i++) {
      final long t = System.nanoTime();
      log.joinBlock(chain.get(entries + i).block()).get(1, TimeUnit.MINUTES);
      nanos[i] = System.nanoTime() - t;
    }
    java.util.Arrays.sort(nanos);
    System.out.printf("%d entries joined one by one on top of %d incomplete ones: median %.2f ms,"
        + " p90 %.2f ms, max %.2f ms; incomplete now %d%n", rounds, entries - 1,
        nanos[rounds / 2] / 1e6, nanos[rounds * 9 / 10] / 1e6, nanos[rounds - 1] / 1e6,
        log.incompleteCount());
    pool.shutdownNow();
    datastore.close();
  }

  /**
   * What one fallback scan of a complete log of {@code bench.scan} entries costs (the relay's
   * media scan reads every entry this way): five passes of {@link OrbitDbLog#forEachEntry}.
   */
  @Test
  void scan(@TempDir final Path dir) throws Exception {
    final int entries = Integer.getInteger("bench.scan", 50_000);
    final List<Entry> chain = setUp(dir, "scan", entries, false);
    final OrbitDbLog log = open();
    log.join(chain.get(entries - 1).cid()).get(30, TimeUnit.MINUTES);
    for (int pass = 1; pass <= 5; pass++) {
      final long t = System.nanoTime();
      final long[] seen = new long[1];
      log.forEachEntry(entry -> seen[0] += entry.payload() == null ? 0 : 1);
      System.out.printf("scan %d of a log of %d entries: %d ms (%d entries read)%n", pass,
          log.size(), (System.nanoTime() - t) / 1_000_000, seen[0]);
    }
    pool.shutdownNow();
    datastore.close();
  }

  /** Prints what a join did and the heap the log holds after it; returns whether complete. */
  private static boolean report(final String step, final OrbitDbLog log,
      final Supplier<CompletableFuture<JoinResult>> start, final long base) throws Exception {
    final long startNanos = System.nanoTime();
    CompletableFuture<JoinResult> join = start.get();
    JoinResult result = join.get(30, TimeUnit.MINUTES);
    final long ms = (System.nanoTime() - startNanos) / 1_000_000;
    final int added = result.added().size();
    final boolean complete = result.complete();
    // The result lists every entry the join added: not the log's to hold.
    result = null;
    join = null;
    final long heap = LogMemoryFootprintBench.usedAfterGc() - base;
    System.out.printf("%s: %d ms, added %d, log %d entries, incomplete %d, missing %d, "
        + "complete %s, heap held beyond the writer's blocks %,d KiB, counters %s%n", step, ms,
        added, log.size(), log.incompleteCount(), log.missing().size(), complete, heap / 1024,
        log.counters());
    return complete;
  }
}
