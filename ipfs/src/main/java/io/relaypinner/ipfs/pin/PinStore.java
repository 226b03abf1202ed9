package io.relaypinner.ipfs.pin;

import io.relaypinner.ipfs.blockstore.Blocks;
import io.relaypinner.ipfs.blockstore.Blockstore;
import io.relaypinner.ipfs.datastore.Datastore;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.multiformats.MultiformatException;
import io.relaypinner.multiformats.Multihash;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReadWriteLock;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.Consumer;
import java.util.function.Predicate;
import java.util.function.Supplier;
import org.h2.mvstore.MVMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Recursive pins over a {@link Datastore} and a {@link Blockstore}, and the garbage collector that
 * deletes every block no pin reaches. A pin names a root CID and stands for its whole DAG (as
 * {@code ipfs pin add} recursive pins do).
 *
 * <p>Ownership: every pin is held by one or more {@link PinHolder}s (the replication of a
 * database, a Pinning Service API request, an import). A holder pins ({@link #pin}) and releases
 * ({@link #release}) only its own hold; a root is pinned while anything holds it, and its blocks
 * become garbage only when the last hold is released. CIDs are canonicalised
 * ({@link Cid#canonical()}) before any key or comparison, so {@code Qm…}, {@code bafy…},
 * {@code BAFY…} and {@code zb2…} of one dag-pb root are one pin.
 *
 * <p>Persistence: one datastore entry per hold, {@code /pins/<canonical cid>/<holder id>}, whose
 * value is the canonical CID's binary form. A hold on a root nobody held is written (durably)
 * only after a walk found every block of the DAG present and the blockstore's barrier
 * ({@link Blockstore#sync}) made every staged block durable, so a crash never leaves a pin whose
 * blocks are not stored. {@link #pinDeferred} writes with {@link Datastore#writeDeferred}: durable
 * at the datastore's next commit. Pins recorded before holders existed ({@code /pins/<cid text>},
 * no holder) are held by {@link PinHolder#LEGACY}: {@link #migrateLegacy} rewrites them in the
 * new layout, and until then (or when an older relay on shared stores writes one) they are GC
 * roots all the same; nothing releases them, so an upgrade loses nothing.
 *
 * <p>Concurrency: a read-write lock. {@link #pin} holds the read lock from the start of its walk
 * until its entry is written, so pins run in parallel with each other; {@link #gc} holds the write
 * lock from its key snapshot through mark and sweep, so no pin is checked against blocks a
 * running GC is about to delete, and no pin recorded before GC's mark is missed by it. A pin that
 * arrives during GC waits, then walks what is left (and reports anything GC took as missing).
 * GC also sweeps only the keys that existed <em>before</em> its mark, so blocks put while it runs
 * (a fetch in flight) are never deleted by that run. Blocks put earlier that are not yet pinned
 * are garbage to GC: fetch a DAG and pin it without a GC run in between, or the pin reports what
 * GC removed as missing and the caller fetches again. {@link #holdIfPinned} adds a hold to a root
 * held already under the same read lock, so no GC runs between its check and its write.
 *
 * <p>Limits: a pin walk visits at most {@code maxPinBlocks} blocks and a GC mark at most {@code
 * maxMarkBlocks}; a GC whose mark fails (limit, unreadable links) deletes nothing. GC's sets
 * live in a {@link GcScratch} (on disk in the relay), so its heap does not grow with the store. A root's
 * holders are as many as its pinners can be (bounded by them: followed databases, pin requests
 * per token); {@link #holders} reads at most {@link #MAX_LISTED_HOLDERS}.
 */
public final class PinStore {
  /**
   * Told when a root gets a hold ({@link #pin}, {@link #pinDeferred}, {@link #holdIfPinned}: maybe
   * one it had) and when its last hold is released; called on the pinning thread (under the GC
   * read lock for pins), so it must be quick and must not call back into the store's pins.
   */
  public interface Listener {
    void pinned(Cid root);

    void unpinned(Cid root);
  }

  private final List<Listener> listeners = new java.util.concurrent.CopyOnWriteArrayList<>();
  /** Datastore key prefix of pins. */
  public static final String PREFIX = "/pins/";
  /** Default bound on one pin's DAG. */
  public static final long DEFAULT_MAX_PIN_BLOCKS = 1_000_000;
  /** Default bound on everything pinned, for GC's mark. */
  public static final long DEFAULT_MAX_MARK_BLOCKS = 20_000_000;
  /** Most holders {@link #holders} lists. */
  public static final int MAX_LISTED_HOLDERS = 1_000;
  /** Entries read per datastore page by {@link #list} and {@link #migrateLegacy}. */
  static final int PAGE = 10_000;
  /** Most missing blocks of pinned DAGs a GC run lists ({@link GcResult#pinnedMissing}). */
  static final int MAX_LISTED_MISSING = 100;

  private static final Logger LOG = LoggerFactory.getLogger(PinStore.class);

  private final Datastore datastore;
  private final Blockstore blockstore;
  private final DagWalker pinWalker;
  private final LinkResolver resolver;
  private final long maxMarkBlocks;
  private final GcScratch scratch;
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
    this(datastore, blockstore, resolver, maxPinBlocks, maxMarkBlocks, GcScratch.inHeap());
  }

  /**
   * A pin store whose GC keeps its sets in {@code scratch} ({@link GcScratch#onDisk}: bounded
   * heap whatever the store holds).
   *
   * @param maxPinBlocks most blocks one pinned DAG may have
   * @param maxMarkBlocks most blocks all pins together may reach (GC's mark)
   */
  public PinStore(final Datastore datastore, final Blockstore blockstore,
      final LinkResolver resolver, final long maxPinBlocks, final long maxMarkBlocks,
      final GcScratch scratch) {
    this.datastore = Objects.requireNonNull(datastore, "datastore");
    this.blockstore = Objects.requireNonNull(blockstore, "blockstore");
    this.pinWalker = new DagWalker(blockstore, resolver, maxPinBlocks);
    this.resolver = Objects.requireNonNull(resolver, "resolver");
    if (maxMarkBlocks <= 0) {
      throw new IllegalArgumentException("maxMarkBlocks must be > 0: " + maxMarkBlocks);
    }
    this.maxMarkBlocks = maxMarkBlocks;
    this.scratch = Objects.requireNonNull(scratch, "scratch");
  }

  /**
   * Pins the DAG under {@code root} for {@code holder} when every block of it is in the
   * blockstore; otherwise records nothing and returns the absent CIDs. Pinning a root pinned
   * already (by this holder or another) walks it again (a cheap completeness check) and adds
   * the hold.
   *
   * @throws DagLimitExceededException when the DAG has more than {@code maxPinBlocks} blocks
   * @throws LinkResolutionException when a block's links cannot be read
   */
  public PinResult pin(final Cid root, final PinHolder holder) {
    return pin(root, holder, false);
  }

  /**
   * As {@link #pin}, but the hold's entry becomes durable only with the datastore's next commit
   * ({@link Datastore#writeDeferred}), for pins that a later pass writes again if a crash loses
   * them (a replicated log's entries). The blocks are durable before the entry is written all
   * the same.
   */
  public PinResult pinDeferred(final Cid root, final PinHolder holder) {
    return pin(root, holder, true);
  }

  private PinResult pin(final Cid root, final PinHolder holder, final boolean deferred) {
    Objects.requireNonNull(holder, "holder");
    final Cid canonical = root.canonical();
    gcLock.readLock().lock();
    try {
      final DagWalker.Result walk = pinWalker.walk(List.of(root));
      if (!walk.complete()) {
        return new PinResult.Incomplete(root, walk.missing());
      }
      // Nothing references a block before it is durable.
      blockstore.sync();
      write(canonical, holder, deferred);
      return new PinResult.Pinned(root, walk.reached().size(), walk.bytes());
    } finally {
      gcLock.readLock().unlock();
    }
  }

  /**
   * Adds {@code holder}'s hold to {@code root} when something holds it already (no walk: a
   * pinned DAG is complete, and GC cannot run between the check and the write); false, and
   * nothing written, when nothing holds it (the caller pins it with {@link #pin}).
   *
   * @param deferred write as {@link #pinDeferred} does
   */
  public boolean holdIfPinned(final Cid root, final PinHolder holder, final boolean deferred) {
    Objects.requireNonNull(holder, "holder");
    final Cid canonical = root.canonical();
    gcLock.readLock().lock();
    try {
      if (datastore.get(key(canonical, holder)).isPresent()) {
        return true;
      }
      if (!isPinned(canonical)) {
        return false;
      }
      write(canonical, holder, deferred);
      return true;
    } finally {
      gcLock.readLock().unlock();
    }
  }

  private void write(final Cid canonical, final PinHolder holder, final boolean deferred) {
    final String key = key(canonical, holder);
    if (deferred) {
      datastore.writeDeferred(Map.of(key, canonical.bytes()), List.of());
    } else {
      datastore.put(key, canonical.bytes());
    }
    for (final Listener listener : listeners) {
      listener.pinned(canonical);
    }
  }

  /** Adds a listener of pins and releases (the relay's DHT providing). */
  public void listen(final Listener listener) {
    listeners.add(Objects.requireNonNull(listener, "listener"));
  }

  /**
   * Releases {@code holder}'s hold on {@code root}; the root stays pinned while anything else
   * holds it, and its blocks go at the next GC once nothing does. False when this holder did not
   * hold it (nothing changes: no holder can release another's hold).
   */
  public boolean release(final Cid root, final PinHolder holder) {
    Objects.requireNonNull(holder, "holder");
    final Cid canonical = root.canonical();
    final boolean released = datastore.delete(key(canonical, holder));
    if (released && !listeners.isEmpty() && !isPinned(canonical)) {
      for (final Listener listener : listeners) {
        listener.unpinned(canonical);
      }
    }
    return released;
  }

  /** Whether anything holds {@code root} (as a root; blocks inside pinned DAGs are not). */
  public boolean isPinned(final Cid root) {
    final Cid canonical = root.canonical();
    return !datastore.scan(prefix(canonical), null, 1).isEmpty()
        || datastore.get(PREFIX + canonical).isPresent();
  }

  /** Whether {@code holder} holds {@code root}. */
  public boolean isHeldBy(final Cid root, final PinHolder holder) {
    return datastore.get(key(root.canonical(), holder)).isPresent();
  }

  /**
   * Who holds {@code root}, at most {@link #MAX_LISTED_HOLDERS} of them, in key order; a pin not
   * migrated yet shows as {@link PinHolder#LEGACY}.
   */
  public List<PinHolder> holders(final Cid root) {
    final Cid canonical = root.canonical();
    final String prefix = prefix(canonical);
    final List<PinHolder> out = new ArrayList<>();
    if (datastore.get(PREFIX + canonical).isPresent()) {
      out.add(PinHolder.LEGACY);
    }
    for (final Datastore.Entry entry : datastore.scan(prefix, null, MAX_LISTED_HOLDERS)) {
      final PinHolder holder = PinHolder.parse(entry.key().substring(prefix.length()));
      if (holder != null && !out.contains(holder) && out.size() < MAX_LISTED_HOLDERS) {
        out.add(holder);
      }
    }
    return out;
  }

  /**
   * Every pinned root (canonical), once, in key order; legacy entries not migrated yet are
   * included. Unreadable entries are skipped with a warning. Read in pages of the datastore.
   */
  public List<Cid> list() {
    final List<Cid> roots = new ArrayList<>();
    final boolean legacy = forEachRoot(roots::add);
    // A legacy key (Qm…, or a root also held in the new layout) sorts apart from the holds.
    return legacy ? List.copyOf(new LinkedHashSet<>(roots)) : roots;
  }

  /**
   * How many roots are pinned, read in pages without keeping them (a root whose legacy entry was
   * not migrated yet may count twice).
   */
  public long count() {
    final long[] count = {0};
    forEachRoot(root -> count[0]++);
    return count[0];
  }

  /**
   * Calls {@code visitor} with each pinned root in key order, once per run of adjacent holds
   * (a root with a legacy entry too may come twice), one datastore page at a time; true when a
   * legacy entry was seen.
   */
  public boolean forEachRoot(final Consumer<Cid> visitor) {
    boolean legacy = false;
    Cid last = null;
    String after = null;
    while (true) {
      final List<Datastore.Entry> page = datastore.scan(PREFIX, after, PAGE);
      for (final Datastore.Entry entry : page) {
        final Cid root;
        try {
          root = Cid.fromBytes(entry.value()).canonical();
        } catch (final MultiformatException e) {
          LOG.warn("ignoring unreadable pin {}: {}", entry.key(), e.getMessage());
          continue;
        }
        legacy |= entry.key().indexOf('/', PREFIX.length()) < 0;
        // The holds of one root are adjacent in key order.
        if (!root.equals(last)) {
          visitor.accept(root);
          last = root;
        }
      }
      if (page.size() < PAGE) {
        return legacy;
      }
      after = page.get(page.size() - 1).key();
    }
  }

  /**
   * Rewrites every pin recorded before holders existed ({@code /pins/<cid text>}) as a hold of
   * {@link PinHolder#LEGACY} on the canonical CID, one datastore write (put and delete) per page;
   * run once at start-up, before pins are used. Unreadable entries are left as they are (GC
   * skips them, as before). Returns how many were rewritten.
   */
  public int migrateLegacy() {
    int migrated = 0;
    gcLock.writeLock().lock();
    try {
      String after = null;
      while (true) {
        final List<Datastore.Entry> page = datastore.scan(PREFIX, after, PAGE);
        final Map<String, byte[]> puts = new LinkedHashMap<>();
        final List<String> deletes = new ArrayList<>();
        for (final Datastore.Entry entry : page) {
          if (entry.key().indexOf('/', PREFIX.length()) >= 0) {
            continue;
          }
          final Cid root;
          try {
            root = Cid.fromBytes(entry.value()).canonical();
          } catch (final MultiformatException e) {
            LOG.warn("pin {} is unreadable; left as it is: {}", entry.key(), e.getMessage());
            continue;
          }
          puts.put(key(root, PinHolder.LEGACY), root.bytes());
          deletes.add(entry.key());
        }
        if (!deletes.isEmpty()) {
          // One write: the new hold and the old entry's removal commit together.
          datastore.write(puts, deletes);
          migrated += deletes.size();
        }
        if (page.size() < PAGE) {
          break;
        }
        after = page.get(page.size() - 1).key();
      }
    } finally {
      gcLock.writeLock().unlock();
    }
    if (migrated > 0) {
      LOG.info("pins: {} pin(s) recorded before pins had holders are now held by {}", migrated,
          PinHolder.LEGACY);
    }
    return migrated;
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
   *
   * <p>Memory: the run's sets (the stored keys, the blocks marked, the walk's frontier beyond
   * {@link GcScratch#heapFrontier()} CIDs) are kept in a {@link GcScratch} space, on disk when the store
   * was given an on-disk scratch: the heap a run takes is then bounded whatever the store holds.
   * The roots are read a datastore page at a time, each walked before the next page is read.
   */
  public GcResult gc(final Predicate<Multihash> sweepable) {
    return gc(sweepable, List::of, Runnable::run);
  }

  /** Blocks deleted in one page ({@link #gc(Predicate, Supplier, Consumer)}). */
  public static final int DELETE_PAGE = 64;

  /**
   * As {@link #gc(Predicate)}, with two more hands.
   *
   * <p>{@code held}: marking also what is held of the DAGs under it, roots that are not pins but
   * whose blocks must stay while they are in use (a gateway response streaming a cached DAG),
   * asked for under GC's lock, after the pins' mark. Best effort, since anyone may make these
   * DAGs: their missing blocks are not reported, a block whose links cannot be read is kept
   * without its links, and past {@code maxMarkBlocks} the rest is left unmarked instead of
   * failing the run.
   *
   * <p>{@code aroundPage}: the sweepable blocks are deleted a page ({@value #DELETE_PAGE}) at a
   * time, each page run by it: the GC leader of relays sharing the stores runs it under its
   * lease's fence, so a page is deleted strictly before a takeover of the leadership, never
   * after (an exception it throws ends the run, nothing more deleted).
   */
  public GcResult gc(final Predicate<Multihash> sweepable,
      final Supplier<? extends Collection<Cid>> held, final Consumer<Runnable> aroundPage) {
    Objects.requireNonNull(sweepable, "sweepable");
    Objects.requireNonNull(held, "held");
    Objects.requireNonNull(aroundPage, "aroundPage");
    gcLock.writeLock().lock();
    try (GcScratch.Space space = scratch.open("gc-mark")) {
      final MVMap<byte[], Boolean> snapshot = space.map("snapshot");
      blockstore.forEachKey(cid -> snapshot.put(cid.multihash().bytes(), Boolean.TRUE));
      final Mark mark = new Mark(space);
      final long roots = mark.walkRoots();
      if (!mark.missing.isEmpty()) {
        LOG.warn("GC: {} block(s) of pinned DAGs are missing, e.g. {}", mark.missingCount,
            mark.missing.get(0));
      }
      mark.walkHeld(held.get());
      final long[] removed = {0};
      final long scanned = snapshot.sizeAsLong();
      final Iterator<byte[]> keys = snapshot.keyIterator(null);
      final List<Multihash> page = new ArrayList<>(DELETE_PAGE);
      final Runnable deletePage = () -> {
        for (final Multihash multihash : page) {
          if (blockstore.delete(Blocks.rawCid(multihash))) {
            removed[0]++;
          }
        }
      };
      while (keys.hasNext()) {
        final byte[] key = keys.next();
        if (mark.reached.containsKey(key)) {
          continue;
        }
        final Multihash multihash = Multihash.decode(key);
        if (sweepable.test(multihash)) {
          page.add(multihash);
          if (page.size() == DELETE_PAGE) {
            aroundPage.accept(deletePage);
            page.clear();
          }
        }
      }
      if (!page.isEmpty()) {
        aroundPage.accept(deletePage);
      }
      gcRuns.incrementAndGet();
      gcRemoved.addAndGet(removed[0]);
      return new GcResult((int) Math.min(Integer.MAX_VALUE, roots), mark.reached.sizeAsLong(),
          scanned, removed[0], mark.missing);
    } finally {
      gcLock.writeLock().unlock();
    }
  }

  /**
   * GC's mark: every DAG under every root, each (codec, multihash) visited once, as
   * {@link DagWalker} walks, but with its visited and reached sets in a scratch space and a
   * frontier that keeps at most {@link GcScratch#heapFrontier()} CIDs in the heap (the rest in the space).
   * The order of the walk does not matter to a mark.
   */
  private final class Mark {
    final MVMap<byte[], Boolean> visited;
    final MVMap<byte[], Boolean> reached;
    final MVMap<Long, byte[]> spilled;
    final ArrayDeque<Cid> frontier = new ArrayDeque<>();
    final List<Cid> missing = new ArrayList<>();
    long missingCount;
    long spilledTop;
    /** Walking held roots, not pins: best effort. */
    boolean held;

    Mark(final GcScratch.Space space) {
      visited = space.map("visited");
      reached = space.map("reached");
      spilled = space.map("frontier");
    }

    /** Walks every root, a page of roots at a time; returns how many roots there were. */
    long walkRoots() {
      final long[] roots = {0};
      forEachRoot(root -> {
        roots[0]++;
        push(root);
        drain();
      });
      return roots[0];
    }

    /** Walks roots that are not pins, best effort ({@link #gc(Predicate, Supplier)}). */
    void walkHeld(final Collection<Cid> roots) {
      held = true;
      try {
        for (final Cid root : roots) {
          push(root);
          drain();
        }
      } catch (final DagLimitExceededException e) {
        LOG.debug("GC: held DAGs beyond the mark's limit are not kept: {}", e.getMessage());
      }
    }

    private void push(final Cid cid) {
      if (frontier.size() >= scratch.heapFrontier()) {
        spilled.put(spilledTop++, cid.bytes());
      } else {
        frontier.push(cid);
      }
    }

    private Cid pop() {
      if (!frontier.isEmpty()) {
        return frontier.pop();
      }
      if (spilledTop == 0) {
        return null;
      }
      return Cid.fromBytes(spilled.remove(--spilledTop));
    }

    private void drain() {
      for (Cid cid = pop(); cid != null; cid = pop()) {
        // CIDv0 and CIDv1 dag-pb of one multihash are the same block with the same links.
        if (visited.putIfAbsent(cid.toV1().bytes(), Boolean.TRUE) != null) {
          continue;
        }
        if (visited.sizeAsLong() > maxMarkBlocks) {
          throw new DagLimitExceededException(
              "GC mark exceeds " + maxMarkBlocks + " blocks");
        }
        final Optional<byte[]> block = blockstore.get(cid);
        if (block.isEmpty() && held) {
          continue;
        }
        if (block.isEmpty()) {
          missingCount++;
          if (missing.size() < MAX_LISTED_MISSING) {
            missing.add(cid);
          }
          continue;
        }
        if (!Blocks.isIdentity(cid)) {
          reached.put(cid.multihash().bytes(), Boolean.TRUE);
        }
        final List<Cid> links;
        try {
          links = resolver.links(cid, block.get());
        } catch (final RuntimeException e) {
          if (!held) {
            throw e;
          }
          continue;
        }
        for (final Cid link : links) {
          if (!visited.containsKey(link.toV1().bytes())) {
            push(link);
          }
        }
      }
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

  /** The prefix of every hold of a canonical root. */
  private static String prefix(final Cid canonical) {
    return PREFIX + canonical + "/";
  }

  private static String key(final Cid canonical, final PinHolder holder) {
    return prefix(canonical) + holder.id();
  }
}
