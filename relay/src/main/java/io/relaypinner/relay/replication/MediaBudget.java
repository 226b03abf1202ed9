package io.relaypinner.relay.replication;

import java.util.concurrent.atomic.AtomicLong;

/**
 * The media CIDs every database's {@link MediaLedger} remembers, bounded in total: each ledger
 * is bounded on its own, and this keeps the number of followed databases from multiplying those
 * bounds. Thread-safe.
 *
 * @param total media CIDs all ledgers hold together at most (awaiting, eligible and reported)
 */
record MediaBudget(long total, AtomicLong used) {
  /** 200,000 CIDs in all (about 130 bytes each). */
  static MediaBudget defaults() {
    return new MediaBudget(200_000);
  }

  MediaBudget(final long total) {
    this(total, new AtomicLong());
  }

  MediaBudget {
    if (total < 1) {
      throw new IllegalArgumentException("media budget must be positive");
    }
  }

  /** Takes {@code count} CIDs from the budget; false when it would be spent. */
  boolean reserve(final long count) {
    return Reservations.reserve(used, total, count);
  }

  void release(final long count) {
    used.addAndGet(-count);
  }

  /** CIDs held by all ledgers now. */
  long usedCids() {
    return used.get();
  }
}
