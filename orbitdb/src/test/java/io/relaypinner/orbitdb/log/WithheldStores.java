package io.relaypinner.orbitdb.log;

import io.relaypinner.ipfs.blockstore.MemoryBlockstore;
import io.relaypinner.ipfs.datastore.MemoryDatastore;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.orbitdb.BlockFetcher;
import io.relaypinner.orbitdb.BlockstoreFetcher;
import io.relaypinner.orbitdb.OrbitDbAddress;
import io.relaypinner.testkit.MutableClock;
import java.time.Instant;
import java.util.NoSuchElementException;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/**
 * What the log tests of a node's memory budget share: the writers' blocks ({@link #remote}),
 * fetched unless {@link #withheld}; the relay's stores; a fixed clock; logs opened on them.
 */
abstract class WithheldStores {
  final MemoryBlockstore remote = new MemoryBlockstore();
  final MemoryBlockstore local = new MemoryBlockstore();
  final MemoryDatastore datastore = new MemoryDatastore();
  final Set<Cid> withheld = ConcurrentHashMap.newKeySet();
  final MutableClock clock = new MutableClock(Instant.parse("2026-01-01T00:00:00Z"));
  final BlockFetcher fetcher = cid -> withheld.contains(cid)
      ? CompletableFuture.failedFuture(new NoSuchElementException("withheld"))
      : new BlockstoreFetcher(remote).fetch(cid);

  /** The relay's log of {@code address} on these stores, within {@code memory}. */
  OrbitDbLog log(final OrbitDbAddress address, final LogMemory memory) {
    return new OrbitDbLog(address, TestVerifiers.of(address, remote, local, fetcher, Runnable::run),
        local, fetcher, datastore, LogConfig.DEFAULT, memory, Runnable::run, clock);
  }
}
