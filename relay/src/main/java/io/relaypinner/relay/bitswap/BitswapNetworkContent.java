package io.relaypinner.relay.bitswap;

import io.relaypinner.ipfs.bitswap.Bitswap;
import io.relaypinner.ipfs.bitswap.FetchRefusedException;
import io.relaypinner.ipfs.bitswap.NetworkPinner;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.relay.gateway.NetworkContent;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;

/**
 * The gateway's network fallback over bitswap: single blocks with {@link Bitswap#get}, whole
 * DAGs with {@link NetworkPinner#fetch} (bounded like a pin, never pinned). Every fetch draws the
 * bytes it has in flight from one node-wide {@link NetworkPinner.ByteMeter} (the gateway's
 * {@link io.relaypinner.relay.gateway.FallbackTotal}): a single block holds room for the largest
 * block until it arrived; a DAG fetch holds its blocks until it ends.
 */
public final class BitswapNetworkContent implements NetworkContent {
  /** Concurrent block fetches of one gateway request. */
  private static final int CONCURRENCY = 16;
  /** Largest DAG the gateway fetches for one request: 4 GiB in at most 100,000 blocks. */
  public static final long MAX_BLOCKS = 100_000;
  private static final long MAX_BYTES = 4L << 30;

  private final Bitswap bitswap;
  private final NetworkPinner fetcher;
  private final long maxBytes;
  private final NetworkPinner.ByteMeter total;

  /** Fetches DAGs of up to 4 GiB, with no total over concurrent fetches. */
  public BitswapNetworkContent(final Bitswap bitswap, final NetworkPinner fetcher) {
    this(bitswap, fetcher, MAX_BYTES, NetworkPinner.ByteMeter.UNLIMITED);
  }

  /**
   * @param maxBytes largest DAG fetched for one request (the gateway cache's budget: content
   *     the cache could not keep is not fetched); at most 4 GiB
   * @param total what all fetches in flight draw from (the node-wide total)
   */
  public BitswapNetworkContent(final Bitswap bitswap, final NetworkPinner fetcher,
      final long maxBytes, final NetworkPinner.ByteMeter total) {
    if (maxBytes < 1) {
      throw new IllegalArgumentException("maxBytes must be positive");
    }
    this.bitswap = bitswap;
    this.fetcher = fetcher;
    this.maxBytes = Math.min(MAX_BYTES, maxBytes);
    this.total = Objects.requireNonNull(total, "total");
  }

  @Override
  public boolean hasPeers() {
    return bitswap.peerCount() > 0;
  }

  @Override
  public CompletableFuture<?> block(final Cid cid, final Duration timeout) {
    final long reserved = total.perBlock();
    if (!total.tryTake(reserved)) {
      return CompletableFuture.failedFuture(new FetchRefusedException("fetching " + cid
          + " would pass the bytes all fetches may have in flight"));
    }
    // Held until the block arrived (or the fetch failed): the cache then takes it over.
    return bitswap.get(cid, timeout).whenComplete((block, error) -> total.give(reserved));
  }

  @Override
  public CompletableFuture<?> dag(final Cid root, final Duration timeout) {
    return fetcher.fetch(root, new NetworkPinner.Limits(CONCURRENCY, MAX_BLOCKS, maxBytes,
        timeout), total);
  }
}
