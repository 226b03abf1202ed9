package io.relaypinner.relay.coordination;

import io.relaypinner.relay.storage.GcPolicy;
import java.util.Objects;

/**
 * The {@link GcPolicy} of relays sharing their stores (issue 24): GC runs on the relay that holds
 * the GC-leader lease ({@value PostgresCoordination#GC_LEADER} in {@code relay_leases}) only,
 * and, the stores being shared, with {@code StorageGc}'s second look and grace period for every
 * unpinned block. Asking is cheap: the lease is read from the {@link LeaseKeeper}'s memory (it
 * is trusted until shortly before it could expire), no round trip.
 */
public final class GcLeaderPolicy implements GcPolicy {
  private final LeaseKeeper keeper;

  GcLeaderPolicy(final LeaseKeeper keeper) {
    this.keeper = Objects.requireNonNull(keeper, "keeper");
  }

  @Override
  public boolean mayCollect() {
    return keeper.owns(PostgresCoordination.GC_LEADER);
  }

  @Override
  public boolean sharedStores() {
    return true;
  }
}
