package io.relaypinner.relay.gateway;

import io.relaypinner.common.budget.LimitListener;
import io.relaypinner.common.budget.Limits;
import io.relaypinner.common.budget.Resource;
import io.relaypinner.common.budget.Scope;
import io.relaypinner.ipfs.bitswap.NetworkPinner;
import io.relaypinner.ipfs.blockstore.Blocks;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The node-wide total of bytes the gateway's network fallback has in flight: blocks asked for
 * and not yet arrived (room for the largest block each), and the blocks of DAG fetches that
 * have not ended (then the gateway cache, whose budget is the same size by default, takes
 * them over). Every fallback fetch of every request draws from this one pool
 * ({@link NetworkPinner.ByteMeter}), the node budget's {@code gateway_fallback} scope
 * ({@link Resource#DISK}), so N concurrent requests of distinct DAGs hold at most the total
 * between them, not N times the per-request cap; a request that finds no room is answered 503
 * {@code fallback_busy} and counted ({@code relay_ipfs_gateway_limited_total{limit=
 * "fallback_total"}}, and {@code relay_resource_limit_hits_total{scope="gateway_fallback"}}).
 * Thread-safe, lock-free.
 */
public final class FallbackTotal implements NetworkPinner.ByteMeter {
  private final Scope scope;
  private final long maxBytes;
  private final long perBlock;
  private final AtomicLong peak = new AtomicLong();

  /**
   * @param scope the pool: its {@link Resource#DISK} limit is the total (the gateway cache's
   *     budget, {@code RELAY_GATEWAY_CACHE_MAX_BYTES}); a block asked for reserves
   *     {@link Blocks#MAX_BLOCK_SIZE}, or the whole total when it is smaller
   */
  public FallbackTotal(final Scope scope) {
    this.scope = Objects.requireNonNull(scope, "scope");
    this.maxBytes = scope.limits().max(Resource.DISK);
    if (maxBytes < 1 || maxBytes == Limits.UNLIMITED) {
      throw new IllegalArgumentException("the fallback total must be positive and bounded");
    }
    this.perBlock = Math.min(Blocks.MAX_BLOCK_SIZE, maxBytes);
  }

  /** A pool of its own of {@code maxBytes} (tests). */
  public FallbackTotal(final long maxBytes) {
    this(Scope.root("gateway_fallback", Limits.NONE.with(Resource.DISK, maxBytes),
        LimitListener.NONE));
  }

  /** The total. */
  public long maxBytes() {
    return maxBytes;
  }

  /** Bytes in flight now. */
  public long inFlight() {
    return scope.used(Resource.DISK);
  }

  /** The most bytes in flight at once since the start. */
  public long peakInFlight() {
    return peak.get();
  }

  @Override
  public boolean tryTake(final long bytes) {
    if (!scope.tryReserve(Resource.DISK, bytes)) {
      return false;
    }
    peak.accumulateAndGet(inFlight(), Math::max);
    return true;
  }

  @Override
  public void take(final long bytes) {
    scope.force(Resource.DISK, bytes);
    peak.accumulateAndGet(inFlight(), Math::max);
  }

  @Override
  public void give(final long bytes) {
    scope.release(Resource.DISK, bytes);
  }

  @Override
  public long perBlock() {
    return perBlock;
  }
}
