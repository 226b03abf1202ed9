package io.relaypinner.relay.replication;

import io.relaypinner.multiformats.Cid;
import java.util.ArrayDeque;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Pins media DAGs over bitswap (the node's {@code NetworkPinner}): at most {@code concurrency} pins run at
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

  /** Fetches a DAG's missing blocks and pins it (completes once pinned). */
  @FunctionalInterface
  public interface DagPinner {
    CompletableFuture<?> pin(Cid root);
  }

  private final DagPinner pinner;
  private final Predicate<Cid> isPinned;
  private final Executor storage;
  private final int concurrency;
  private final AtomicLong queueFull = new AtomicLong();
  private final Map<Cid, CompletableFuture<Cid>> pending = new ConcurrentHashMap<>();
  private final ArrayDeque<Cid> queue = new ArrayDeque<>();
  private final AtomicLong pinned = new AtomicLong();
  private final AtomicLong failed = new AtomicLong();
  private int running;

  /**
   * @param isPinned whether a root is pinned already (a datastore read; may throw)
   * @param storage runs the pinned-already check; never an event loop
   * @param concurrency pins running at once
   */
  public MediaPinQueue(final DagPinner pinner, final Predicate<Cid> isPinned,
      final Executor storage, final int concurrency) {
    this.pinner = Objects.requireNonNull(pinner, "pinner");
    this.isPinned = Objects.requireNonNull(isPinned, "isPinned");
    this.storage = Objects.requireNonNull(storage, "storage");
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
          if (isPinned.test(cid)) {
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
            queueFull.incrementAndGet();
            created.completeExceptionally(new IllegalStateException("media pin queue full"));
            return;
          }
          queue.add(cid);
        }
        pump();
      });
    } catch (final RejectedExecutionException e) {
      failed.incrementAndGet();
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
        started = pinner.pin(next);
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

  /** Pins refused because {@link #MAX_QUEUED} waited already, since start. */
  public long queueFullCount() {
    return queueFull.get();
  }
}
