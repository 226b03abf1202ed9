package io.relaypinner.orbitdb.log;

import io.relaypinner.multiformats.Cid;
import io.relaypinner.orbitdb.RejectReason;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What one join did to a log.
 *
 * @param added entries verified and stored by this join, in no particular order
 * @param rejected entries refused, by reason (each CID counted once per join)
 * @param unavailable entry CIDs that could not be fetched, or whose identity block could not
 *     be (left for a later join)
 * @param truncated whether a limit stopped the join; the rest of its frontier is kept and
 *     continued by the next join
 * @param heads the log's heads after the join
 * @param completed entries that became complete during this join (their whole history is
 *     verified), whichever join added them
 * @param complete whether the whole log was complete when the join ended
 * @param historyCompleted this join ended a walk of a history too long to track entry by entry
 *     ({@link OrbitDbLog#isWalkingHistory()}): every verified entry is complete now, and
 *     {@code completed} does not list them
 */
public record JoinResult(List<Entry> added, Map<RejectReason, Integer> rejected,
    List<Cid> unavailable, boolean truncated, Set<Cid> heads, List<Cid> completed,
    boolean complete, boolean historyCompleted) {
  public JoinResult {
    added = List.copyOf(added);
    rejected = Map.copyOf(rejected);
    unavailable = List.copyOf(unavailable);
    heads = Set.copyOf(heads);
    completed = List.copyOf(completed);
  }

  /** Entries rejected in all. */
  public int rejectedCount() {
    return rejected.values().stream().mapToInt(Integer::intValue).sum();
  }
}
