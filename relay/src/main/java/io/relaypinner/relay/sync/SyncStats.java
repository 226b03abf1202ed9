package io.relaypinner.relay.sync;

import java.util.List;

/**
 * The engine's counters for {@code GET /pinning/stats}, spec 2.4 (the route adds the timestamp).
 *
 * @param totalPinned media CIDs pinned since start (in memory)
 * @param syncOperations operations counted inside syncs ({@link SyncContext#countOperation})
 * @param failedSyncs syncs that ended with an error (not counting shutdown)
 * @param pinnedMediaCids the media CIDs pinned since start, most recent last (the most recent
 *     {@link SyncEngine#MAX_LISTED_PINS})
 * @param syncQueue the queue
 */
public record SyncStats(long totalPinned, long syncOperations, long failedSyncs,
    List<String> pinnedMediaCids, SyncQueueStats syncQueue) {

  public SyncStats {
    pinnedMediaCids = List.copyOf(pinnedMediaCids);
  }
}
