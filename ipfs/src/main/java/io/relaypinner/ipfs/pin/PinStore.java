package io.relaypinner.ipfs.pin;

import io.relaypinner.ipfs.blockstore.Blocks;
import io.relaypinner.ipfs.blockstore.Blockstore;
import io.relaypinner.ipfs.datastore.Datastore;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.multiformats.MultiformatException;
import io.relaypinner.multiformats.Multihash;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReadWriteLock;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Recursive pins over a {@link Datastore} and a {@link Blockstore}, and the garbage collector that
 * deletes every block no pin reaches. A pin names a root CID and stands for its whole DAG (as
 * {@code ipfs pin add} recursive pins do).
 *
 * <p>Persistence: a pin is the datastore entry {@code /pins/<cid text>} whose value is the CID's
 * binary form; it is written (durably) only after a walk found every block of the DAG present
 * and the blockstore's barrier ({@link Blockstore#sync}) made every staged block durable, so a
 * crash never leaves a pin whose blocks are not stored. {@link #pinDeferred} writes the entry
 * with {@link Datastore#writeDeferred}: durable at the datastore's next commit.
 *
 * <p>Concurrency: a read-write lock. {@link #pin} holds the read lock from the start of its walk
 * until its entry is written, so pins run in parallel with each other; {@link #gc} holds the write
 * lock from its key snapshot through mark and sweep, so no pin is checked against blocks a
 * running GC is about to delete, and no pin recorded before GC's mark is missed by it. A pin that
 * arrives during GC waits, then walks what is left (and reports anything GC took as missing).
 * GC also sweeps only the keys that existed <em>before</em> its mark, so blocks put while it runs
 * (a fetch in flight) are never deleted by that run. Blocks put earlier that are not yet pinned
 * are garbage to GC: fetch a DAG and pin it without a GC run in between, or the pin reports what
 * GC removed as missing and the caller fetches again.
 *
 * <p>Limits: a pin walk visits at most {@code maxPinBlocks} blocks and a GC mark at most {@code
 * maxMarkBlocks}; a GC whose mark fails (limit, unreadable links) deletes nothing.
 */
public final class PinStore {
  /** Datastore key prefix of pins. */
  public static final String PREFIX = "/pins/";
  /** Default bound on one pin's DAG. */
  public static final long DEFAULT_MAX_PIN_BLOCKS = 1_000_000;
  /** Default bound on everything pinned, for GC's mark. */
  public static final long DEFAULT_MAX_MARK_BLOCKS = 20_000_000;

  private static final Logger LOG = LoggerFactory.getLogger(PinStore.class);

  private final Datastore datastore;
  private final Blockstore blockstore;
  private final DagWalker pinWalker;
  private final DagWalker markWalker;
  private final ReadWriteLock gcLock = new ReentrantReadWriteLock();
  private final AtomicLong gcRuns = new AtomicLong();
  private final AtomicLong gcRemoved = new AtomicLong();

  /** A pin store with the default limits. */
  public PinStore(final Datastore datastore, final Blockstore blockstore,
      final LinkResolver resolver) {
    this(datastore, blockstore, resolver, DEFAULT_MAX_PIN_BLOCKS, DEFAULT_MAX_MARK_BLOCKS);
  }

  /**
   * A pin store.
   *
   * @param maxPinBlocks most blocks one pinned DAG may have
   * @param maxMarkBlocks most blocks all pins together may reach (GC's mark)
   */
  public PinStore(final Datastore datastore, final Blockstore blockstore,
      final LinkResolver resolver, final long maxPinBlocks, final long maxMarkBlocks) {
    this.datastore = Objects.requireNonNull(datastore, "datastore");
    this.blockstore = Objects.requireNonNull(blockstore, "blockstore");
    this.pinWalker = new DagWalker(blockstore, resolver, maxPinBlocks);
    this.markWalker = new DagWalker(blockstore, resolver, maxMarkBlocks);
  }

  /**
   * Pins the DAG under {@code root} when every block of it is in the blockstore; otherwise
   * records nothing and returns the absent CIDs. Pinning a pinned root walks it again (a cheap
   * completeness check) and succeeds.
   *
   * @throws DagLimitExceededException when the DAG has more than {@code maxPinBlocks} blocks
   * @throws LinkResolutionException when a block's links cannot be read
   */
  public PinResult pin(final Cid root) {
    return pin(root, false);
  }

  /**
   * As {@link #pin}, but the pin's entry becomes durable only with the datastore's next commit
   * ({@link Datastore#writeDeferred}), for pins that a later pass writes again if a crash loses
   * them (a replicated log's entries). The blocks are durable before the entry is written all
   * the same.
   */
  public PinResult pinDeferred(final Cid root) {
    return pin(root, true);
  }

  private PinResult pin(final Cid root, final boolean deferred) {
    gcLock.readLock().lock();
    try {
      final DagWalker.Result walk = pinWalker.walk(List.of(root));
      if (!walk.complete()) {
        return new PinResult.Incomplete(root, walk.missing());
      }
      // Nothing references a block before it is durable.
      blockstore.sync();
      if (deferred) {
        datastore.writeDeferred(java.util.Map.of(key(root), root.bytes()), List.of());
      } else {
        datastore.put(key(root), root.bytes());
      }
      return new PinResult.Pinned(root, walk.reached().size(), walk.bytes());
    } finally {
      gcLock.readLock().unlock();
    }
  }

  /** Removes the pin on {@code root} (its blocks go at the next GC); false if not pinned. */
  public boolean unpin(final Cid root) {
    return datastore.delete(key(root));
  }

  /** Whether {@code root} itself is pinned (as a root; blocks inside pinned DAGs are not). */
  public boolean isPinned(final Cid root) {
    return datastore.get(key(root)).isPresent();
  }

  /** Every pinned root, in key order. Unreadable entries are skipped with a warning. */
  public List<Cid> list() {
    final List<Cid> roots = new ArrayList<>();
    for (final Datastore.Entry entry : datastore.scan(PREFIX)) {
      try {
        roots.add(Cid.fromBytes(entry.value()));
      } catch (final MultiformatException e) {
        LOG.warn("ignoring unreadable pin {}: {}", entry.key(), e.getMessage());
      }
    }
    return roots;
  }

  /**
   * Deletes every block that no pin reaches: snapshot the stored keys, mark from every pin root,
   * then delete the snapshot's unmarked keys. Pins wait while it runs.
   *
   * @throws DagLimitExceededException when the pins reach more than {@code maxMarkBlocks}
   *     blocks; nothing is deleted
   * @throws LinkResolutionException when a pinned block's links cannot be read; nothing is
   *     deleted
   */
  public GcResult gc() {
    return gc(multihash -> true);
  }

  /**
   * As {@link #gc()}, deleting an unmarked block only when {@code sweepable} accepts its
   * multihash: the caller keeps blocks it still wants (a cache, a grace period for blocks an
   * in-flight pin wrote). A block reached by a pin is never offered to {@code sweepable}. The
   * predicate runs under GC's lock: it must be quick and must not call back into this store.
   */
  public GcResult gc(final Predicate<Multihash> sweepable) {
    Objects.requireNonNull(sweepable, "sweepable");
    gcLock.writeLock().lock();
    try {
      final List<Multihash> snapshot = new ArrayList<>();
      blockstore.forEachKey(cid -> snapshot.add(cid.multihash()));
      final List<Cid> roots = list();
      final DagWalker.Result mark = markWalker.walk(roots);
      if (!mark.complete()) {
        LOG.warn("GC: {} block(s) of pinned DAGs are missing, e.g. {}", mark.missing().size(),
            mark.missing().get(0));
      }
      long removed = 0;
      for (final Multihash multihash : snapshot) {
        if (!mark.reached().contains(multihash) && sweepable.test(multihash)
            && blockstore.delete(Blocks.rawCid(multihash))) {
          removed++;
        }
      }
      gcRuns.incrementAndGet();
      gcRemoved.addAndGet(removed);
      return new GcResult(roots.size(), mark.reached().size(), snapshot.size(), removed,
          mark.missing());
    } finally {
      gcLock.writeLock().unlock();
    }
  }

  /** Completed GC runs since this object was made. */
  public long gcRuns() {
    return gcRuns.get();
  }

  /** Blocks deleted by GC since this object was made. */
  public long gcRemoved() {
    return gcRemoved.get();
  }

  private static String key(final Cid root) {
    return PREFIX + root;
  }
}
