package io.relaypinner.relay.storage;

import io.relaypinner.ipfs.pin.GcResult;
import io.relaypinner.ipfs.pin.GcScratch;
import io.relaypinner.ipfs.pin.PinStore;
import io.relaypinner.multiformats.Multihash;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Garbage collection of unpinned blocks: {@link #runOnce} is the one entry point, run on a
 * schedule ({@code RELAY_GC_INTERVAL_MS}) and on pressure ({@link #requestRun}: the quota is
 * near full, or the gateway cache evicted blocks).
 *
 * <p>A run: if the {@link GcPolicy} says no, nothing happens (counted {@code skipped}). Under
 * quota pressure the {@link GatewayCache} first gives up its least recently used blocks, as many
 * bytes as the store is above the pressure line. Then {@link PinStore#gc(java.util.function.Predicate)}
 * marks from every pin and, of the blocks no pin reaches, deletes:
 * <ul>
 *   <li>never a block the gateway cache keeps, nor one {@code alsoKeep} names (entries of
 *       replicated logs that wait for their media pin, {@link LogMembers}), nor one of a DAG a
 *       gateway response is streaming ({@link GatewayCache#holdDag}: marked like a pin's);
 *   <li>a block the cache evicted, at once;
 *   <li>any other unpinned block only once it has been seen unpinned for the <em>grace
 *       period</em> ({@code RELAY_GC_GRACE_MS}): blocks a pin, a replication join or a gateway
 *       fetch is writing right now are not pinned yet, and stay while it finishes. The first
 *       sighting is remembered in memory, so after a restart every unpinned block gets a whole
 *       grace period again.
 * </ul>
 * A block reached by a pin is never deleted (the mark), including one pinned during the run
 * (pins wait for the run's lock, blocks put during the run are not in its snapshot).
 *
 * <p>On stores shared by several relays ({@link GcPolicy#sharedStores()}, issue 24) the policy is
 * the GC-leader lease, so one relay sweeps, and the mark starts from every relay's pins (they
 * are in the shared PostgreSQL). Another relay's pin lock is not this one's, so nothing is
 * deleted on a first sighting: an unpinned block, evicted from the cache or not, goes only once
 * an earlier run of this leader saw it unpinned at least the grace period ago; blocks another
 * relay is writing (an import, a media pin) stay while it finishes and pins them. A leader that
 * loses the lease stops deleting at once, and one that (re)gains it starts its sightings over.
 * What remains: an old unpinned block another relay starts to use again (its put finds it
 * there) and pins after this run's mark may be deleted before that pin; the pin then reports it
 * missing and the next sync fetches it again.
 *
 * <p>Runs are serialized; a request while one runs or is queued is merged into it. Bounded: the
 * first-sighting map holds at most {@link #MAX_TRACKED} blocks (beyond, blocks are tracked in a
 * later run).
 *
 * <p>Memory: the sightings, the blocks {@code alsoKeep} names and the mark's sets
 * ({@link PinStore#gc(java.util.function.Predicate)}) are kept in a {@link GcScratch}: on disk
 * in the relay ({@code <DATASTORE_PATH>/gc}), so a run's heap is bounded by the scratch's page
 * caches, not by how many blocks are stored or pinned. (What {@code alsoKeep} reads to visit
 * its blocks is its own affair: {@link LogMembers} reads the logs' records a page at a time.) A
 * crash loses the sightings only (every unpinned block gets a whole grace period again, as after
 * any restart).
 */
public final class StorageGc {
  /**
   * Least time between two runs asked for by quota pressure: when nothing can be freed (all
   * pinned) every write near the quota would otherwise start another full mark.
   */
  public static final Duration PRESSURE_GAP = Duration.ofSeconds(10);

  /** Most unpinned blocks whose first sighting is remembered (on the scratch's disk). */
  public static final int MAX_TRACKED = 2_000_000;

  private static final Logger LOG = LoggerFactory.getLogger(StorageGc.class);

  /** What one {@link #runOnce} did. */
  public enum Outcome { DONE, SKIPPED, FAILED }

  private final PinStore pins;
  private final GatewayCache cache;
  private final StorageQuota quota;
  private final Clock clock;
  private final Duration grace;
  private final GcPolicy policy;
  private final KeptBlocks alsoKeep;
  private final GcScratch scratch;
  /** The sightings and each run's kept set; opened at the first run, closed by {@link #close}. */
  private GcScratch.Space space;
  private Map<byte[], Long> firstSeen;
  private final AtomicBoolean queued = new AtomicBoolean();
  private final AtomicLong runs = new AtomicLong();
  private final AtomicLong skipped = new AtomicLong();
  private final AtomicLong failed = new AtomicLong();
  private final AtomicLong removedBlocks = new AtomicLong();
  private final AtomicLong freedBytes = new AtomicLong();
  private volatile Executor executor;
  private final AtomicLong lastPressureRun = new AtomicLong(Long.MIN_VALUE);

  /**
   * @param grace how long an unpinned block is kept after GC first saw it (not for blocks the
   *     gateway cache evicted)
   */
  public StorageGc(final PinStore pins, final GatewayCache cache, final StorageQuota quota,
      final Clock clock, final Duration grace, final GcPolicy policy) {
    this(pins, cache, quota, clock, grace, policy, KeptBlocks.NONE);
  }

  /** As the full constructor, with its sets in the heap ({@link GcScratch#inHeap}). */
  public StorageGc(final PinStore pins, final GatewayCache cache, final StorageQuota quota,
      final Clock clock, final Duration grace, final GcPolicy policy,
      final KeptBlocks alsoKeep) {
    this(pins, cache, quota, clock, grace, policy, alsoKeep, GcScratch.inHeap());
  }

  /**
   * @param alsoKeep blocks kept although no pin reaches them (asked once per run, before the
   *     mark): e.g. {@link LogMembers}, the entries of replicated logs that wait for their media
   * @param scratch where the sightings and the kept set live ({@link GcScratch#onDisk}: bounded
   *     heap)
   */
  public StorageGc(final PinStore pins, final GatewayCache cache, final StorageQuota quota,
      final Clock clock, final Duration grace, final GcPolicy policy,
      final KeptBlocks alsoKeep, final GcScratch scratch) {
    this.alsoKeep = Objects.requireNonNull(alsoKeep, "alsoKeep");
    this.scratch = Objects.requireNonNull(scratch, "scratch");
    this.pins = Objects.requireNonNull(pins, "pins");
    this.cache = Objects.requireNonNull(cache, "cache");
    this.quota = Objects.requireNonNull(quota, "quota");
    this.clock = Objects.requireNonNull(clock, "clock");
    this.grace = Objects.requireNonNull(grace, "grace");
    if (grace.isNegative()) {
      throw new IllegalArgumentException("grace must not be negative");
    }
    this.policy = Objects.requireNonNull(policy, "policy");
  }

  /** Where {@link #requestRun} runs GC (one thread: runs never overlap there). */
  public void executeOn(final Executor executor) {
    this.executor = Objects.requireNonNull(executor, "executor");
  }

  /**
   * Asks for a run soon on the executor (pressure); merged with a run already queued. Never
   * blocks; before {@link #executeOn} it does nothing.
   */
  public void requestRun() {
    final Executor target = executor;
    if (target == null || !queued.compareAndSet(false, true)) {
      return;
    }
    try {
      target.execute(() -> {
        queued.set(false);
        runOnce();
      });
    } catch (final RejectedExecutionException e) {
      queued.set(false);
    }
  }

  /**
   * As {@link #requestRun}, for quota pressure: at most once per {@link #PRESSURE_GAP} (on the
   * clock).
   */
  public void requestRunUnderPressure() {
    final long now = clock.millis();
    final long last = lastPressureRun.get();
    if ((last == Long.MIN_VALUE || now - last >= PRESSURE_GAP.toMillis())
        && lastPressureRun.compareAndSet(last, now)) {
      requestRun();
    }
  }

  /** One collection (see the class comment). Never throws: a failure is logged and counted. */
  public synchronized Outcome runOnce() {
    if (!policy.mayCollect()) {
      skipped.incrementAndGet();
      // A node that collects again later (a new GC leader) starts its sightings over: what it
      // saw unpinned before may have been deleted and written anew since.
      forgetSightings();
      LOG.debug("GC skipped: not this node's turn");
      return Outcome.SKIPPED;
    }
    final boolean shared = policy.sharedStores();
    final AtomicBoolean stopped = new AtomicBoolean();
    final long started = clock.millis();
    try {
      final long excess = quota.excessBytes();
      if (excess > 0) {
        cache.trimTo(Math.max(0, cache.bytes() - excess));
      }
      final Set<Multihash> evicted = cache.drainEvicted();
      final GcScratch.Space sightings = space();
      final Map<byte[], Long> before = firstSeen;
      final Map<byte[], Boolean> kept = sightings.newMap("kept");
      final Map<byte[], Long> seen = sightings.newMap("seen");
      final long usedBefore = quota.usedBytes();
      final long now = clock.millis();
      final GcResult result;
      try {
        alsoKeep.forEach(multihash -> kept.put(multihash.bytes(), Boolean.TRUE));
        result = pins.gc(multihash -> sweepable(multihash, now, evicted, kept, before, seen,
            shared, stopped), cache::heldDags, policy::aroundDeletes);
      } catch (final RuntimeException e) {
        sightings.drop(seen);
        throw e;
      } finally {
        sightings.drop(kept);
      }
      if (before != null) {
        sightings.drop(before);
      }
      firstSeen = seen;
      final long tracked = seen.size();
      if (stopped.get()) {
        forgetSightings();
      }
      final long freed = Math.max(0, usedBefore - quota.usedBytes());
      runs.incrementAndGet();
      removedBlocks.addAndGet(result.removed());
      freedBytes.addAndGet(freed);
      quota.recheck();
      LOG.info("GC: removed {} unpinned block(s) ({} bytes), kept {} pinned block(s) of {} pin(s),"
              + " {} cached, {} in their grace period; {} ms", result.removed(), freed,
          result.marked(), result.pins(), cache.blockCount(), tracked,
          clock.millis() - started);
      return Outcome.DONE;
    } catch (final RuntimeException e) {
      failed.incrementAndGet();
      LOG.warn("GC failed, nothing more deleted: {}", e.toString());
      return Outcome.FAILED;
    }
  }

  /** Whether an unmarked block goes now (see the class comment); records its first sighting. */
  private boolean sweepable(final Multihash multihash, final long now,
      final Set<Multihash> evicted,
      final Map<byte[], Boolean> kept, final Map<byte[], Long> before,
      final Map<byte[], Long> seen, final boolean shared, final AtomicBoolean stopped) {
    if (stopped.get() || cache.holds(multihash)) {
      return false;
    }
    final byte[] key = multihash.bytes();
    if (kept.containsKey(key)) {
      return false;
    }
    final Long first = before != null ? before.get(key) : null;
    final long since = first != null ? first : now;
    // Shared stores: another node may be writing it; only a second look after the grace.
    final boolean due = shared ? first != null && now - since >= grace.toMillis()
        : evicted.contains(multihash) || now - since >= grace.toMillis();
    if (!due) {
      if (seen.size() < MAX_TRACKED) {
        seen.put(key, since);
      }
      return false;
    }
    if (shared && !policy.mayCollect()) {
      // Lost the leadership mid-run: another node decides from now on.
      stopped.set(true);
      return false;
    }
    return true;
  }

  /** The scratch space of the sightings, opened at the first run. */
  private GcScratch.Space space() {
    if (space == null) {
      space = scratch.open("gc-sightings");
    }
    return space;
  }

  /** Forgets every sighting (a new leader, a run that lost the lease). */
  private void forgetSightings() {
    if (firstSeen != null && space != null) {
      space.drop(firstSeen);
    }
    firstSeen = null;
  }

  /** Deletes the scratch space (its file on disk); a later run opens a new one. */
  public synchronized void close() {
    firstSeen = null;
    if (space != null) {
      final GcScratch.Space open = space;
      space = null;
      open.close();
    }
  }

  /** Completed runs. */
  public long runs() {
    return runs.get();
  }

  /** Runs the policy skipped. */
  public long skipped() {
    return skipped.get();
  }

  /** Runs that failed (nothing deleted by them after the failure). */
  public long failed() {
    return failed.get();
  }

  /** Blocks deleted by all runs. */
  public long removedBlocks() {
    return removedBlocks.get();
  }

  /** Bytes freed by all runs. */
  public long freedBytes() {
    return freedBytes.get();
  }

  /** The quota this GC frees room for. */
  public StorageQuota quota() {
    return quota;
  }

  /** The gateway cache whose blocks this GC keeps. */
  public GatewayCache cache() {
    return cache;
  }
}
