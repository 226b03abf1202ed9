package io.relaypinner.relay.coordination;

import io.relaypinner.relay.storage.GcPolicy;
import io.relaypinner.ipfs.datastore.Fence;
import java.util.Objects;
import java.util.Optional;
import java.util.function.BiConsumer;

/**
 * The {@link GcPolicy} of relays sharing their stores (issue 24): GC runs on the relay that holds
 * the GC-leader lease ({@value PostgresCoordination#GC_LEADER} in {@code relay_leases}) only,
 * and, the stores being shared, with {@code StorageGc}'s second look and grace period for every
 * unpinned block. Asking is cheap: the lease is read from the {@link LeaseKeeper}'s memory (it
 * is trusted until shortly before it could expire), no round trip. Deletes go a page at a time,
 * each under the lease's fence ({@link #aroundDeletes}): one round trip per page.
 */
public final class GcLeaderPolicy implements GcPolicy {
  private final LeaseKeeper keeper;
  private final BiConsumer<Fence, Runnable> underFence;

  /**
   * @param underFence runs a page of deletes in a transaction holding the fence's lease row
   *     ({@code PostgresDatastore.underFence}), throwing {@code StaleFenceException} when the
   *     lease is no longer held at the fence's epoch
   */
  GcLeaderPolicy(final LeaseKeeper keeper, final BiConsumer<Fence, Runnable> underFence) {
    this.keeper = Objects.requireNonNull(keeper, "keeper");
    this.underFence = Objects.requireNonNull(underFence, "underFence");
  }

  @Override
  public boolean mayCollect() {
    return keeper.owns(PostgresCoordination.GC_LEADER);
  }

  @Override
  public boolean sharedStores() {
    return true;
  }

  /**
   * The page runs under the GC-leader lease's fence: a leader that paused past its lease (after
   * it judged the blocks) cannot delete them after another relay took the leadership over. A
   * leader that no longer trusts its lease deletes nothing more.
   */
  @Override
  public void aroundDeletes(final Runnable page) {
    final Optional<Fence> fence = keeper.fence(PostgresCoordination.GC_LEADER);
    if (fence.isEmpty()) {
      throw new IllegalStateException("lost the GC-leader lease; nothing more deleted");
    }
    underFence.accept(fence.get(), page);
  }
}
