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
 * <p>Bounded, per database and in all: at most {@link #MAX_AWAITING} media CIDs named by
 * incomplete entries are remembered (an entry whose media would exceed it, or the shared {@link
 * CountBudget}, is not remembered: its media is found by the next fallback scan, counted by the
 * caller), and at most {@link #MAX_REMEMBERED} eligible and reported CIDs each (oldest forgotten
 * first, also when the shared budget is spent; a forgotten reported CID could be reported again,
 * which only adds to {@code totalPinned}; a CID that could not be remembered eligible at all is
 * pinned but not reported for this database). {@link #close()} gives everything back.
 * Thread-safe.
 */
final class MediaLedger {
  /** Media CIDs named by incomplete entries, remembered at most. */
  static final int MAX_AWAITING = 10_000;
  /** Eligible (and, separately, reported) media CIDs remembered at most. */
  static final int MAX_REMEMBERED = 10_000;

  private final CountBudget budget;
  private final Map<Cid, Set<Cid>> awaiting = new LinkedHashMap<>();
  private int awaitingCids;
  private final Set<Cid> eligible = new LinkedHashSet<>();
  private final Set<Cid> reported = new LinkedHashSet<>();
  private boolean closed;

  /** A ledger with a budget of its own. */
  MediaLedger() {
    this(CountBudget.media());
  }

  MediaLedger(final CountBudget budget) {
    this.budget = java.util.Objects.requireNonNull(budget, "budget");
  }

  /**
   * An entry naming {@code media} was verified; {@code complete} tells whether its history is
   * complete already (asked under the ledger's lock). Returns the media eligible now (empty when
   * it waits), or null when the ledger or the shared budget is full and the entry was not
   * remembered.
   */
  synchronized List<Cid> onEntry(final Cid entry, final Set<Cid> media,
      final BooleanSupplier complete) {
    if (media.isEmpty()) {
      return List.of();
    }
    // Asked under this ledger's lock: a completion that lands after this answer is handed to
    // onCompleted after it, and finds the entry in awaiting.
    if (complete.getAsBoolean()) {
      // Complete now (a scan after the history completed): no longer awaiting.
      final Set<Cid> waited = awaiting.remove(entry);
      if (waited != null) {
        awaitingCids -= waited.size();
        budget.release(waited.size());
      }
      return makeEligible(media);
    }
    final Set<Cid> known = awaiting.get(entry);
    final Set<Cid> adding = new LinkedHashSet<>(media);
    if (known != null) {
      adding.removeAll(known);
    }
    if (closed || awaitingCids + adding.size() > MAX_AWAITING
        || !budget.reserve(adding.size())) {
      return null;
    }
    awaiting.computeIfAbsent(entry, k -> new LinkedHashSet<>()).addAll(adding);
    awaitingCids += adding.size();
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
        awaitingCids -= media.size();
        budget.release(media.size());
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

  /** Media CIDs this ledger holds (awaiting, eligible and reported). */
  synchronized int heldCids() {
    return awaitingCids + eligible.size() + reported.size();
  }

  /** Gives every CID back to the shared budget; the ledger remembers nothing more. */
  synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    budget.release(heldCids());
    awaiting.clear();
    awaitingCids = 0;
    eligible.clear();
    reported.clear();
  }

  private List<Cid> makeEligible(final Collection<Cid> media) {
    final List<Cid> out = new ArrayList<>(media.size());
    for (final Cid cid : media) {
      remember(eligible, cid);
      out.add(cid);
    }
    return out;
  }

  /**
   * Adds {@code cid} to {@code set} as its newest member: the oldest makes room when the set is
   * at its bound or the shared budget is spent; nothing is added when neither allows it.
   */
  private void remember(final Set<Cid> set, final Cid cid) {
    if (!closed) {
      budget.addNewest(set, cid, MAX_REMEMBERED);
    }
  }
}
