package io.relaypinner.ipfs.bitswap;

import static io.relaypinner.common.Failures.unwrap;

import io.relaypinner.ipfs.blockstore.Blocks;
import io.relaypinner.ipfs.pin.DagLimitExceededException;
import io.relaypinner.ipfs.pin.LinkResolver;
import io.relaypinner.ipfs.pin.PinHolder;
import io.relaypinner.ipfs.pin.PinResult;
import io.relaypinner.ipfs.pin.PinStore;
import io.relaypinner.multiformats.Cid;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Pins a DAG that may not be here yet: walks it from the root, fetching every block the
 * blockstore lacks over {@link Bitswap} (blocks already held are read, not fetched), then pins
 * the root recursively with {@link PinStore}, for the holder the caller names. Fetches run with bounded concurrency, the walk is
 * capped in blocks and bytes, and the whole operation has a deadline; on failure nothing is
 * pinned (blocks fetched so far stay in the blockstore for a retry, until GC). The deadline is
 * measured on the host's ticker ({@link io.relaypinner.libp2p.host.Host#ticker()}).
 *
 * <p>Thread-safe; one instance serves any number of concurrent pins.
 */
public final class NetworkPinner {
  private final Bitswap bitswap;
  private final PinStore pins;
  private final LinkResolver resolver;
  private final Executor executor;

  /**
   * Bounds of one network pin.
   *
   * @param maxConcurrency blocks fetched at once
   * @param maxBlocks distinct blocks the DAG may have
   * @param maxBytes total block bytes the DAG may have
   * @param timeout deadline of the whole pin
   */
  public record Limits(int maxConcurrency, long maxBlocks, long maxBytes, Duration timeout) {
    /** 32 at once, 1,000,000 blocks, 64 GiB, 10 minutes. */
    public static final Limits DEFAULT = new Limits(32, PinStore.DEFAULT_MAX_PIN_BLOCKS,
        64L << 30, Duration.ofMinutes(10));

    /** Validates. */
    public Limits {
      if (maxConcurrency < 1 || maxBlocks < 1 || maxBytes < 1 || timeout == null
          || timeout.isNegative() || timeout.isZero()) {
        throw new IllegalArgumentException("network pin limits must be positive");
      }
    }
  }

  /**
   * @param executor decodes links and runs the final pin (blocking work); should be bounded
   */
  public NetworkPinner(final Bitswap bitswap, final PinStore pins, final LinkResolver resolver,
      final Executor executor) {
    this.bitswap = Objects.requireNonNull(bitswap, "bitswap");
    this.pins = Objects.requireNonNull(pins, "pins");
    this.resolver = Objects.requireNonNull(resolver, "resolver");
    this.executor = Objects.requireNonNull(executor, "executor");
  }

  /**
   * Fetches what is missing of the DAG under {@code root} and pins it for {@code holder}. Fails with
   * {@link TimeoutException} at the deadline, {@link DagLimitExceededException} over a cap, or
   * the link resolver's error for an unreadable block.
   */
  public CompletableFuture<PinResult.Pinned> pin(final Cid root, final PinHolder holder,
      final Limits limits) {
    Objects.requireNonNull(holder, "holder");
    return fetch(root, limits).thenCompose(fetched -> {
      final CompletableFuture<PinResult.Pinned> result = new CompletableFuture<>();
      try {
        executor.execute(() -> {
          try {
            final PinResult pinned = pins.pin(root, holder);
            if (pinned instanceof PinResult.Pinned done) {
              result.complete(done);
            } else {
              // GC ran between our fetch and the pin and took blocks: the caller may retry.
              result.completeExceptionally(new IllegalStateException("blocks of " + root
                  + " vanished before the pin: " + ((PinResult.Incomplete) pinned).missing()));
            }
          } catch (final RuntimeException e) {
            result.completeExceptionally(e);
          }
        });
      } catch (final RejectedExecutionException e) {
        result.completeExceptionally(e);
      }
      return result;
    });
  }

  /** What {@link #fetch} walked: distinct blocks and their bytes (held before or fetched). */
  public record Fetched(Cid root, long blocks, long bytes) {}

  /**
   * Makes every block of the DAG under {@code root} present in the blockstore, fetching what is
   * missing, without pinning it (GC may take it). Fails as {@link #pin} does.
   */
  public CompletableFuture<Fetched> fetch(final Cid root, final Limits limits) {
    return new Walk(root, limits).start();
  }

  /** One pin's walk; its fields are guarded by {@code this}. */
  private final class Walk {
    private final Cid root;
    private final Limits limits;
    private final long deadline;
    private final Set<Cid> visited = new HashSet<>();
    private final ArrayDeque<Cid> pending = new ArrayDeque<>();
    private final List<CompletableFuture<byte[]>> running = new ArrayList<>();
    private final CompletableFuture<Fetched> result = new CompletableFuture<>();
    private int inFlight;
    private long bytes;
    private boolean finishing;

    Walk(final Cid root, final Limits limits) {
      this.root = root;
      this.limits = limits;
      this.deadline = bitswap.ticker().nanoTime() + limits.timeout().toNanos();
    }

    CompletableFuture<Fetched> start() {
      result.orTimeout(limits.timeout().toMillis(), TimeUnit.MILLISECONDS)
          .whenComplete((pinned, error) -> {
            if (error != null) {
              cancelRunning();
            }
          });
      synchronized (this) {
        visited.add(key(root));
        pending.add(root);
      }
      pump();
      return result;
    }

    private Cid key(final Cid cid) {
      return cid.version() == 0 ? cid.toV1() : cid;
    }

    private void pump() {
      final List<Cid> toFetch = new ArrayList<>();
      boolean done = false;
      synchronized (this) {
        if (result.isDone()) {
          return;
        }
        while (inFlight < limits.maxConcurrency() && !pending.isEmpty()) {
          toFetch.add(pending.poll());
          inFlight++;
        }
        if (inFlight == 0 && pending.isEmpty() && !finishing) {
          finishing = true;
          done = true;
        }
      }
      for (final Cid cid : toFetch) {
        fetch(cid);
      }
      if (done) {
        finish();
      }
    }

    private void fetch(final Cid cid) {
      final long remaining = deadline - bitswap.ticker().nanoTime();
      if (remaining <= 0) {
        result.completeExceptionally(new TimeoutException("network pin of " + root
            + " timed out after " + limits.timeout()));
        return;
      }
      final CompletableFuture<byte[]> block = bitswap.get(cid, Duration.ofNanos(remaining));
      synchronized (this) {
        running.add(block);
      }
      block.whenComplete((data, error) -> {
        synchronized (this) {
          running.remove(block);
        }
        if (error != null) {
          result.completeExceptionally(unwrap(error));
          return;
        }
        try {
          executor.execute(() -> linksOf(cid, data));
        } catch (final RejectedExecutionException e) {
          result.completeExceptionally(e);
        }
      });
    }

    private void linksOf(final Cid cid, final byte[] data) {
      final List<Cid> links;
      try {
        links = resolver.links(cid, data);
      } catch (final RuntimeException e) {
        result.completeExceptionally(e);
        return;
      }
      synchronized (this) {
        bytes += data.length;
        if (bytes > limits.maxBytes()) {
          result.completeExceptionally(new DagLimitExceededException("DAG of " + root
              + " is larger than " + limits.maxBytes() + " bytes"));
          return;
        }
        for (final Cid link : links) {
          if (Blocks.isIdentity(link) || !visited.add(key(link))) {
            continue;
          }
          if (visited.size() > limits.maxBlocks()) {
            result.completeExceptionally(new DagLimitExceededException("DAG of " + root
                + " has more than " + limits.maxBlocks() + " blocks"));
            return;
          }
          pending.add(link);
        }
        inFlight--;
      }
      pump();
    }

    private void finish() {
      synchronized (this) {
        result.complete(new Fetched(root, visited.size(), bytes));
      }
    }

    private void cancelRunning() {
      final List<CompletableFuture<byte[]>> copy;
      synchronized (this) {
        copy = List.copyOf(running);
        running.clear();
        pending.clear();
      }
      for (final CompletableFuture<byte[]> block : copy) {
        block.cancel(false);
      }
    }
  }
}
