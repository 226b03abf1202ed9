package io.relaypinner.orbitdb.log;

import io.relaypinner.common.Backoff;
import io.relaypinner.multiformats.Cid;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.IntSupplier;
import java.util.function.Predicate;

/**
 * A log's frontier ({@link OrbitDbLog#missing()}): the blocks named by verified entries or peers'
 * heads and not verified yet, each with its retry schedule (exponential back-off from
 * {@link #RETRY_MIN} to {@link #RETRY_MAX}), within the log's {@link LogMemory} budget of missing
 * blocks; and whether the log walks a history with this frontier alone ({@link #isWalking()}),
 * with the blocks of the frontier no verified entry names then.
 *
 * <p>Not thread-safe: the log's lock guards it. Owned by the {@link LogGraph}, whose incomplete
 * entries it reports to the budget with its own blocks.
 */
final class Frontier {
  /** First retry delay of a block whose fetch failed. */
  static final Duration RETRY_MIN = Duration.ofSeconds(1);
  /** Longest retry delay of a block whose fetch keeps failing. */
  static final Duration RETRY_MAX = Duration.ofMinutes(2);
  private static final Backoff RETRY = Backoff.of(RETRY_MIN, RETRY_MAX);

  private final LogMemory.Share memory;
  private final Counters counters;
  /** The log's incomplete entries now, reported to the budget with the missing blocks. */
  private final IntSupplier incomplete;
  /** Blocks named and not verified, with their retry schedule. */
  private Map<Cid, Retry> missing = new LinkedHashMap<>();
  /**
   * While the log walks a history: the blocks of the frontier that no verified entry names (a
   * peer's head whose fetch failed), each a head once verified. Otherwise empty.
   */
  private Set<Cid> unnamed = new HashSet<>();
  /** The log walks a history too long to track entry by entry. */
  private boolean walking;
  /** Whether {@link #walking} changed since it was last written. */
  private boolean walkingDirty;

  /** When a missing block may be fetched again. */
  record Retry(int attempts, long notBeforeMillis) {
    static Retry now() {
      return new Retry(0, Long.MIN_VALUE);
    }

    Retry failed(final long nowMillis) {
      return new Retry(attempts + 1, nowMillis + RETRY.delayMillis(attempts + 1));
    }
  }

  /**
   * The blocks a join starting now fetches ({@code due}) and how many wait for their back-off
   * ({@code deferred}).
   */
  record Due(List<Cid> due, int deferred) {}

  Frontier(final LogMemory.Share memory, final Counters counters,
      final IntSupplier incomplete) {
    this.memory = memory;
    this.counters = counters;
    this.incomplete = incomplete;
  }

  int size() {
    return missing.size();
  }

  boolean isEmpty() {
    return missing.isEmpty();
  }

  boolean contains(final Cid cid) {
    return missing.containsKey(cid);
  }

  /** The blocks, in the order they were put on the frontier (a live view). */
  Set<Cid> blocks() {
    return missing.keySet();
  }

  /**
   * Puts {@code cid} on the frontier if this log's and all logs' budget of missing blocks allow,
   * else counts the bound.
   */
  void add(final Cid cid, final Retry retry) {
    report();
    final String bound = memory.missingBound(missing.size() + 1);
    if (bound == null) {
      missing.put(cid, retry);
      if (walking) {
        // Not named by a verified entry (those are put on the frontier by the graph's link).
        unnamed.add(cid);
      }
      report();
    } else {
      counters.count(bound);
    }
  }

  /**
   * A verified entry names {@code cid}, absent: it goes on the frontier, due now, unless it is
   * there already or the budget is spent ({@code bounded}); it is named from now on.
   */
  void named(final Cid cid, final boolean bounded) {
    if (!missing.containsKey(cid) && (!bounded || memory.missingBound(missing.size() + 1)
        == null)) {
      missing.put(cid, Retry.now());
    }
    unnamed.remove(cid);
  }

  /**
   * {@code cid} was verified: it leaves the frontier. Returns whether it was on it and named by
   * a verified entry (while the log walks a history, the graph tells that from here).
   */
  boolean verified(final Cid cid) {
    return missing.remove(cid) != null && !unnamed.remove(cid);
  }

  /** {@code cid} was refused: it leaves the frontier, nothing more can come of it. */
  void refused(final Cid cid) {
    missing.remove(cid);
    unnamed.remove(cid);
  }

  /** A fetch of {@code cid} failed (or a bound refused it): its back-off grows. */
  void failed(final Cid cid, final long nowMillis) {
    final Retry retry = missing.get(cid);
    if (retry != null) {
      missing.put(cid, retry.failed(nowMillis));
    } else {
      add(cid, Retry.now().failed(nowMillis));
    }
  }

  /**
   * A store could not be reached for {@code cid}: it is tried again after {@link #RETRY_MIN},
   * without growing its back-off (the peer is not at fault).
   */
  void storeDown(final Cid cid, final long nowMillis) {
    final Retry retry = missing.get(cid);
    final Retry next = new Retry(retry == null ? 0 : retry.attempts(),
        nowMillis + RETRY_MIN.toMillis());
    if (retry != null) {
      missing.put(cid, next);
    } else {
      add(cid, next);
    }
  }

  /** The blocks whose back-off has passed at {@code nowMillis}, and how many wait still. */
  Due due(final long nowMillis) {
    int deferred = 0;
    final List<Cid> due = new ArrayList<>();
    for (final Map.Entry<Cid, Retry> e : missing.entrySet()) {
      if (e.getValue().notBeforeMillis() > nowMillis) {
        deferred++;
      } else {
        due.add(e.getKey());
      }
    }
    return new Due(due, deferred);
  }

  /** Makes every block due now, its attempts kept. */
  void retryAllNow() {
    missing.replaceAll((cid, retry) -> new Retry(retry.attempts(), Long.MIN_VALUE));
  }

  /**
   * The log's stored frontier, due now: up to the log's share of the budget (it was within the
   * bounds when written), whole while a history is walked (which ends when it is empty).
   *
   * @param wanted whether a block within the share goes back on the frontier
   */
  void restore(final Collection<Cid> pending, final Predicate<Cid> wanted) {
    for (final Cid cid : pending) {
      if ((walking || missing.size() < memory.missingShare()) && wanted.test(cid)) {
        missing.putIfAbsent(cid, Retry.now());
      }
    }
  }

  /** The stored state walks a history; {@code unnamedBlocks} is its {@code walk} record. */
  void restoreWalk(final Collection<Cid> unnamedBlocks) {
    walking = true;
    unnamed.addAll(unnamedBlocks);
  }

  boolean isWalking() {
    return walking;
  }

  /**
   * The log forgets its incomplete entries and walks its history with this frontier alone.
   *
   * @param waitedOn the blocks its incomplete entries wait on (a block of the frontier is named
   *     by a verified entry exactly when one waits on it)
   * @param incompleteEntries the incomplete entries (verified, waiting for a parent)
   */
  void beginWalk(final Set<Cid> waitedOn, final Set<Cid> incompleteEntries) {
    // Every block an incomplete entry waits on is verified and incomplete, or on the frontier;
    // one left off it (restored over a smaller share) goes back, or the walk could end early.
    for (final Cid block : waitedOn) {
      if (!incompleteEntries.contains(block) && !missing.containsKey(block)) {
        missing.put(block, Retry.now());
      }
    }
    unnamed = new HashSet<>(missing.keySet());
    unnamed.removeAll(waitedOn);
    walking = true;
    walkingDirty = true;
  }

  /**
   * Ends the walk if the frontier is empty: every block a verified entry names is verified or
   * refused, so all are complete. Returns whether it ended now.
   */
  boolean endWalkIfDone() {
    if (!walking || !missing.isEmpty()) {
      return false;
    }
    walking = false;
    walkingDirty = true;
    return true;
  }

  /** Whether the walk began or ended since the state was last written. */
  boolean walkChanged() {
    return walkingDirty;
  }

  /** The {@code walk} record to write: the unnamed blocks while walking, else null. */
  Set<Cid> walkRecord() {
    return walking ? unnamed : null;
  }

  /** The state was written. */
  void written() {
    walkingDirty = false;
  }

  /** Tells the node's {@link LogMemory} this log's incomplete entries and missing blocks. */
  void report() {
    memory.report(incomplete.getAsInt(), missing.size());
  }

  /** Replaces the empty tables by new ones: a hash table never shrinks. */
  void compact() {
    if (missing.isEmpty()) {
      missing = new LinkedHashMap<>();
    }
    if (unnamed.isEmpty()) {
      unnamed = new HashSet<>();
    }
  }
}
