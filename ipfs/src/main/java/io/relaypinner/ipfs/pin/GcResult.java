package io.relaypinner.ipfs.pin;

import io.relaypinner.multiformats.Cid;
import java.util.List;

/**
 * What one {@link PinStore#gc} run did.
 *
 * @param pins pin roots marked from
 * @param marked distinct blocks reachable from them (kept)
 * @param scanned blocks in the store when the run started
 * @param removed blocks deleted
 * @param pinnedMissing blocks of pinned DAGs found absent (a damaged store: pins are only
 *     recorded complete), the first {@code PinStore.MAX_LISTED_MISSING} of them; their own
 *     children could not be marked
 */
public record GcResult(int pins, long marked, long scanned, long removed,
    List<Cid> pinnedMissing) {
  /** Copies the list. */
  public GcResult {
    pinnedMissing = List.copyOf(pinnedMissing);
  }
}
