package io.relaypinner.stores;

import io.relaypinner.ipfs.blockstore.StoreUnavailableException;
import java.time.Clock;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Whether a shared store answers, as its calls find it: up until a call fails with the store
 * unavailable, down until a call succeeds again. An outage is told once: its first failed call
 * logs one WARN line, the first call that succeeds after it one INFO line (with the outage's
 * length and failed calls); the failures in between are only counted ({@link #failures()}, the
 * metric {@code relay_store_failures_total}). An outage's length is measured on the injected
 * {@link Clock}. Thread-safe.
 */
public final class StoreAvailability {
  private static final Logger LOG = LoggerFactory.getLogger(StoreAvailability.class);

  private final String store;
  private final Clock clock;
  private final AtomicLong failures = new AtomicLong();
  private final AtomicLong outages = new AtomicLong();
  private volatile boolean up = true;
  private final java.util.List<Runnable> recovered =
      new java.util.concurrent.CopyOnWriteArrayList<>();
  /** Before the store opened, failures are the opener's to report (start-up fails). */
  private volatile boolean opened;
  /** When the current outage began (the clock's millis) and the failures before it. */
  private long downSince;
  private long failuresBefore;

  /** On the system clock: see {@link #StoreAvailability(String, Clock)}. */
  public StoreAvailability(final String store) {
    this(store, Clock.systemUTC());
  }

  /**
   * @param store the store's name as operators know it ({@code s3}, {@code postgres})
   * @param clock what an outage's length is measured on
   */
  public StoreAvailability(final String store, final Clock clock) {
    this.store = store;
    this.clock = Objects.requireNonNull(clock, "clock");
  }

  public String store() {
    return store;
  }

  /** Whether the last call answered (true before any call). */
  public boolean up() {
    return up;
  }

  /** Calls that failed with the store unavailable since start. */
  public long failures() {
    return failures.get();
  }

  /** Outages since start (a failed call after a successful one, or the first). */
  public long outages() {
    return outages.get();
  }

  /**
   * Runs {@code listener} each time an outage ends (on the thread whose call found the store
   * back): retries waiting for the store can run at once instead of at their next back-off.
   */
  public void onRecovered(final Runnable listener) {
    recovered.add(Objects.requireNonNull(listener, "listener"));
  }

  /** The store opened: outages are logged from now on. */
  public void opened() {
    opened = true;
    up = true;
  }

  /** A call answered. */
  public void succeeded() {
    if (up) {
      return;
    }
    final long millis;
    final long failed;
    synchronized (this) {
      if (up) {
        return;
      }
      up = true;
      millis = clock.millis() - downSince;
      failed = failures.get() - failuresBefore;
    }
    LOG.info("{} available again after {} ms ({} calls failed meanwhile)", store, millis, failed);
    for (final Runnable listener : recovered) {
      try {
        listener.run();
      } catch (final RuntimeException e) {
        LOG.warn("{} recovery listener failed: {}", store, e.toString());
      }
    }
  }

  /** A call failed with the store unavailable: counted; the first of an outage is logged. */
  public StoreUnavailableException failed(final StoreUnavailableException e) {
    failures.incrementAndGet();
    if (!up || !opened) {
      return e;
    }
    synchronized (this) {
      if (!up) {
        return e;
      }
      up = false;
      downSince = clock.millis();
      failuresBefore = failures.get() - 1;
    }
    outages.incrementAndGet();
    LOG.warn("{} (routes that need it answer 503 store_unavailable, syncs retry; logged once "
        + "per outage)", e.getMessage());
    return e;
  }
}
