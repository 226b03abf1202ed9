package io.relaypinner.relay.replication;

import java.util.concurrent.atomic.AtomicLong;

/** Taking an amount from a shared total without a lock (the replication budgets' one path). */
final class Reservations {
  private Reservations() {}

  /** Adds {@code amount} to {@code used} unless that would pass {@code total}; false then. */
  static boolean reserve(final AtomicLong used, final long total, final long amount) {
    while (true) {
      final long now = used.get();
      if (now + amount > total) {
        return false;
      }
      if (used.compareAndSet(now, now + amount)) {
        return true;
      }
    }
  }
}
