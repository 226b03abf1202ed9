package io.relaypinner.relay.replication;

import io.relaypinner.multiformats.Cid;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.BooleanSupplier;

/**
 * Which media one database may report pinned: a media CID becomes <em>eligible</em> once an entry
 * naming it is complete in this database's log (the entry and its whole history are verified and
 * stored), and is reported at most once per database, once its pin finished. Another database
 * completing the same CID makes it eligible there, never here.
 *
 * <p>Bounded: at most {@link #MAX_AWAITING} incomplete entries with media are remembered (beyond
 * that their media is found by the next fallback scan, counted by the caller), and at most
 * {@link #MAX_REMEMBERED} eligible and reported CIDs each (oldest forgotten first; a forgotten
 * reported CID could be reported again, which only adds to {@code totalPinned}). Thread-safe.
 */
final class MediaLedger {
  /** Incomplete entries naming media remembered at most. */
  static final int MAX_AWAITING = 10_000;
  /** Eligible (and, separately, reported) media CIDs remembered at most. */
  static final int MAX_REMEMBERED = 10_000;

  private final Map<Cid, Set<Cid>> awaiting = new LinkedHashMap<>();
  private final Set<Cid> eligible = new LinkedHashSet<>();
  private final Set<Cid> reported = new LinkedHashSet<>();

  /**
   * An entry naming {@code media} was verified; {@code complete} tells whether its history is
   * complete already (asked under the ledger's lock). Returns the media eligible now (empty when it waits), or null when the
   * ledger is full and the entry was not remembered.
   */
  synchronized List<Cid> onEntry(final Cid entry, final Set<Cid> media,
      final BooleanSupplier complete) {
    if (media.isEmpty()) {
      return List.of();
    }
    // Asked under this ledger's lock: a completion that lands after this answer is handed to
    // onCompleted after it, and finds the entry in awaiting.
    if (complete.getAsBoolean()) {
      return makeEligible(media);
    }
    if (awaiting.size() >= MAX_AWAITING && !awaiting.containsKey(entry)) {
      return null;
    }
    awaiting.computeIfAbsent(entry, k -> new LinkedHashSet<>()).addAll(media);
    return List.of();
  }

  /** Entries of the log became complete: the media they name is eligible now (returned). */
  synchronized List<Cid> onCompleted(final Collection<Cid> entries) {
    if (awaiting.isEmpty()) {
      return List.of();
    }
    final List<Cid> out = new ArrayList<>();
    for (final Cid entry : entries) {
      final Set<Cid> media = awaiting.remove(entry);
      if (media != null) {
        out.addAll(makeEligible(media));
      }
    }
    return out;
  }

  /** Marks {@code media} reported for this database; false when it is not eligible or was. */
  synchronized boolean report(final Cid media) {
    if (!eligible.contains(media) || reported.contains(media)) {
      return false;
    }
    remember(reported, media);
    return true;
  }

  synchronized boolean isEligible(final Cid media) {
    return eligible.contains(media);
  }

  synchronized int awaitingCount() {
    return awaiting.size();
  }

  private List<Cid> makeEligible(final Collection<Cid> media) {
    final List<Cid> out = new ArrayList<>(media.size());
    for (final Cid cid : media) {
      remember(eligible, cid);
      out.add(cid);
    }
    return out;
  }

  private static void remember(final Set<Cid> set, final Cid cid) {
    set.remove(cid);
    set.add(cid);
    if (set.size() > MAX_REMEMBERED) {
      set.remove(set.iterator().next());
    }
  }
}
