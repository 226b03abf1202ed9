package io.relaypinner.relay.sync;

/**
 * Does the work of one sync of one database (spec 3.5): open the database, exchange heads, wait for
 * updates or run a fallback scan, extract media CIDs and enqueue their pins. Implemented by OrbitDB
 * replication ({@code ReplicationSyncer}).
 *
 * <p>The {@link SyncEngine} calls {@link #sync} on one of its worker threads (never an event loop),
 * at most once at a time per address and at most {@code RELAY_SYNC_SLOTS} at a time in total
 * (plus syncs that outlived their timeout, see {@link SyncEngine}). The call may block. It must
 * stop soon after its thread is interrupted (throwing {@link InterruptedException} or any other
 * exception) or after {@link SyncContext#cancelled()} turns true: that is how shutdown ends it.
 */
@FunctionalInterface
public interface DatabaseSyncer {
  /**
   * Syncs {@code context.address()}.
   *
   * @return what the sync found; {@link SyncResult#dbAddress()} must be the context's address
   * @throws InterruptedException when interrupted (shutdown)
   * @throws Exception when the sync failed: counted in {@code failedSyncs}, answered 500
   *     {@code sync_failed} to a waiting {@code POST /pinning/sync}, and the topic enters cooldown
   */
  SyncResult sync(SyncContext context) throws Exception;
}
