package io.relaypinner.relay.bitswap;

import io.relaypinner.ipfs.bitswap.Bitswap;
import io.relaypinner.ipfs.bitswap.NetworkPinner;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.relay.gateway.NetworkContent;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;

/**
 * The gateway's network fallback over bitswap: single blocks with {@link Bitswap#get}, whole
 * DAGs with {@link NetworkPinner#fetch} (bounded like a pin, never pinned).
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

  /** Fetches DAGs of up to 4 GiB. */
  public BitswapNetworkContent(final Bitswap bitswap, final NetworkPinner fetcher) {
    this(bitswap, fetcher, MAX_BYTES);
  }

  /**
   * @param maxBytes largest DAG fetched for one request (the gateway cache's budget: content
   *     the cache could not keep is not fetched); at most 4 GiB
   */
  public BitswapNetworkContent(final Bitswap bitswap, final NetworkPinner fetcher,
      final long maxBytes) {
    if (maxBytes < 1) {
      throw new IllegalArgumentException("maxBytes must be positive");
    }
    this.bitswap = bitswap;
    this.fetcher = fetcher;
    this.maxBytes = Math.min(MAX_BYTES, maxBytes);
  }

  @Override
  public boolean hasPeers() {
    return bitswap.peerCount() > 0;
  }

  @Override
  public CompletableFuture<?> block(final Cid cid, final Duration timeout) {
    return bitswap.get(cid, timeout);
  }

  @Override
  public CompletableFuture<?> dag(final Cid root, final Duration timeout) {
    return fetcher.fetch(root, new NetworkPinner.Limits(CONCURRENCY, MAX_BLOCKS, maxBytes,
        timeout));
  }
}
