package io.relaypinner.relay.gateway;

import io.relaypinner.multiformats.Cid;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;

/**
 * Where the gateway's network fallback gets blocks it does not hold (the relay wires bitswap in).
 * Both operations store what they fetch in the node's blockstore (unpinned) and fail with a
 * {@link java.util.concurrent.TimeoutException} when the time is up.
 */
public interface NetworkContent {
  /** Whether any peer could be asked now (no peer: the fallback answers 404 at once). */
  boolean hasPeers();

  /** Makes the block of {@code cid} present in the blockstore. */
  CompletableFuture<?> block(Cid cid, Duration timeout);

  /** Makes every block of the DAG under {@code root} present in the blockstore. */
  CompletableFuture<?> dag(Cid root, Duration timeout);

  /**
   * Keeps what is held of the DAG under {@code root} (fetched or cached) in the blockstore until
   * the returned release runs, once, for a response that streams it; this default keeps nothing
   * (content that is not fetched into a cache).
   */
  default Runnable holdDag(final Cid root) {
    return () -> { };
  }
}
