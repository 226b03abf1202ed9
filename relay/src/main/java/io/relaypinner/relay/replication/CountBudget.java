package io.relaypinner.relay.replication;

import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A count that all database sessions take from together, bounded in total: each session bounds
 * what it holds on its own, and this keeps the number of followed databases from multiplying
 * those bounds. Used for the media CIDs of the {@link MediaLedger}s ({@link #media()}), the
 * peers the sessions remember ({@link #peers()}) and the media their logs name ({@link
 * #named()}). Thread-safe.
 *
 * @param total what all sessions hold together at most
 */
record CountBudget(long total, AtomicLong used) {
  /** 200,000 media CIDs in all (about 130 bytes each). */
  static CountBudget media() {
    return new CountBudget(200_000);
  }

  /** 65,536 remembered (database, peer) pairs in all (about 60 bytes each). */
  static CountBudget peers() {
    return new CountBudget(65_536);
  }

  /**
   * 100,000 media CIDs in all that the sessions keep of their logs' last scans (about 100 bytes
   * each), so an explicit sync with nothing new answers without walking the history.
   */
  static CountBudget named() {
    return new CountBudget(100_000);
  }

  CountBudget(final long total) {
    this(total, new AtomicLong());
  }

  /**
   * This budget's total for a heap of {@code maxHeap} bytes: the whole total from 1 GiB of heap,
   * in proportion below (the launcher's 160 MiB: 15.6 %, so 31,250 media CIDs, 10,240 peers and
   * 15,625 named CIDs, ~6 MB when full instead of ~40 MB), at least a 16th. A fresh budget.
   */
  CountBudget forHeap(final long maxHeap) {
    final long gib = 1L << 30;
    final long scaled = maxHeap >= gib ? total : (long) (total * ((double) maxHeap / gib));
    return new CountBudget(Math.max(Math.max(1, total / 16), scaled));
  }

  CountBudget {
    if (total < 1) {
      throw new IllegalArgumentException("budget must be positive");
    }
  }

  /** Takes {@code count} from the budget; false when it would be spent. */
  boolean reserve(final long count) {
    return Reservations.reserve(used, total, count);
  }

  void release(final long count) {
    used.addAndGet(-count);
  }

  /**
   * Adds {@code item} to {@code set} (insertion-ordered) as its newest member, taking one from
   * this budget for a new member: the set's oldest makes room when it holds {@code max} or the
   * budget is spent. Returns false when the item could not be added (budget spent, set empty).
   */
  <T> boolean addNewest(final Set<T> set, final T item, final int max) {
    if (set.remove(item)) {
      set.add(item);
      return true;
    }
    if (set.size() < max && reserve(1)) {
      set.add(item);
      return true;
    }
    if (set.isEmpty()) {
      return false;
    }
    set.remove(set.iterator().next());
    set.add(item);
    return true;
  }

  /** What all sessions hold now. */
  long usedCount() {
    return used.get();
  }
}
