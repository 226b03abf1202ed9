package io.relaypinner.relay.sync;

import java.util.List;
import java.util.Objects;

/**
 * What one sync of one database found, filled by a {@link DatabaseSyncer}. The fields of spec 2.6
 * ({@code receivedUpdate}, {@code fallbackScanUsed}, {@code extractedMediaCids}) go to the
 * {@code POST /pinning/sync} answer; the others feed the statistics of spec 2.4 and the logs.
 *
 * @param dbAddress the database address that was synced, {@code /orbitdb/<manifest CID>}
 * @param entries log entries the relay holds for this database after the sync
 * @param newEntries entries fetched and verified by this sync (0 when it was up to date)
 * @param heads heads of the log after the sync
 * @param receivedUpdate at least one database update event arrived during the sync window
 * @param fallbackScanUsed media CIDs were taken from a full scan because no update arrived in time
 * @param extractedMediaCids media CIDs found in the entries this sync looked at, as text; pins
 *     are reported as they finish through {@link SyncEngine#mediaPinned} (the one route by which
 *     {@code totalPinned} and {@code pinnedMediaCids} of spec 2.4 grow), never in a result
 * @param complete the relay's replica holds every entry its heads reach; only a complete sync
 *     is recorded in the sync history ({@code lastSyncedAt}): a follower's sync on the shared
 *     stores can end before the owner has fetched everything
 */
public record SyncResult(
    String dbAddress,
    long entries,
    long newEntries,
    int heads,
    boolean receivedUpdate,
    boolean fallbackScanUsed,
    List<String> extractedMediaCids,
    boolean complete) {

  public SyncResult {
    Objects.requireNonNull(dbAddress, "dbAddress");
    if (entries < 0 || newEntries < 0 || heads < 0) {
      throw new IllegalArgumentException("negative count in sync result of " + dbAddress);
    }
    extractedMediaCids = List.copyOf(extractedMediaCids);
  }

  /** A complete sync's result. */
  public SyncResult(final String dbAddress, final long entries, final long newEntries,
      final int heads, final boolean receivedUpdate, final boolean fallbackScanUsed,
      final List<String> extractedMediaCids) {
    this(dbAddress, entries, newEntries, heads, receivedUpdate, fallbackScanUsed,
        extractedMediaCids, true);
  }

  /** A sync that found nothing: no entries, no update, no media. */
  public static SyncResult empty(final String dbAddress) {
    return new SyncResult(dbAddress, 0, 0, 0, false, false, List.of());
  }
}
