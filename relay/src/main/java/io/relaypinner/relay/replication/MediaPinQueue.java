package io.relaypinner.relay.replication;

import io.relaypinner.common.Backoff;
import io.relaypinner.common.Failures;
import io.relaypinner.ipfs.blockstore.StoreUnavailableException;
import io.relaypinner.ipfs.pin.PinHolder;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.relay.coordination.MediaWorkQueue;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiPredicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Pins media DAGs over bitswap (the node's {@code NetworkPinner}) for a holder (the replication
 * of the database whose entry names the media): at most {@code concurrency} pins run at once, the
 * rest wait in a bounded queue, and a CID queued or running is not queued again (callers of the
 * same holder share one future; another holder's caller waits for it, then adds its own hold). A
 * root pinned already (by anyone) only gets the caller's hold and completes at once, so a
 * {@code /pins} request that pinned the media first cannot take it away when it is deleted; a
 * failed pin is forgotten, so a later sync tries again.
 *
 * <p>With shared stores ({@link #shareWith}, issue 24) each pin about to run first claims its CID
 * in the {@link MediaWorkQueue} around the {@link DagPinner}: a CID another relay is pinning
 * gives its turn up and is looked at again {@link #BUSY_RECHECK} later (by then it may show in
 * the shared pins); after {@link #MAX_BUSY_RECHECKS} looks it is pinned here anyway (counted).
 *
 * <p>Thread-safe.
 */
public final class MediaPinQueue {
  private static final Logger LOG = LoggerFactory.getLogger(MediaPinQueue.class);

  /** Pins waiting for a turn; beyond it new CIDs fail at once (a later sync retries). */
  public static final int MAX_QUEUED = 10_000;
  /** How often a CID another relay is pinning is looked at again, and how many times. */
  static final Duration BUSY_RECHECK = Duration.ofSeconds(1);
  static final int MAX_BUSY_RECHECKS = 60;
  /** Retries of a pin that met a store outage: first delay, longest delay, for how long. */
  static final Duration STORE_RETRY_MIN = Duration.ofSeconds(1);
  static final Duration STORE_RETRY_MAX = Duration.ofSeconds(30);
  static final Duration STORE_RETRY_FOR = Duration.ofMinutes(10);
  private static final Backoff STORE_RETRY = Backoff.of(STORE_RETRY_MIN, STORE_RETRY_MAX);

  /** Fetches a DAG's missing blocks and pins it for {@code holder} (completes once pinned). */
  @FunctionalInterface
  public interface DagPinner {
    CompletableFuture<?> pin(Cid root, PinHolder holder);
  }

  /** A pin queued or running: its future and the holder it pins for. */
  private record Pending(CompletableFuture<Cid> future, PinHolder holder) {}

  /** Alone on its stores: every claim is granted, nothing to release. */
  private static final MediaWorkQueue LOCAL = cid -> Optional.of(done -> { });

  private final DagPinner pinner;
  private final BiPredicate<Cid, PinHolder> holdIfPinned;
  private final Executor storage;
  private final int concurrency;
  private final AtomicLong queueFull = new AtomicLong();
  private final Map<Cid, Pending> pending = new ConcurrentHashMap<>();
  private final ArrayDeque<Cid> queue = new ArrayDeque<>();
  private final AtomicLong pinned = new AtomicLong();
  private final AtomicLong failed = new AtomicLong();
  /** Looks a queued CID had at another relay's claim (absent: none). */
  private final Map<Cid, Integer> attempts = new ConcurrentHashMap<>();
  private final AtomicLong busy = new AtomicLong();
  private final AtomicLong overridden = new AtomicLong();
  /** Tries of CIDs whose pin waits for a store (only while their pin is pending). */
  private final Map<Cid, Integer> storeTries = new ConcurrentHashMap<>();
  private final AtomicLong storeRetries = new AtomicLong();
  /** Pins waiting for a store, with their looks at others' claims (tried on recovery). */
  private final Map<Cid, Integer> storeWaiting = new ConcurrentHashMap<>();
  private volatile MediaWorkQueue work = LOCAL;
  private int running;

  /**
   * @param holdIfPinned adds the holder's hold to a root pinned already and says so, false when
   *     nothing holds the root ({@code PinStore.holdIfPinned}: datastore reads; may throw)
   * @param storage runs the pinned-already check and claims; never an event loop
   * @param concurrency pins running at once
   */
  public MediaPinQueue(final DagPinner pinner, final BiPredicate<Cid, PinHolder> holdIfPinned,
      final Executor storage, final int concurrency) {
    this.pinner = Objects.requireNonNull(pinner, "pinner");
    this.holdIfPinned = Objects.requireNonNull(holdIfPinned, "holdIfPinned");
    this.storage = Objects.requireNonNull(storage, "storage");
    if (concurrency < 1) {
      throw new IllegalArgumentException("concurrency must be positive");
    }
    this.concurrency = concurrency;
  }

  /**
   * Shares the pin work with the other relays on shared stores (issue 24): a CID another relay
   * is pinning is not fetched here; its pin is awaited in the shared pins instead.
   */
  public void shareWith(final MediaWorkQueue queue) {
    this.work = Objects.requireNonNull(queue, "queue");
  }

  /**
   * Pins {@code cid} for {@code holder} (fetching what is missing of its DAG from connected
   * peers). Completes with the CID once its whole DAG is stored and held by {@code holder}; fails
   * when it could not be.
   */
  public CompletableFuture<Cid> pin(final Cid cid, final PinHolder holder) {
    Objects.requireNonNull(holder, "holder");
    final CompletableFuture<Cid> created = new CompletableFuture<>();
    final Pending mine = new Pending(created, holder);
    final Pending existing = pending.putIfAbsent(cid, mine);
    if (existing != null) {
      if (existing.holder().equals(holder)) {
        return existing.future();
      }
      // Another database's pin of the same media runs: once it is pinned, add this hold.
      return existing.future().thenApplyAsync(done -> {
        if (!holdIfPinned.test(done, holder)) {
          throw new IllegalStateException(done + " was released before " + holder
              + " could hold it");
        }
        return done;
      }, storage);
    }
    created.whenComplete((ok, error) -> pending.remove(cid, mine));
    check(cid, created, 0);
    return created;
  }

  private PinHolder holderOf(final Cid cid) {
    final Pending entry = pending.get(cid);
    return entry == null ? null : entry.holder();
  }

  private CompletableFuture<Cid> futureOf(final Cid cid) {
    final Pending entry = pending.get(cid);
    return entry == null ? null : entry.future();
  }

  /** Checks and queues {@code cid} on the storage executor ({@code looks}: at others' claims). */
  private void check(final Cid cid, final CompletableFuture<Cid> created, final int looks) {
    try {
      storage.execute(() -> {
        try {
          final PinHolder holder = holderOf(cid);
          if (holder == null || holdIfPinned.test(cid, holder)) {
            created.complete(cid);
            return;
          }
        } catch (final StoreUnavailableException e) {
          storeDown(cid, created, looks, e);
          return;
        } catch (final RuntimeException e) {
          // A failing store must not leave the CID queued forever: the pin fails, a later
          // sync tries again.
          failed.incrementAndGet();
          created.completeExceptionally(e);
          return;
        }
        synchronized (this) {
          if (queue.size() >= MAX_QUEUED) {
            failed.incrementAndGet();
            queueFull.incrementAndGet();
            created.completeExceptionally(new IllegalStateException("media pin queue full"));
            return;
          }
          queue.add(cid);
          if (looks > 0) {
            attempts.put(cid, looks);
          }
        }
        pump();
      });
    } catch (final RejectedExecutionException e) {
      failed.incrementAndGet();
      created.completeExceptionally(e);
    }
  }

  private void pump() {
    while (true) {
      final Cid next;
      synchronized (this) {
        if (running >= concurrency || queue.isEmpty()) {
          return;
        }
        next = queue.poll();
        running++;
      }
      final CompletableFuture<Cid> future = futureOf(next);
      final PinHolder holder = holderOf(next);
      final Integer looked = attempts.remove(next);
      CompletableFuture<?> started;
      try {
        started = holder == null ? CompletableFuture.completedFuture(null)
            : claimAndPin(next, holder, looked == null ? 0 : looked);
      } catch (final RuntimeException e) {
        started = CompletableFuture.failedFuture(e);
      }
      started.whenComplete((done, error) -> {
        synchronized (this) {
          running--;
        }
        if (error != null && Failures.unwrap(error) instanceof BusyException busyError
            && future != null) {
          // Another relay is pinning it: look again later (it shows in the shared pins).
          busy.incrementAndGet();
          recheckLater(next, future, busyError.looks + 1);
        } else if (error != null && StoreUnavailableException.find(error) != null
            && future != null) {
          storeDown(next, future, looked == null ? 0 : looked,
              StoreUnavailableException.find(error));
        } else if (error != null) {
          failed.incrementAndGet();
          LOG.debug("media pin of {} failed: {}", next, error.toString());
          if (future != null) {
            future.completeExceptionally(error);
          }
        } else {
          pinned.incrementAndGet();
          if (future != null) {
            future.complete(next);
          }
        }
        pump();
      });
    }
  }

  /**
   * The {@link DagPinner} inside a claim of {@code cid}. Alone on its stores there is nothing to
   * claim: the pin starts at once. With shared stores the claim is a PostgreSQL round trip, on
   * the storage executor, and is taken only for pins about to run (claims hold sessions). A
   * relay that claimed a CID but reaches no peer holding it keeps the claim until its pin times
   * out: after {@link #MAX_BUSY_RECHECKS} looks this relay pins it anyway (counted).
   */
  private CompletableFuture<?> claimAndPin(final Cid cid, final PinHolder holder,
      final int looks) {
    final MediaWorkQueue shared = work;
    if (shared == LOCAL) {
      return pinner.pin(cid, holder);
    }
    return CompletableFuture.supplyAsync(() -> shared.claim(cid), storage)
        .<Object>thenCompose(claim -> {
          if (claim.isEmpty()) {
            if (looks + 1 < MAX_BUSY_RECHECKS) {
              throw new BusyException(looks);
            }
            overridden.incrementAndGet();
            return pinner.pin(cid, holder).thenApply(done -> done);
          }
          final MediaWorkQueue.Claim held = claim.get();
          CompletableFuture<?> pin;
          try {
            pin = pinner.pin(cid, holder);
          } catch (final RuntimeException e) {
            pin = CompletableFuture.failedFuture(e);
          }
          return pin.handle((ok, error) -> {
            try {
              held.close(error == null);
            } catch (final RuntimeException e) {
              LOG.debug("media claim of {} not closed: {}", cid, e.toString());
            }
            if (error != null) {
              throw error instanceof CompletionException c ? c : new CompletionException(error);
            }
            return ok;
          });
        });
  }

  /**
   * A shared store was unavailable for {@code cid}'s pin: tried again after
   * {@link #STORE_RETRY_MIN}, doubling up to {@link #STORE_RETRY_MAX}, for as long as
   * {@link #STORE_RETRY_FOR} (the store logs its outage once); then the pin fails and a later
   * sync tries again.
   */
  private void storeDown(final Cid cid, final CompletableFuture<Cid> future, final int looks,
      final StoreUnavailableException e) {
    final int tries = storeTries.merge(cid, 1, Integer::sum);
    long waited = 0;
    for (int i = 0; i < tries - 1; i++) {
      waited += STORE_RETRY.delayMillis(i + 1);
    }
    if (waited >= STORE_RETRY_FOR.toMillis()) {
      storeTries.remove(cid);
      failed.incrementAndGet();
      future.completeExceptionally(e);
      return;
    }
    storeRetries.incrementAndGet();
    LOG.debug("media pin of {} waits for the store ({} tries): {}", cid, tries, e.getMessage());
    if (tries == 1) {
      future.whenComplete((ok, error) -> storeTries.remove(cid));
    }
    storeWaiting.put(cid, looks);
    try {
      CompletableFuture.delayedExecutor(STORE_RETRY.delayMillis(tries), TimeUnit.MILLISECONDS)
          .execute(() -> {
            if (storeWaiting.remove(cid) != null) {
              check(cid, future, looks);
            }
          });
    } catch (final RejectedExecutionException rejected) {
      storeWaiting.remove(cid);
      failed.incrementAndGet();
      future.completeExceptionally(rejected);
    }
  }

  /** Checks {@code cid} again after {@link #BUSY_RECHECK}; fails it if that cannot be queued. */
  private void recheckLater(final Cid cid, final CompletableFuture<Cid> future, final int looks) {
    try {
      CompletableFuture.delayedExecutor(BUSY_RECHECK.toMillis(), TimeUnit.MILLISECONDS)
          .execute(() -> check(cid, future, looks));
    } catch (final RejectedExecutionException e) {
      failed.incrementAndGet();
      future.completeExceptionally(e);
    }
  }

  /** Another relay holds the CID's claim. */
  private static final class BusyException extends RuntimeException {
    private static final long serialVersionUID = 1L;
    private final int looks;

    BusyException(final int looks) {
      super("another relay is pinning it", null, false, false);
      this.looks = looks;
    }
  }

  /** A store outage ended: the pins waiting for it are tried again now. */
  public void storeRecovered() {
    for (final Cid cid : List.copyOf(storeWaiting.keySet())) {
      final Integer looks = storeWaiting.remove(cid);
      final CompletableFuture<Cid> future = futureOf(cid);
      if (looks != null && future != null) {
        check(cid, future, looks);
      }
    }
  }

  /** Pin attempts repeated because a shared store was unavailable. */
  public long storeRetryCount() {
    return storeRetries.get();
  }

  /** Pins that waited because another relay was pinning the same CID. */
  public long busyCount() {
    return busy.get();
  }

  /** Pins run without the claim, after another relay held it for too long. */
  public long overriddenCount() {
    return overridden.get();
  }

  /** Pins queued or running. */
  public int inFlight() {
    return pending.size();
  }

  /** Pins that finished (fetched and pinned) since start. */
  public long pinnedCount() {
    return pinned.get();
  }

  /** Pins that failed (timeout, limit, unreadable DAG, queue full) since start. */
  public long failedCount() {
    return failed.get();
  }

  /** Pins refused because {@link #MAX_QUEUED} waited already, since start. */
  public long queueFullCount() {
    return queueFull.get();
  }
}
