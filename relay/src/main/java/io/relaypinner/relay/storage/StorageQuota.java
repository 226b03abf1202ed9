package io.relaypinner.relay.storage;

import io.relaypinner.ipfs.blockstore.Blocks;
import io.relaypinner.ipfs.blockstore.Blockstore;
import io.relaypinner.ipfs.blockstore.StorageFullException;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.orbitdb.BlockFetcher;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The storage quota ({@code RELAY_STORAGE_MAX_BYTES}): block bytes stored may not grow past
 * {@code maxBytes}. New content (pins, gateway fetches, imports, replicated blocks) is refused
 * with a {@link StorageFullException} once the store holds {@code maxBytes}; nothing stored is
 * ever deleted or rewritten by the quota (freeing room is garbage collection's job, {@link
 * StorageGc}). Each refusal is counted by what asked ({@link #refused()}); reaching and leaving
 * the full state is logged once each.
 *
 * <p>Pressure: at {@link #PRESSURE_PERCENT}% of the quota (and on every refusal) the {@code
 * pressure} callback runs, so GC can shrink the gateway cache and sweep before writes fail.
 *
 * <p>{@code maxBytes == 0} means no quota: nothing is refused and there is no pressure.
 * Thread-safe.
 */
public final class StorageQuota {
  /** Share of the quota above which GC is asked to run (pressure). */
  public static final int PRESSURE_PERCENT = 90;

  private static final Logger LOG = LoggerFactory.getLogger(StorageQuota.class);

  private final long maxBytes;
  private final LongSupplier usedBytes;
  private final Runnable pressure;
  private final Map<String, LongAdder> refused = new ConcurrentHashMap<>();
  private final AtomicBoolean full = new AtomicBoolean();
  /** Bytes of the latest refused write, so GC frees room for it too (0 after a GC run). */
  private final AtomicLong wanted = new AtomicLong();

  /**
   * @param maxBytes the quota; 0 = none
   * @param usedBytes block bytes stored now (e.g. {@code FlatFsBlockstore::byteCount})
   * @param pressure asked to free room (should only schedule work, never block)
   */
  public StorageQuota(final long maxBytes, final LongSupplier usedBytes,
      final Runnable pressure) {
    if (maxBytes < 0) {
      throw new IllegalArgumentException("maxBytes must not be negative");
    }
    this.maxBytes = maxBytes;
    this.usedBytes = Objects.requireNonNull(usedBytes, "usedBytes");
    this.pressure = Objects.requireNonNull(pressure, "pressure");
  }

  /** The quota in bytes; 0 = none. */
  public long maxBytes() {
    return maxBytes;
  }

  /** Block bytes stored now. */
  public long usedBytes() {
    return usedBytes.getAsLong();
  }

  /** Whether a quota is set and the stored bytes are at or above it. */
  public boolean full() {
    return maxBytes > 0 && usedBytes() >= maxBytes;
  }

  /** Whether a quota is set and the stored bytes are above {@link #PRESSURE_PERCENT}% of it. */
  public boolean underPressure() {
    return maxBytes > 0 && usedBytes() >= maxBytes / 100 * PRESSURE_PERCENT;
  }

  /**
   * How many bytes must go to bring the store, plus the latest refused write, back under the
   * pressure line (0: none).
   */
  public long excessBytes() {
    return maxBytes == 0 ? 0
        : Math.max(0, usedBytes() + wanted.get() - maxBytes / 100 * PRESSURE_PERCENT);
  }

  /**
   * Refuses new content when {@code bytes} more would pass the quota: counts the refusal under
   * {@code what} and throws.
   *
   * @throws StorageFullException when the quota does not leave room
   */
  public void checkRoom(final String what, final long bytes) {
    if (maxBytes == 0) {
      return;
    }
    final long used = usedBytes();
    if (used + bytes > maxBytes) {
      refused.computeIfAbsent(what, k -> new LongAdder()).increment();
      wanted.accumulateAndGet(bytes, Math::max);
      if (full.compareAndSet(false, true)) {
        LOG.warn("storage quota reached: {} of {} bytes stored (RELAY_STORAGE_MAX_BYTES);"
            + " new pins, gateway fetches and replicated blocks are refused until GC frees"
            + " room", used, maxBytes);
      }
      pressure.run();
      throw new StorageFullException("storage quota of " + maxBytes + " bytes reached ("
          + used + " bytes stored)");
    }
    if (used >= maxBytes / 100 * PRESSURE_PERCENT) {
      pressure.run();
    }
  }

  /** Called after GC: forgets the refused write, logs the way back under the quota once. */
  void recheck() {
    wanted.set(0);
    if (maxBytes > 0 && usedBytes() < maxBytes && full.compareAndSet(true, false)) {
      LOG.info("storage below its quota again: {} of {} bytes stored", usedBytes(), maxBytes);
    }
  }

  /** Refusals so far, by what asked. */
  public void refused(final Consumer<Map.Entry<String, Long>> visitor) {
    refused.forEach((what, count) -> visitor.accept(Map.entry(what, count.sum())));
  }

  /** Refusals so far counted under {@code what}. */
  public long refusedCount(final String what) {
    final LongAdder count = refused.get(what);
    return count == null ? 0 : count.sum();
  }

  /**
   * Starts {@code work} unless the quota is reached: then it never starts and the answer is a
   * future failed with the {@link StorageFullException} (counted under {@code what}). The one
   * admission check of new content that is not a block write: replication's fetches, pins and
   * imports (block writes are checked by {@link #guard(Blockstore, String)}).
   */
  public <T> CompletableFuture<T> admit(final String what,
      final Supplier<? extends CompletableFuture<T>> work) {
    return admit(what, work, CompletableFuture::failedFuture);
  }

  /**
   * Like {@link #admit(String, Supplier)}, answering a refusal with {@code refused} (e.g. an
   * HTTP {@code 507}) instead of a failed future.
   */
  public <T> CompletableFuture<T> admit(final String what,
      final Supplier<? extends CompletableFuture<T>> work,
      final Function<StorageFullException, ? extends CompletableFuture<T>> refused) {
    Objects.requireNonNull(work, "work");
    Objects.requireNonNull(refused, "refused");
    try {
      checkRoom(what, 1);
    } catch (final StorageFullException e) {
      return refused.apply(e);
    }
    return work.get();
  }

  /**
   * {@code delegate}, whose fetches of new blocks are refused at the quota (counted under
   * {@code what}) without asking the network.
   */
  public BlockFetcher guard(final BlockFetcher delegate, final String what) {
    Objects.requireNonNull(delegate, "delegate");
    Objects.requireNonNull(what, "what");
    return cid -> admit(what, () -> delegate.fetch(cid));
  }

  /**
   * A view of {@code delegate} whose puts of blocks it does not hold yet are refused over the
   * quota (counted under {@code what}); reads, deletes and puts of held blocks pass through.
   */
  public Blockstore guard(final Blockstore delegate, final String what) {
    Objects.requireNonNull(delegate, "delegate");
    Objects.requireNonNull(what, "what");
    if (maxBytes == 0) {
      return delegate;
    }
    return new Blockstore() {
      @Override
      public boolean has(final Cid cid) {
        return delegate.has(cid);
      }

      @Override
      public Optional<byte[]> get(final Cid cid) {
        return delegate.get(cid);
      }

      @Override
      public Optional<Integer> size(final Cid cid) {
        return delegate.size(cid);
      }

      @Override
      public void put(final Cid cid, final byte[] data) {
        if (!Blocks.isIdentity(cid) && !delegate.has(cid)) {
          checkRoom(what, data.length);
        }
        delegate.put(cid, data);
      }

      @Override
      public void stage(final Cid cid, final byte[] data) {
        if (!Blocks.isIdentity(cid) && !delegate.has(cid)) {
          checkRoom(what, data.length);
        }
        delegate.stage(cid, data);
      }

      @Override
      public void sync() {
        delegate.sync();
      }

      @Override
      public boolean delete(final Cid cid) {
        return delegate.delete(cid);
      }

      @Override
      public void forEachKey(final Consumer<Cid> visitor) {
        delegate.forEachKey(visitor);
      }
    };
  }
}
