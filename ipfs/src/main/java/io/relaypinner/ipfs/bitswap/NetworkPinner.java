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
   * A pool of bytes wider than one walk that the walk draws from (the gateway's node-wide total
   * of network fallback bytes in flight). Before a block is asked for, the walk takes
   * {@link #perBlock()} bytes (room for the largest block it may get); when the block arrives
   * it gives back what the block did not need (or takes the rest when it needed more); when the
   * walk ends, however it ends, it gives back all it holds. A walk that finds no room while
   * blocks of its own are in flight waits for them; with none in flight it fails with
   * {@link FetchRefusedException}. Implementations are thread-safe.
   */
  public interface ByteMeter {
    /** Takes {@code bytes} if there is room; false, taking nothing, otherwise. */
    boolean tryTake(long bytes);

    /** Takes {@code bytes} even past the pool's size (a block larger than its reservation). */
    void take(long bytes);

    /** Gives back {@code bytes} taken before. */
    void give(long bytes);

    /** What is taken before each block is asked for. */
    default long perBlock() {
      return Blocks.MAX_BLOCK_SIZE;
    }

    /** No pool: every take succeeds. */
    ByteMeter UNLIMITED = new ByteMeter() {
      @Override
      public boolean tryTake(final long bytes) {
        return true;
      }

      @Override
      public void take(final long bytes) {
        // Nothing is counted.
      }

      @Override
      public void give(final long bytes) {
        // Nothing is counted.
      }
    };
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
    return fetch(root, limits, ByteMeter.UNLIMITED);
  }

  /**
   * As {@link #fetch(Cid, Limits)}, drawing the bytes of the blocks in flight from
   * {@code meter} (see {@link ByteMeter}); also fails with {@link FetchRefusedException} when
   * the meter has no room and no block of this walk is in flight.
   */
  public CompletableFuture<Fetched> fetch(final Cid root, final Limits limits,
      final ByteMeter meter) {
    return new Walk(root, limits, Objects.requireNonNull(meter, "meter")).start();
  }

  /** One pin's walk; its fields are guarded by {@code this}. */
  private final class Walk {
    private final Cid root;
    private final Limits limits;
    private final ByteMeter meter;
    private final long deadline;
    private final Set<Cid> visited = new HashSet<>();
    private final ArrayDeque<Cid> pending = new ArrayDeque<>();
    private final List<CompletableFuture<byte[]>> running = new ArrayList<>();
    private final CompletableFuture<Fetched> result = new CompletableFuture<>();
    private int inFlight;
    private long bytes;
    private boolean finishing;
    /** Bytes taken from {@link #meter} and not given back. */
    private long metered;
    /** Whether all {@link #metered} was given back (the walk ended): nothing is taken again. */
    private boolean released;

    Walk(final Cid root, final Limits limits, final ByteMeter meter) {
      this.root = root;
      this.limits = limits;
      this.meter = meter;
      this.deadline = bitswap.ticker().nanoTime() + limits.timeout().toNanos();
    }

    CompletableFuture<Fetched> start() {
      result.orTimeout(limits.timeout().toMillis(), TimeUnit.MILLISECONDS)
          .whenComplete((pinned, error) -> {
            if (error != null) {
              cancelRunning();
            }
            release();
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
      boolean refused = false;
      synchronized (this) {
        if (result.isDone() || released) {
          return;
        }
        while (inFlight < limits.maxConcurrency() && !pending.isEmpty()) {
          if (!meter.tryTake(meter.perBlock())) {
            // No room: blocks of this walk in flight give some back when they arrive.
            refused = inFlight == 0;
            break;
          }
          metered += meter.perBlock();
          toFetch.add(pending.poll());
          inFlight++;
        }
        if (inFlight == 0 && pending.isEmpty() && !finishing) {
          finishing = true;
          done = true;
        }
      }
      if (refused) {
        result.completeExceptionally(new FetchRefusedException("fetching " + root
            + " would pass the bytes all fetches may have in flight"));
        return;
      }
      for (final Cid cid : toFetch) {
        fetch(cid);
      }
      if (done) {
        finish();
      }
    }

    /** A block arrived: its reservation becomes its size. */
    private synchronized void settle(final long size) {
      if (released) {
        return;
      }
      final long unused = meter.perBlock() - size;
      if (unused >= 0) {
        meter.give(unused);
      } else {
        meter.take(-unused);
      }
      metered -= unused;
    }

    /** The walk ended: gives back all it took. */
    private synchronized void release() {
      if (!released) {
        released = true;
        meter.give(metered);
        metered = 0;
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
      settle(data.length);
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
