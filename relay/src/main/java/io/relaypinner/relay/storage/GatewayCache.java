package io.relaypinner.relay.storage;

import io.relaypinner.multiformats.Cid;
import io.relaypinner.multiformats.Multihash;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Which unpinned blocks the gateway keeps ({@code RELAY_GATEWAY_CACHE_MAX_BYTES}): blocks the
 * {@code /ipfs/} network fallback fetched, least recently used first, at most {@code maxBytes}
 * of them. The cache only decides what to keep; the blocks themselves live in the node's one
 * blockstore. An evicted block is handed to garbage collection ({@link #drainEvicted}), which
 * deletes it unless a pin reaches it: a block that is cached and later pinned (or pinned and
 * also fetched through the gateway) stays for as long as the pin does.
 *
 * <p>In memory only: after a restart the cache is empty, and the blocks it held are ordinary
 * unpinned blocks that GC removes once they are older than its grace period.
 *
 * <p>Bounded: at most {@code maxBytes} of blocks and {@code maxBlocks} entries (at most
 * {@link #MAX_BLOCKS}; {@link #forHeap} sizes it from the heap); at most
 * {@code maxBlocks} evicted blocks wait for GC (more are dropped from the list and GC takes
 * them after its grace period like any unpinned block). Thread-safe.
 */
public final class GatewayCache {
  /** Most blocks the cache keeps track of, whatever their size and the heap. */
  public static final int MAX_BLOCKS = 500_000;
  /**
   * Heap one tracked block costs at most, from the object layout (compressed references): its
   * entry in the access-ordered index and its table slot (~50 B), its multihash (object and a
   * 32-byte digest, ~72 B), its size (an {@code Integer}, 16 B), then its entry in the evicted
   * set (~45 B): ~185 B, rounded up.
   */
  static final int BLOCK_HEAP_BYTES = 256;
  /** The share of the heap the index may take: 1/32 (5 MiB of the launcher's 160 MiB). */
  static final int HEAP_SHARE_DIVISOR = 32;

  private final long maxBytes;
  private final int maxBlocks;
  /** Access order: the eldest is the least recently used. */
  private final LinkedHashMap<Multihash, Integer> blocks = new LinkedHashMap<>(16, 0.75f, true);
  private Set<Multihash> evicted = new HashSet<>();
  /** Blocks a fetch in progress relies on ({@link #hold}), with how many holds each has. */
  private final Map<Multihash, Integer> inUse = new HashMap<>();
  /** Roots of DAGs responses are streaming ({@link #holdDag}), with how many holds each has. */
  private final Map<Cid, Integer> dagsInUse = new HashMap<>();
  private long bytes;
  private long evictions;

  /** A cache of at most {@code maxBytes} (and {@link #MAX_BLOCKS} blocks). */
  public GatewayCache(final long maxBytes) {
    this(maxBytes, MAX_BLOCKS);
  }

  /**
   * A cache of at most {@code maxBytes}, tracking no more blocks than a 32nd of {@code maxHeap}
   * holds ({@link #maxBlocksFor}): tiny blocks (a DAG of 100-byte leaves fetched through the
   * gateway's fallback) must not make the index outgrow the heap while the bytes stay far below
   * {@code maxBytes}.
   */
  public static GatewayCache forHeap(final long maxBytes, final long maxHeap) {
    return new GatewayCache(maxBytes, maxBlocksFor(maxHeap));
  }

  /**
   * The blocks an index may track on a heap of {@code maxHeap} bytes: a 32nd of it at
   * {@link #BLOCK_HEAP_BYTES} each (20,480 on the launcher's 160 MiB), at least 1,024, at most
   * {@link #MAX_BLOCKS}.
   */
  public static int maxBlocksFor(final long maxHeap) {
    final long fits = maxHeap / HEAP_SHARE_DIVISOR / BLOCK_HEAP_BYTES;
    return (int) Math.max(1_024, Math.min(MAX_BLOCKS, fits));
  }

  /** The most blocks this cache tracks. */
  public int maxBlocks() {
    return maxBlocks;
  }

  GatewayCache(final long maxBytes, final int maxBlocks) {
    if (maxBytes < 0 || maxBlocks < 1) {
      throw new IllegalArgumentException("cache bounds must be positive");
    }
    this.maxBytes = maxBytes;
    this.maxBlocks = maxBlocks;
  }

  /** The byte budget. */
  public long maxBytes() {
    return maxBytes;
  }

  /**
   * Records that a gateway request used these blocks (multihash to size): new ones are added,
   * known ones become the most recently used. Then the least recently used are evicted until the
   * budget holds. Returns whether anything was evicted (GC has work).
   */
  public synchronized boolean admit(final Map<Multihash, Integer> used) {
    for (final Map.Entry<Multihash, Integer> block : used.entrySet()) {
      final Integer before = blocks.put(block.getKey(), block.getValue());
      if (before == null) {
        bytes += block.getValue();
        evicted.remove(block.getKey());
      } else {
        bytes += block.getValue() - before;
      }
    }
    return trimTo(maxBytes);
  }

  /** Evicts the least recently used blocks until at most {@code target} bytes stay. */
  public synchronized boolean trimTo(final long target) {
    boolean any = false;
    final Iterator<Map.Entry<Multihash, Integer>> eldest = blocks.entrySet().iterator();
    while ((bytes > target || blocks.size() > maxBlocks) && eldest.hasNext()) {
      final Map.Entry<Multihash, Integer> block = eldest.next();
      eldest.remove();
      bytes -= block.getValue();
      evictions++;
      if (evicted.size() < maxBlocks) {
        evicted.add(block.getKey());
      }
      any = true;
    }
    return any;
  }

  /**
   * Whether the cache keeps this block (does not count as a use): it is cached, or a fetch in
   * progress holds it ({@link #hold}). GC deletes neither.
   */
  public synchronized boolean holds(final Multihash multihash) {
    return blocks.containsKey(multihash) || inUse.containsKey(multihash);
  }

  /**
   * Keeps {@code multihash} from GC while a fetch that relies on it runs, cached or evicted: the
   * root of a DAG the network fallback is fetching was often cached on its own a while before
   * (path resolution), and other requests' admissions could evict it meanwhile; once GC deleted
   * it, the request answered 404 after fetching the whole DAG, and the DAG's admission walk (from
   * the root) found nothing, so the blocks under it stayed uncached and unbounded by the budget
   * until GC's grace period (issue 36, GatewayFallbackAttackIT). Holds count: each is given back
   * with one {@link #release}. Not counted against the budget (one block per fetch in progress).
   */
  public synchronized void hold(final Multihash multihash) {
    inUse.merge(multihash, 1, Integer::sum);
  }

  /** Gives back one {@link #hold} of {@code multihash}. */
  public synchronized void release(final Multihash multihash) {
    inUse.computeIfPresent(multihash, (key, count) -> count == 1 ? null : count - 1);
  }

  /**
   * Keeps what is held of the DAG under {@code root} from GC while a response streams it:
   * other requests' admissions may evict its blocks meanwhile, and GC deleted evicted blocks at
   * once, cutting the body short (issue 36). GC marks from the held roots as from pins
   * ({@link StorageGc}), at every run while the hold lasts. Holds count: each is given back
   * with one {@link #releaseDag}. Not counted against the budget: an evicted block a response
   * kept goes after GC's grace period once the response ended.
   */
  public synchronized void holdDag(final Cid root) {
    dagsInUse.merge(root, 1, Integer::sum);
  }

  /** Gives back one {@link #holdDag} of {@code root}. */
  public synchronized void releaseDag(final Cid root) {
    dagsInUse.computeIfPresent(root, (key, count) -> count == 1 ? null : count - 1);
  }

  /** The roots {@link #holdDag} holds now, for GC to mark from. */
  public synchronized List<Cid> heldDags() {
    return List.copyOf(dagsInUse.keySet());
  }

  /** The blocks evicted since the last call, for GC to delete if no pin reaches them. */
  public synchronized Set<Multihash> drainEvicted() {
    final Set<Multihash> out = evicted;
    evicted = new HashSet<>();
    return out;
  }

  /** Bytes of the blocks kept. */
  public synchronized long bytes() {
    return bytes;
  }

  /** Blocks kept. */
  public synchronized int blockCount() {
    return blocks.size();
  }

  /** Blocks evicted since start. */
  public synchronized long evictions() {
    return evictions;
  }
}
