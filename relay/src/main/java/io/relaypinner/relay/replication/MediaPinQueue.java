package io.relaypinner.relay.replication;

import io.relaypinner.ipfs.bitswap.NetworkPinner;
import io.relaypinner.ipfs.pin.PinStore;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.relay.coordination.MediaWorkQueue;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Pins media DAGs over bitswap ({@link NetworkPinner}): at most {@code concurrency} pins run at
 * once, the rest wait in a bounded queue, and a CID queued or running is not queued again (its
 * callers share one future). A root pinned already completes at once; a failed pin is forgotten,
 * so a later sync tries again.
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

  private final NetworkPinner pinner;
  private final PinStore pins;
  private final Executor storage;
  private final NetworkPinner.Limits limits;
  private final int concurrency;
  private final Map<Cid, CompletableFuture<Cid>> pending = new ConcurrentHashMap<>();
  private final ArrayDeque<Cid> queue = new ArrayDeque<>();
  private final AtomicLong pinned = new AtomicLong();
  private final AtomicLong failed = new AtomicLong();
  private final Map<Cid, MediaWorkQueue.Claim> claims = new ConcurrentHashMap<>();
  private final Map<Cid, Integer> attempts = new ConcurrentHashMap<>();
  private final AtomicLong busy = new AtomicLong();
  private final AtomicLong overridden = new AtomicLong();
  private volatile MediaWorkQueue work = cid -> Optional.of(done -> { });
  private int running;

  /**
   * @param storage runs the pinned-already check (a datastore read); never an event loop
   * @param concurrency pins running at once
   */
  public MediaPinQueue(final NetworkPinner pinner, final PinStore pins, final Executor storage,
      final NetworkPinner.Limits limits, final int concurrency) {
    this.pinner = Objects.requireNonNull(pinner, "pinner");
    this.pins = Objects.requireNonNull(pins, "pins");
    this.storage = Objects.requireNonNull(storage, "storage");
    this.limits = Objects.requireNonNull(limits, "limits");
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
   * Pins {@code cid} (fetching what is missing of its DAG from connected peers). Completes with
   * the CID once its whole DAG is stored and pinned; fails when it could not be.
   */
  public CompletableFuture<Cid> pin(final Cid cid) {
    final CompletableFuture<Cid> created = new CompletableFuture<>();
    final CompletableFuture<Cid> existing = pending.putIfAbsent(cid, created);
    if (existing != null) {
      return existing;
    }
    created.whenComplete((ok, error) -> pending.remove(cid, created));
    start(cid, created, 0);
    return created;
  }

  /** Checks, claims and queues {@code cid}; while another relay pins it, looks again later. */
  private void start(final Cid cid, final CompletableFuture<Cid> created, final int attempt) {
    final Executor runner = attempt == 0 ? storage
        : CompletableFuture.delayedExecutor(BUSY_RECHECK.toMillis(), TimeUnit.MILLISECONDS,
            storage);
    try {
      runner.execute(() -> {
        try {
          if (pins.isPinned(cid)) {
            created.complete(cid);
            return;
          }
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
            created.completeExceptionally(new IllegalStateException("media pin queue full"));
            return;
          }
          queue.add(cid);
          attempts.put(cid, attempt);
        }
        pump();
      });
    } catch (final RejectedExecutionException e) {
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
      final CompletableFuture<Cid> future = pending.get(next);
      // The claim is a PostgreSQL round trip with shared stores: on the storage executor, and
      // only for pins about to run (claims hold sessions).
      // A relay that claimed a CID but reaches no peer holding it keeps the claim until its pin
      // times out: after MAX_BUSY_RECHECKS looks this relay pins it anyway (counted).
      final int tried = attempts.getOrDefault(next, 0);
      CompletableFuture<?> started;
      try {
        started = CompletableFuture.supplyAsync(() -> work.claim(next), storage)
            .thenCompose(claim -> {
              if (claim.isEmpty()) {
                if (tried + 1 < MAX_BUSY_RECHECKS) {
                  throw new BusyException();
                }
                overridden.incrementAndGet();
              } else {
                claims.put(next, claim.get());
              }
              return pinner.pin(next, limits);
            });
      } catch (final RuntimeException e) {
        started = CompletableFuture.failedFuture(e);
      }
      started.whenComplete((done, error) -> {
        synchronized (this) {
          running--;
        }
        final MediaWorkQueue.Claim claim = claims.remove(next);
        if (claim != null) {
          try {
            claim.close(error == null);
          } catch (final RuntimeException e) {
            LOG.debug("media claim of {} not closed: {}", next, e.toString());
          }
        }
        final Integer attempt = attempts.remove(next);
        if (error != null && rootCause(error) instanceof BusyException && future != null) {
          // Another relay is pinning it: look again later (it shows in the shared pins).
          busy.incrementAndGet();
          start(next, future, (attempt == null ? 0 : attempt) + 1);
          pump();
          return;
        }
        if (error != null) {
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

  /** Another relay holds the CID's claim. */
  private static final class BusyException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    BusyException() {
      super("another relay is pinning it", null, false, false);
    }
  }

  private static Throwable rootCause(final Throwable error) {
    Throwable cause = error;
    while (cause instanceof java.util.concurrent.CompletionException && cause.getCause() != null) {
      cause = cause.getCause();
    }
    return cause;
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
}
