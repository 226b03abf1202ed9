package io.relaypinner.relay.replication;

import java.util.concurrent.atomic.AtomicLong;

/**
 * The bytes of heads waiting in every database's inbox, bounded per database and in total: heads
 * arrive from anyone (pubsub messages, heads exchanges) faster than syncs take them, so what
 * waits must not grow with what a peer sends. Thread-safe.
 *
 * @param perDatabase bytes one database's inbox holds at most
 * @param total bytes all inboxes hold together at most
 */
public record InboxBudget(long perDatabase, long total, AtomicLong used) {
  /** 1 MiB per database, 16 MiB in all. */
  public static InboxBudget defaults() {
    return new InboxBudget(1L << 20, 16L << 20);
  }

  public InboxBudget(final long perDatabase, final long total) {
    this(perDatabase, total, new AtomicLong());
  }

  public InboxBudget {
    if (perDatabase < 1 || total < perDatabase) {
      throw new IllegalArgumentException("inbox budget must be positive, total >= per database");
    }
  }

  /** Takes {@code bytes} from the total budget; false when it is spent. */
  boolean reserve(final long bytes) {
    return Reservations.reserve(used, total, bytes);
  }

  void release(final long bytes) {
    used.addAndGet(-bytes);
  }

  /** Bytes held by all inboxes now. */
  public long usedBytes() {
    return used.get();
  }
}
