package io.relaypinner.orbitdb.log;

import io.relaypinner.multiformats.Cid;
import java.lang.ref.Cleaner;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What the logs of one node hold in memory, together: one budget for all of them, so that the
 * number of followed databases does not multiply any bound. Each log takes a {@link Share}.
 *
 * <ul>
 *   <li><b>Verified entries</b>: one LRU of {@link #VERIFIED} (by default) (log, CID) pairs for all
 *       logs; a miss is a lookup of the entry's marker in the datastore, never a fetch.
 *   <li><b>Rejected entries</b>: one LRU of {@link #REJECTED} (by default) (log, CID) pairs, so a
 *       refused block is not fetched and verified again while it is remembered.
 *   <li><b>Incomplete entries</b> (verified, waiting for a parent) and <b>missing blocks</b> (a
 *       log's frontier): at most {@link #INCOMPLETE} and {@link #MISSING} (by default) in
 *       all logs together, and at most half of each in one log, so that one database (a hostile
 *       writer's, or one far behind) cannot take the whole budget.
 * </ul>
 *
 * <p>The totals are kept exact by each log reporting its sizes as they change ({@link
 * Share#report}); a log that is dropped without {@link Share#release()} gives its share back when
 * it is garbage-collected. Thread-safe.
 */
public final class LogMemory {
  /** Verified (log, CID) pairs remembered by default: about 1.6 MiB. */
  public static final int VERIFIED = 16_384;
  /** Rejected (log, CID) pairs remembered by default. */
  public static final int REJECTED = 16_384;
  /** Incomplete entries of all logs by default (about 250 bytes each: 50 MiB at most). */
  public static final int INCOMPLETE = 200_000;
  /** Missing blocks of all logs by default (about 200 bytes each). */
  public static final int MISSING = 20_000;

  private static final Cleaner CLEANER = Cleaner.create();

  private final int verifiedCapacity;
  private final int rejectedCapacity;
  private final int incompleteCapacity;
  private final int missingCapacity;
  private final AtomicInteger ids = new AtomicInteger();
  private final AtomicLong incomplete = new AtomicLong();
  private final AtomicLong missing = new AtomicLong();
  /** Guarded by itself. */
  private final Map<Key, Boolean> verified;
  /** Guarded by itself. */
  private final Map<Key, Boolean> rejected;

  private record Key(int log, Cid cid) { }

  /** The default budget. */
  public LogMemory() {
    this(VERIFIED, REJECTED, INCOMPLETE, MISSING);
  }

  public LogMemory(final int verifiedCapacity, final int rejectedCapacity,
      final int incompleteCapacity, final int missingCapacity) {
    if (verifiedCapacity < 1 || rejectedCapacity < 1 || incompleteCapacity < 2
        || missingCapacity < 2) {
      throw new IllegalArgumentException("log memory capacities must be positive");
    }
    this.verifiedCapacity = verifiedCapacity;
    this.rejectedCapacity = rejectedCapacity;
    this.incompleteCapacity = incompleteCapacity;
    this.missingCapacity = missingCapacity;
    this.verified = lru(verifiedCapacity, true);
    this.rejected = lru(rejectedCapacity, false);
  }

  private static Map<Key, Boolean> lru(final int capacity, final boolean accessOrder) {
    return new LinkedHashMap<>(16, 0.75f, accessOrder) {
      private static final long serialVersionUID = 1L;

      @Override
      protected boolean removeEldestEntry(final Map.Entry<Key, Boolean> eldest) {
        return size() > capacity;
      }
    };
  }

  /** Incomplete entries of all logs now. */
  public long incomplete() {
    return incomplete.get();
  }

  /** Missing blocks of all logs now. */
  public long missing() {
    return missing.get();
  }

  /** Verified (log, CID) pairs remembered now. */
  public int verifiedCached() {
    synchronized (verified) {
      return verified.size();
    }
  }

  /** Rejected (log, CID) pairs remembered now. */
  public int rejectedCached() {
    synchronized (rejected) {
      return rejected.size();
    }
  }

  /** A new log's share, given back by {@link Share#release()} or when {@code owner} is gone. */
  Share share(final Object owner) {
    final Share share = new Share(ids.incrementAndGet());
    CLEANER.register(owner, share::release);
    return share;
  }

  /**
   * One log's part of the budget. {@link #report} and the room checks are called with the log's
   * own lock held, so one log's calls never race each other.
   */
  final class Share {
    private final int id;
    private long reportedIncomplete;
    private long reportedMissing;
    private boolean released;

    private Share(final int id) {
      this.id = id;
    }

    /** The log holds {@code incompleteNow} incomplete entries and {@code missingNow} blocks. */
    synchronized void report(final int incompleteNow, final int missingNow) {
      if (released) {
        return;
      }
      if (incompleteNow != reportedIncomplete) {
        incomplete.addAndGet(incompleteNow - reportedIncomplete);
        reportedIncomplete = incompleteNow;
      }
      if (missingNow != reportedMissing) {
        missing.addAndGet(missingNow - reportedMissing);
        reportedMissing = missingNow;
      }
    }

    /**
     * Null when the log may hold {@code wanted} incomplete entries, else the bound it would
     * break: {@code bound.incomplete} (its half) or {@code bound.incomplete-all} (all logs').
     */
    synchronized String incompleteBound(final int wanted) {
      if (wanted > incompleteCapacity / 2) {
        return "bound.incomplete";
      }
      final long others = incomplete.get() - reportedIncomplete;
      return others + wanted > incompleteCapacity ? "bound.incomplete-all" : null;
    }

    /** The most missing blocks one log may hold: half of all logs' budget. */
    int missingShare() {
      return missingCapacity / 2;
    }

    /** As {@link #incompleteBound} for missing blocks: {@code bound.missing(-all)}. */
    synchronized String missingBound(final int wanted) {
      if (wanted > missingShare()) {
        return "bound.missing";
      }
      final long others = missing.get() - reportedMissing;
      return others + wanted > missingCapacity ? "bound.missing-all" : null;
    }

    boolean isVerified(final Cid cid) {
      synchronized (verified) {
        return verified.get(new Key(id, cid)) != null;
      }
    }

    void verified(final Cid cid) {
      synchronized (verified) {
        verified.put(new Key(id, cid), Boolean.TRUE);
      }
    }

    boolean isRejected(final Cid cid) {
      synchronized (rejected) {
        return rejected.containsKey(new Key(id, cid));
      }
    }

    void rejected(final Cid cid) {
      synchronized (rejected) {
        rejected.put(new Key(id, cid), Boolean.TRUE);
      }
    }

    /** Forgets this log's rejections (its access controller changed). */
    void forgetRejections() {
      synchronized (rejected) {
        rejected.keySet().removeIf(key -> key.log() == id);
      }
    }

    /** Gives the log's incomplete entries and missing blocks back; later reports are ignored. */
    synchronized void release() {
      report(0, 0);
      released = true;
    }
  }
}
