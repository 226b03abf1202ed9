package io.relaypinner.ipfs.bitswap;

import java.util.Map;

/**
 * A snapshot of a {@link Bitswap}'s counters (totals since start) and gauges, for metrics.
 *
 * @param blocksSent blocks we sent to peers
 * @param bytesSent block bytes we sent
 * @param blocksReceived wanted blocks we received and stored
 * @param bytesReceived block bytes of those
 * @param duplicateBlocks blocks that arrived again after we had them (e.g. from a second peer)
 * @param unwantedBlocks blocks nobody here wanted (not stored)
 * @param messagesReceived decoded messages from peers
 * @param messagesSent messages we wrote
 * @param haveSent HAVE presences we sent
 * @param dontHaveSent DONT_HAVE presences we sent
 * @param wantlistEntries entries of all peers' wantlists we hold (sum over peers)
 * @param wantlistPeers peers whose wantlist is not empty
 * @param clientWants CIDs we are fetching now
 * @param rejected messages, blocks and wants refused or lost, by {@link BitswapReject#label()}
 * @param serveTimes how long peers waited for the blocks and HAVEs we sent them ({@link
 *     ServeTimes})
 */
public record BitswapStats(long blocksSent, long bytesSent, long blocksReceived,
    long bytesReceived, long duplicateBlocks, long unwantedBlocks, long messagesReceived,
    long messagesSent, long haveSent, long dontHaveSent, long wantlistEntries, long wantlistPeers,
    long clientWants, Map<String, Long> rejected, ServeTimes.Snapshot serveTimes) {

  /** Copies the map. */
  public BitswapStats {
    rejected = Map.copyOf(rejected);
  }
}
