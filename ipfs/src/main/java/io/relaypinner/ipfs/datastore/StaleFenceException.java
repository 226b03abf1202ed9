package io.relaypinner.ipfs.datastore;

import io.relaypinner.ipfs.blockstore.StoreUnavailableException;

/**
 * A fenced write was refused: its {@link Fence}'s lease is no longer held at that epoch (another
 * node took it over). Nothing was written. It is a {@link StoreUnavailableException}, so callers
 * treat it as they treat a lost lease: the work stops and is retried (as a follower). Not an
 * outage: the store answered.
 */
public final class StaleFenceException extends StoreUnavailableException {
  private static final long serialVersionUID = 1L;

  private final transient Fence fence;

  public StaleFenceException(final String store, final Fence fence) {
    super(store, "the lease " + fence.name() + " is no longer held by " + fence.holder()
        + " at epoch " + fence.epoch() + "; write refused", null);
    this.fence = fence;
  }

  /** The fence that was refused. */
  public Fence fence() {
    return fence;
  }
}
