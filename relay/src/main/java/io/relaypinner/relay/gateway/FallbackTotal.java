package io.relaypinner.relay.gateway;

import io.relaypinner.ipfs.bitswap.NetworkPinner;
import io.relaypinner.ipfs.blockstore.Blocks;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The node-wide total of bytes the gateway's network fallback has in flight: blocks asked for
 * and not yet arrived (room for the largest block each), and the blocks of DAG fetches that
 * have not ended (then the gateway cache, whose budget is the same size by default, takes
 * them over). Every fallback fetch of every request draws from this one pool
 * ({@link NetworkPinner.ByteMeter}), so N concurrent requests of distinct DAGs hold at most the
 * total between them, not N times the per-request cap; a request that finds no room is answered
 * 503 {@code fallback_busy} and counted ({@code relay_ipfs_gateway_limited_total{limit=
 * "fallback_total"}}). Thread-safe, lock-free.
 *
 * <p>A stop-gap of the gateway's own until the node budget ({@code io.relaypinner.common.budget})
 * gives the fallback a scope to reserve from.
 */
public final class FallbackTotal implements NetworkPinner.ByteMeter {
  private final long maxBytes;
  private final long perBlock;
  private final AtomicLong inFlight = new AtomicLong();
  private final AtomicLong peak = new AtomicLong();

  /**
   * @param maxBytes the total (the gateway cache's budget, {@code RELAY_GATEWAY_CACHE_MAX_BYTES});
   *     a block asked for reserves {@link Blocks#MAX_BLOCK_SIZE}, or the whole total when it is
   *     smaller
   */
  public FallbackTotal(final long maxBytes) {
    if (maxBytes < 1) {
      throw new IllegalArgumentException("the fallback total must be positive");
    }
    this.maxBytes = maxBytes;
    this.perBlock = Math.min(Blocks.MAX_BLOCK_SIZE, maxBytes);
  }

  /** The total. */
  public long maxBytes() {
    return maxBytes;
  }

  /** Bytes in flight now. */
  public long inFlight() {
    return inFlight.get();
  }

  /** The most bytes in flight at once since the start. */
  public long peakInFlight() {
    return peak.get();
  }

  @Override
  public boolean tryTake(final long bytes) {
    while (true) {
      final long now = inFlight.get();
      if (now + bytes > maxBytes) {
        return false;
      }
      if (inFlight.compareAndSet(now, now + bytes)) {
        peak.accumulateAndGet(now + bytes, Math::max);
        return true;
      }
    }
  }

  @Override
  public void take(final long bytes) {
    peak.accumulateAndGet(inFlight.addAndGet(bytes), Math::max);
  }

  @Override
  public void give(final long bytes) {
    inFlight.addAndGet(-bytes);
  }

  @Override
  public long perBlock() {
    return perBlock;
  }
}
