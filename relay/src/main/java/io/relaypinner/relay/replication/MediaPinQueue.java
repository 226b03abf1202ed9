package io.relaypinner.relay.replication;

import io.relaypinner.ipfs.bitswap.NetworkPinner;
import io.relaypinner.ipfs.pin.PinStore;
import io.relaypinner.multiformats.Cid;
import java.util.ArrayDeque;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
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

  private final NetworkPinner pinner;
  private final PinStore pins;
  private final Executor storage;
  private final NetworkPinner.Limits limits;
  private final int concurrency;
  private final Map<Cid, CompletableFuture<Cid>> pending = new ConcurrentHashMap<>();
  private final ArrayDeque<Cid> queue = new ArrayDeque<>();
  private final AtomicLong pinned = new AtomicLong();
  private final AtomicLong failed = new AtomicLong();
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
    try {
      storage.execute(() -> {
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
        }
        pump();
      });
    } catch (final RejectedExecutionException e) {
      created.completeExceptionally(e);
    }
    return created;
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
      CompletableFuture<?> started;
      try {
        started = pinner.pin(next, limits);
      } catch (final RuntimeException e) {
        started = CompletableFuture.failedFuture(e);
      }
      started.whenComplete((done, error) -> {
        synchronized (this) {
          running--;
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
