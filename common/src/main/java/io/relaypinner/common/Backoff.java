package io.relaypinner.common;

import java.time.Duration;
import java.util.Objects;

/**
 * Exponential back-off: after the n-th failure in a row, wait {@code min * 2^(n-1)}, at most
 * {@code max}. The one rule behind every "retry later, twice as late each time" in the modules
 * (store outages, missing log blocks, peer bans, sync resumes, bitswap rebroadcasts, AutoTLS, the
 * deployer's health polls).
 *
 * <p>Immutable and stateless: callers keep their own failure counts (per block, per peer, per
 * database) and ask for the delay of one. No jitter: the callers retry on their own schedule
 * against their own peers or stores, and their tests assert exact delays on a fixed clock.
 *
 * <p>The delay saturates at {@code max} for any failure count (no overflow, however long the
 * streak).
 */
public final class Backoff {
  private final Duration min;
  private final Duration max;
  private final long minMillis;
  private final long maxMillis;

  private Backoff(final Duration min, final Duration max) {
    this.min = min;
    this.max = max;
    this.minMillis = saturatedMillis(min);
    this.maxMillis = saturatedMillis(max);
  }

  private static long saturatedMillis(final Duration value) {
    try {
      return value.toMillis();
    } catch (final ArithmeticException e) {
      return Long.MAX_VALUE;
    }
  }

  /**
   * A back-off from {@code min} (the wait after the first failure) doubling up to {@code max}.
   *
   * @throws IllegalArgumentException unless {@code 0 <= min <= max}
   */
  public static Backoff of(final Duration min, final Duration max) {
    Objects.requireNonNull(min, "min");
    Objects.requireNonNull(max, "max");
    if (min.isNegative() || max.compareTo(min) < 0) {
      throw new IllegalArgumentException("need 0 <= min <= max: " + min + ", " + max);
    }
    return new Backoff(min, max);
  }

  /** The wait after the first failure. */
  public Duration min() {
    return min;
  }

  /** The longest wait. */
  public Duration max() {
    return max;
  }

  /**
   * The wait after the {@code failures}-th failure in a row: {@code min * 2^(failures-1)}, at
   * most {@link #max}.
   *
   * @throws IllegalArgumentException when {@code failures < 1}
   */
  public Duration delay(final int failures) {
    final int doublings = doublings(failures);
    if (min.isZero()) {
      return min;
    }
    // min * 2^d > max exactly when min > floor(max / 2^d) (nanosecond arithmetic, no overflow).
    if (doublings >= Long.SIZE - 1 || min.compareTo(max.dividedBy(1L << doublings)) > 0) {
      return max;
    }
    return min.multipliedBy(1L << doublings);
  }

  /**
   * {@link #delay} in whole milliseconds, computed from {@code min} and {@code max} truncated to
   * milliseconds (at most {@link Long#MAX_VALUE}): allocation-free, for callers that count in
   * milliseconds.
   */
  public long delayMillis(final int failures) {
    final int doublings = doublings(failures);
    if (minMillis == 0) {
      return 0;
    }
    if (doublings >= Long.SIZE - 1 || minMillis > maxMillis >> doublings) {
      return maxMillis;
    }
    return minMillis << doublings;
  }

  private static int doublings(final int failures) {
    if (failures < 1) {
      throw new IllegalArgumentException("failures must be at least 1: " + failures);
    }
    return failures - 1;
  }

  @Override
  public String toString() {
    return "Backoff[" + min + " doubling up to " + max + "]";
  }
}
