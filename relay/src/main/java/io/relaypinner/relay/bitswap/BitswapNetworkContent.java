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
  private static final long MAX_BLOCKS = 100_000;
  private static final long MAX_BYTES = 4L << 30;

  private final Bitswap bitswap;
  private final NetworkPinner fetcher;

  public BitswapNetworkContent(final Bitswap bitswap, final NetworkPinner fetcher) {
    this.bitswap = bitswap;
    this.fetcher = fetcher;
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
    return fetcher.fetch(root, new NetworkPinner.Limits(CONCURRENCY, MAX_BLOCKS, MAX_BYTES,
        timeout));
  }
}
