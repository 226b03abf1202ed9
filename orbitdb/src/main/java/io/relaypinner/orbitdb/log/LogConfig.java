package io.relaypinner.orbitdb.log;

import java.time.Duration;
import java.util.Objects;

/**
 * Limits of one log's synchronisation.
 *
 * @param maxConcurrentFetches entry blocks fetched at once by one join
 * @param maxEntriesPerJoin entries a join processes before it stops and leaves the rest of its
 *     frontier for the next join (a log with more entries than this takes several)
 * @param maxDepth how far back (in {@code next}/{@code refs} hops) from the joined head a join
 *     follows links
 * @param fetchTimeout how long one block fetch may take
 * @param stateScope empty: the log's state is this node's alone; otherwise the name of this node
 *     among several sharing one datastore (each keeps its own markers, count, frontier and heads
 *     under it, and writes its heads to the shared heads key too, see
 *     {@link OrbitDbLog#storedHeads()})
 */
public record LogConfig(int maxConcurrentFetches, int maxEntriesPerJoin, int maxDepth,
    Duration fetchTimeout, String stateScope) {
  /**
   * 16 fetches, 100,000 entries and depth per join, 30 s per fetch. What logs remember in memory
   * (verified and rejected entries, incomplete entries, missing blocks) is the node's
   * {@link LogMemory}, shared by all its logs.
   */
  public static final LogConfig DEFAULT =
      new LogConfig(16, 100_000, 100_000, Duration.ofSeconds(30));

  /** A log of this node alone. */
  public LogConfig(final int maxConcurrentFetches, final int maxEntriesPerJoin,
      final int maxDepth, final Duration fetchTimeout) {
    this(maxConcurrentFetches, maxEntriesPerJoin, maxDepth, fetchTimeout, "");
  }

  public LogConfig {
    Objects.requireNonNull(stateScope, "stateScope");
    if (!stateScope.matches("[A-Za-z0-9]{0,128}")) {
      throw new IllegalArgumentException("stateScope must be up to 128 letters and digits");
    }
    Objects.requireNonNull(fetchTimeout, "fetchTimeout");
    if (maxConcurrentFetches < 1 || maxEntriesPerJoin < 1 || maxDepth < 1) {
      throw new IllegalArgumentException("log limits must be positive");
    }
    if (fetchTimeout.isNegative() || fetchTimeout.isZero()) {
      throw new IllegalArgumentException("fetchTimeout must be positive");
    }
  }

  public LogConfig withMaxEntriesPerJoin(final int value) {
    return new LogConfig(maxConcurrentFetches, value, maxDepth, fetchTimeout, stateScope);
  }

  public LogConfig withMaxDepth(final int value) {
    return new LogConfig(maxConcurrentFetches, maxEntriesPerJoin, value, fetchTimeout,
        stateScope);
  }

  public LogConfig withMaxConcurrentFetches(final int value) {
    return new LogConfig(value, maxEntriesPerJoin, maxDepth, fetchTimeout, stateScope);
  }

  /** The log's state scoped to this node among several on one datastore ({@code stateScope}). */
  public LogConfig withStateScope(final String value) {
    return new LogConfig(maxConcurrentFetches, maxEntriesPerJoin, maxDepth, fetchTimeout, value);
  }
}
