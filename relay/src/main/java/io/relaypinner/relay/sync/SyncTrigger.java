package io.relaypinner.relay.sync;

/** Why a sync of a database started (spec 6: a topic message, or {@code POST /pinning/sync}). */
public enum SyncTrigger {
  /** The relay started following the database's topic (a peer subscribed, or a restart). */
  FOLLOW,
  /** A message arrived on the database's topic. */
  MESSAGE,
  /** {@code POST /pinning/sync}: always runs, cooldown or not. */
  HTTP,
  /** A sync that failed with a shared store unavailable, retried with back-off. */
  RETRY,
  /**
   * This relay took over the database's lease on the shared stores (its owner stopped renewing
   * it): a full sync, queued after one already running (a follower's), cooldown or not.
   */
  TAKEOVER,
  /**
   * A sync that failed (not for a store) runs again when its cooldown ends, then with doubling
   * delays: a database whose writer stays connected but sends nothing new is not left
   * incomplete. Skipped when the database is no longer followed or nobody on its topic can
   * give the missing blocks.
   */
  RESUME
}
