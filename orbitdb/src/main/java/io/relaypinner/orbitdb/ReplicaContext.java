package io.relaypinner.orbitdb;

import io.relaypinner.ipfs.blockstore.Blockstore;
import io.relaypinner.ipfs.datastore.Datastore;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.orbitdb.identity.Identities;
import io.relaypinner.orbitdb.log.LogConfig;
import io.relaypinner.orbitdb.log.LogFences;
import io.relaypinner.orbitdb.log.LogMemory;
import java.time.Clock;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;

/**
 * What every replica of a node shares: the blockstore verified blocks go to, the datastore for
 * log state, where missing blocks come from, the identity cache, the executor for decoding,
 * verification and storage (never a Netty event loop), the log limits, the clock the logs time
 * their retries on, the memory budget all its logs share, and who writes a log's shared heads
 * when several nodes share the datastore ({@link LogFences}).
 */
public record ReplicaContext(Blockstore blockstore, Datastore datastore, BlockFetcher fetcher,
    Identities identities, Executor executor, LogConfig logConfig, Clock clock,
    LogMemory logMemory, LogFences fences) {
  /** A context on the system clock, with the default {@link LogMemory}. */
  public ReplicaContext(final Blockstore blockstore, final Datastore datastore,
      final BlockFetcher fetcher, final Identities identities, final Executor executor,
      final LogConfig logConfig) {
    this(blockstore, datastore, fetcher, identities, executor, logConfig, Clock.systemUTC());
  }

  /** A context with the default {@link LogMemory}. */
  public ReplicaContext(final Blockstore blockstore, final Datastore datastore,
      final BlockFetcher fetcher, final Identities identities, final Executor executor,
      final LogConfig logConfig, final Clock clock) {
    this(blockstore, datastore, fetcher, identities, executor, logConfig, clock,
        new LogMemory());
  }

  /** A context whose logs' shared heads every node writes ({@link LogFences#NONE}). */
  public ReplicaContext(final Blockstore blockstore, final Datastore datastore,
      final BlockFetcher fetcher, final Identities identities, final Executor executor,
      final LogConfig logConfig, final Clock clock, final LogMemory logMemory) {
    this(blockstore, datastore, fetcher, identities, executor, logConfig, clock, logMemory,
        LogFences.NONE);
  }

  public ReplicaContext {
    Objects.requireNonNull(fences, "fences");
    Objects.requireNonNull(logMemory, "logMemory");
    Objects.requireNonNull(clock, "clock");
    Objects.requireNonNull(blockstore, "blockstore");
    Objects.requireNonNull(datastore, "datastore");
    Objects.requireNonNull(fetcher, "fetcher");
    Objects.requireNonNull(identities, "identities");
    Objects.requireNonNull(executor, "executor");
    Objects.requireNonNull(logConfig, "logConfig");
  }

  /**
   * A block from the blockstore, or fetched (not stored: the caller stores it once it checked
   * it). Completes on the executor.
   */
  CompletableFuture<byte[]> block(final Cid cid) {
    return CompletableFuture.supplyAsync(() -> blockstore.get(cid), executor)
        .thenCompose((Optional<byte[]> held) -> held.map(CompletableFuture::completedFuture)
            .orElseGet(() -> fetcher.fetch(cid).orTimeout(logConfig.fetchTimeout().toMillis(),
                TimeUnit.MILLISECONDS)))
        .thenApplyAsync(bytes -> bytes, executor);
  }
}
