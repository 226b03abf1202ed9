package io.relaypinner.ipfs.bitswap;

import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * How long peers waited for what we served them: for each want answered with its block or HAVE,
 * the time from when it was ready to serve (its want arrived, or the block it waited for did) to
 * when the message carrying the answer was written. Fixed buckets, so its memory never grows;
 * written by the engine's thread, read by any ({@link #snapshot()}).
 */
public final class ServeTimes {
  /** Upper bounds of the buckets, seconds (a last bucket, +Inf, takes the rest). */
  private static final double[] UPPER_BOUNDS = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
      0.25, 0.5, 1, 2.5, 5, 10};

  private final AtomicLongArray counts = new AtomicLongArray(UPPER_BOUNDS.length + 1);
  private final AtomicLong sumNanos = new AtomicLong();

  /** Records one answer that took {@code nanos} (negative, from a clock set back: 0). */
  void record(final long nanos) {
    final long value = Math.max(0, nanos);
    final double seconds = value / 1e9;
    int bucket = 0;
    while (bucket < UPPER_BOUNDS.length && seconds > UPPER_BOUNDS[bucket]) {
      bucket++;
    }
    counts.incrementAndGet(bucket);
    sumNanos.addAndGet(value);
  }

  /** The buckets now. */
  public Snapshot snapshot() {
    final long[] copy = new long[counts.length()];
    for (int i = 0; i < copy.length; i++) {
      copy[i] = counts.get(i);
    }
    return new Snapshot(copy, sumNanos.get() / 1e9);
  }

  /**
   * The serve times recorded so far.
   *
   * @param counts answers per bucket (not cumulative), one per {@link #upperBounds()} entry
   * @param sumSeconds their total time
   */
  public record Snapshot(long[] counts, double sumSeconds) {
    /** Copies the counts. */
    public Snapshot {
      counts = counts.clone();
    }

    @Override
    public long[] counts() {
      return counts.clone();
    }

    /** Upper bounds of the buckets, seconds, the last one {@code +Inf}. */
    public static double[] upperBounds() {
      final double[] bounds = new double[UPPER_BOUNDS.length + 1];
      System.arraycopy(UPPER_BOUNDS, 0, bounds, 0, UPPER_BOUNDS.length);
      bounds[UPPER_BOUNDS.length] = Double.POSITIVE_INFINITY;
      return bounds;
    }

    /** Answers recorded. */
    public long count() {
      long total = 0;
      for (final long c : counts) {
        total += c;
      }
      return total;
    }
  }
}
