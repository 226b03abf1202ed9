package io.relaypinner.relay.ui;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.List;
import java.util.Map;

/**
 * {@code GET /dashboard/status}: what the status page shows that the other JSON routes do not
 * (docs/http-api.md). No secrets: no token, no key material, no remote addresses of peers.
 *
 * @param connections open libp2p connections, total and by transport ({@code tcp},
 *     {@code websocket}, {@code webrtc}, {@code circuit}, {@code other})
 * @param databases the databases the relay follows or has synced, most entries first (at most
 *     {@link DashboardStatusRoute#MAX_DATABASES})
 * @param databasesTotal how many there are in all
 * @param storage the data directory's file system and the pins
 * @param sync the sync slots and the recent problems
 * @param timestamp ISO 8601 UTC
 */
public record DashboardStatus(Connections connections, List<Database> databases,
    int databasesTotal, Storage storage, Sync sync, String timestamp) {

  public record Connections(int total, Map<String, Integer> byTransport) {}

  /**
   * @param entries entries in the relay's replica, or {@code null} when it holds none (only in
   *     the sync history)
   * @param heads the replica's heads
   * @param missing entries referenced but not fetched yet
   * @param complete the replica holds every entry its heads reach
   * @param lastSyncedAt the last successful sync, or {@code null}
   */
  @JsonInclude(JsonInclude.Include.ALWAYS)
  public record Database(String address, Integer entries, Integer heads, Integer missing,
      Boolean complete, String lastSyncedAt) {}

  /**
   * @param dataDirTotalBytes size of the data directory's file system
   * @param dataDirUsableBytes what is still free there for the relay
   * @param pinnedRoots pinned roots in the pin store
   * @param quotaBytes the storage quota, or {@code null} when there is none
   */
  @JsonInclude(JsonInclude.Include.ALWAYS)
  public record Storage(long dataDirTotalBytes, long dataDirUsableBytes, int pinnedRoots,
      Long quotaBytes) {}

  /** @param recentProblems most recent first */
  public record Sync(int slots, List<Problem> recentProblems) {}

  public record Problem(String at, String kind, String subject, String message) {}
}
