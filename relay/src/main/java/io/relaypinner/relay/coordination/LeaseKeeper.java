package io.relaypinner.relay.coordination;

import io.relaypinner.ipfs.blockstore.StoreUnavailableException;
import io.relaypinner.ipfs.datastore.Fence;
import io.relaypinner.relay.pubsub.OrbitDbTopics;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link DatabaseOwnership} on leases with a time to live (PostgreSQL's {@code relay_leases}):
 * each {@link #tick} (every {@code ttl / 3}) renews the leases this relay holds in one statement
 * and tries to take the wanted names it does not hold in another (two round trips per tick
 * however many databases). A holder that dies stops renewing, so its
 * leases expire after {@code ttl} and the next tick of another relay that wants them takes them:
 * ownership moves within {@code ttl} plus one tick period.
 *
 * <p>This relay trusts a lease only until {@code ttl} minus a tenth after the start of the last
 * statement that took or renewed it, measured on a monotonic clock (never the wall clock, which
 * an NTP step or an operator can move back and so stretch the trust): PostgreSQL measures the
 * expiry from a later instant on its own clock, so a relay that cannot renew (PostgreSQL down,
 * network cut) stops acting as the owner before anyone else can take over. The wall
 * {@link Clock} only translates the end of the trust for {@link #ownedUntil}. Trust protects
 * decisions, not a write already under way when the relay paused past its lease: each lease
 * also has an epoch (new at each takeover), and writes that must be the owner's alone are
 * fenced by it ({@link #fence}). Engine: no
 * threads, injected clocks; thread-safe.
 */
public final class LeaseKeeper implements DatabaseOwnership {
  private static final Logger LOG = LoggerFactory.getLogger(LeaseKeeper.class);

  /**
   * Names wanted at most: every followed database ({@link OrbitDbTopics#MAX_TOPICS}) and its
   * access controller's, and the GC leadership. Renewing them all is still one statement.
   */
  public static final int MAX_WANTED = 2 * OrbitDbTopics.MAX_TOPICS + 16;

  /** The lease store (PostgreSQL's {@code relay_leases}, or a fake in tests). */
  public interface Leases {
    /**
     * Takes or renews each name in one round trip; returns those held now with their epochs (a
     * renewal keeps the epoch, a takeover or a retake after expiry gets a higher one).
     */
    Map<String, Long> tryAcquire(Collection<String> names);

    /** Renews the unexpired leases of this holder among {@code names}; those, with epochs. */
    Map<String, Long> renew(Collection<String> names);

    void release(String name);

    Duration ttl();

    /** This relay's name in the table (the holder its fences name). */
    String holder();
  }

  private final Leases leases;
  private final Clock clock;
  private final LongSupplier monotonicNanos;
  private final long trustMillis;
  private final Set<String> wanted = new LinkedHashSet<>();
  private final Set<String> dropped = new LinkedHashSet<>();
  /** Held names: trusted until this time (monotonic millis). */
  private final Map<String, Long> validUntil = new HashMap<>();
  /** Held names: the epoch they were taken at (their fencing token). */
  private final Map<String, Long> epochs = new HashMap<>();
  /** Standby names: not taken before this time (monotonic millis). */
  private final Map<String, Long> notBefore = new HashMap<>();
  private final AtomicLong failures = new AtomicLong();
  private final AtomicLong acquired = new AtomicLong();
  private final AtomicLong lost = new AtomicLong();
  private volatile Consumer<String> listener = name -> { };
  /** Failed rounds when the last outage ended: the first failure of an outage is logged. */
  private volatile long failuresLogged;

  /** Trust measured on {@link System#nanoTime()}. */
  public LeaseKeeper(final Leases leases, final Clock clock) {
    this(leases, clock, System::nanoTime);
  }

  /**
   * @param clock the wall clock, for {@link #ownedUntil} only
   * @param monotonicNanos what the trust is measured on
   */
  LeaseKeeper(final Leases leases, final Clock clock, final LongSupplier monotonicNanos) {
    this.leases = Objects.requireNonNull(leases, "leases");
    this.clock = Objects.requireNonNull(clock, "clock");
    this.monotonicNanos = Objects.requireNonNull(monotonicNanos, "monotonicNanos");
    this.trustMillis = leases.ttl().toMillis() - leases.ttl().toMillis() / 10;
  }

  private long now() {
    return monotonicNanos.getAsLong() / 1_000_000;
  }

  /** How often {@link #tick} should run. */
  public Duration tickPeriod() {
    return leases.ttl().dividedBy(3);
  }

  @Override
  public synchronized void want(final String name) {
    if (wanted.contains(name)) {
      return;
    }
    if (wanted.size() >= MAX_WANTED) {
      LOG.warn("not taking {}: {} names wanted already", name, MAX_WANTED);
      return;
    }
    dropped.remove(name);
    wanted.add(name);
  }

  @Override
  public synchronized void standBy(final String name) {
    if (wanted.contains(name)) {
      return;
    }
    want(name);
    if (wanted.contains(name)) {
      notBefore.put(name, now() + leases.ttl().toMillis());
    }
  }

  @Override
  public synchronized boolean wants(final String name) {
    return wanted.contains(name);
  }

  @Override
  public synchronized void drop(final String name) {
    notBefore.remove(name);
    if (wanted.remove(name) && validUntil.remove(name) != null) {
      epochs.remove(name);
      dropped.add(name);
    }
  }

  @Override
  public synchronized boolean owns(final String name) {
    final Long until = validUntil.get(name);
    return until != null && now() < until;
  }

  /**
   * The end of the lease's trust period unless it is renewed, as wall-clock millis (what is
   * left on the monotonic clock, from now on the wall clock): {@link #owns} turns false then.
   */
  @Override
  public synchronized long ownedUntil(final String name) {
    final Long until = validUntil.get(name);
    final long left = until == null ? 0 : until - now();
    return left > 0 ? clock.millis() + left : Long.MIN_VALUE;
  }

  /**
   * The lease's fencing token while it is trusted ({@link #owns}): a write fenced by it lands
   * only while PostgreSQL still has this relay holding {@code name} at that epoch.
   */
  @Override
  public synchronized Optional<Fence> fence(final String name) {
    final Long epoch = epochs.get(name);
    return owns(name) && epoch != null
        ? Optional.of(new Fence(name, leases.holder(), epoch)) : Optional.empty();
  }

  @Override
  public void onAcquired(final Consumer<String> listener) {
    this.listener = Objects.requireNonNull(listener, "listener");
  }

  /** Names this relay owns now. */
  public synchronized List<String> owned() {
    final long now = now();
    final List<String> out = new ArrayList<>();
    validUntil.forEach((name, until) -> {
      if (now < until) {
        out.add(name);
      }
    });
    return out;
  }

  /** Renews, takes and gives up leases (one round); never throws for a store outage. */
  public void tick() {
    final List<String> release;
    final List<String> held;
    final List<String> toTake;
    synchronized (this) {
      release = new ArrayList<>(dropped);
      dropped.clear();
      held = new ArrayList<>(validUntil.keySet());
      toTake = new ArrayList<>();
      final long now = now();
      for (final String name : wanted) {
        final Long standby = notBefore.get(name);
        if (!validUntil.containsKey(name) && (standby == null || now >= standby)) {
          toTake.add(name);
        }
      }
    }
    final long failed = failures.get();
    try {
      for (final String name : release) {
        leases.release(name);
      }
      if (!held.isEmpty()) {
        final long start = now();
        final Map<String, Long> renewed = leases.renew(held);
        synchronized (this) {
          for (final String name : held) {
            final Long epoch = renewed.get(name);
            if (epoch != null && epoch.equals(epochs.get(name)) && wanted.contains(name)) {
              validUntil.put(name, start + trustMillis);
            } else if (validUntil.remove(name) != null) {
              epochs.remove(name);
              lost.incrementAndGet();
              LOG.warn("lost the lease on {} (it expired before it was renewed)", name);
              if (wanted.contains(name)) {
                // Taken again below if nobody else took it meanwhile (one holder at a time).
                toTake.add(name);
              }
            }
          }
        }
      }
      final long start = now();
      final Map<String, Long> taken = toTake.isEmpty() ? Map.of() : leases.tryAcquire(toTake);
      for (final String name : toTake) {
        final Long epoch = taken.get(name);
        if (epoch == null) {
          continue;
        }
        synchronized (this) {
          if (!wanted.contains(name)) {
            dropped.add(name);
            continue;
          }
          validUntil.put(name, start + trustMillis);
          epochs.put(name, epoch);
        }
        acquired.incrementAndGet();
        LOG.info("this relay now holds the lease on {} (epoch {})", name, epoch);
        try {
          listener.accept(name);
        } catch (final RuntimeException e) {
          LOG.warn("lease listener failed for {}: {}", name, e.toString());
        }
      }
      if (failed != failuresLogged) {
        failuresLogged = failed;
        LOG.info("leases renewed again ({} failed rounds since start)", failed);
      }
    } catch (final StoreUnavailableException e) {
      // Leases not renewed expire on their own (owns() turns false); the next tick tries again.
      if (failures.getAndIncrement() == failuresLogged) {
        // The store logged its outage; this line tells what it means for the leases.
        LOG.warn("leases not renewed: this relay stops acting as the owner of its databases {} "
            + "ms after its last renewal, retrying every {} ms", trustMillis,
            tickPeriod().toMillis());
      }
      LOG.debug("lease round failed: {}", e.getMessage());
      synchronized (this) {
        dropped.addAll(release);
      }
    }
  }

  /** Leases taken since start. */
  public long acquiredCount() {
    return acquired.get();
  }

  /** Leases lost (expired before renewal) since start. */
  public long lostCount() {
    return lost.get();
  }

  /** Ticks that failed on the store since start. */
  public long failureCount() {
    return failures.get();
  }
}
