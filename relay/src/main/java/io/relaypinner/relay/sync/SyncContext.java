package io.relaypinner.relay.sync;

import java.time.Duration;

/**
 * What the {@link SyncEngine} tells a {@link DatabaseSyncer} about the sync it runs, and what the
 * syncer reports back while it runs. One context per sync; its methods may be called from the
 * syncer's own threads too.
 */
public interface SyncContext {
  /** The database address, {@code /orbitdb/<manifest CID>}. */
  String address();

  /**
   * What started this sync. For {@link SyncTrigger#HTTP} the syncer may also reconnect peers
   * previously seen subscribing to the database's topic (spec 3.5).
   */
  SyncTrigger trigger();

  /**
   * How long the engine lets a sync hold its slot ({@code RELAY_PINNING_SYNC_TIMEOUT_MS}). A
   * syncer that waits for updates before a fallback scan (spec 3.5) should size that window well
   * within it; a sync that takes longer keeps running, but loses its slot.
   */
  Duration timeout();

  /**
   * Counts one sync operation ({@code syncOperations} of spec 2.4, "incremented inside a sync"):
   * call it once the database is open and the work has really begun, so that a sync that fails
   * before it starts is not counted.
   */
  void countOperation();

  /**
   * True once the relay is shutting down. A long sync should check it between steps and stop
   * early by throwing; after a grace period its thread is also interrupted.
   */
  boolean cancelled();
}
