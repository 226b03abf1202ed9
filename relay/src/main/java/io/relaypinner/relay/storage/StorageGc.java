package io.relaypinner.relay.storage;

import io.relaypinner.ipfs.pin.GcResult;
import io.relaypinner.ipfs.pin.PinStore;
import io.relaypinner.multiformats.Multihash;
import java.time.Clock;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
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
 *       replicated logs that wait for their media pin, {@link LogMembers});
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
 */
public final class StorageGc {
  /**
   * Least time between two runs asked for by quota pressure: when nothing can be freed (all
   * pinned) every write near the quota would otherwise start another full mark.
   */
  public static final Duration PRESSURE_GAP = Duration.ofSeconds(10);

  /** Most unpinned blocks whose first sighting is remembered. */
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
  private final Supplier<Set<Multihash>> alsoKeep;
  private Map<Multihash, Long> firstSeen = new HashMap<>();
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
    this(pins, cache, quota, clock, grace, policy, Set::of);
  }

  /**
   * @param alsoKeep blocks kept although no pin reaches them (asked once per run, before the
   *     mark): e.g. {@link LogMembers}, the entries of replicated logs that wait for their media
   */
  public StorageGc(final PinStore pins, final GatewayCache cache, final StorageQuota quota,
      final Clock clock, final Duration grace, final GcPolicy policy,
      final Supplier<Set<Multihash>> alsoKeep) {
    this.alsoKeep = Objects.requireNonNull(alsoKeep, "alsoKeep");
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
      firstSeen = new HashMap<>();
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
      final Set<Multihash> kept = alsoKeep.get();
      final long now = clock.millis();
      final long graceMs = grace.toMillis();
      final Map<Multihash, Long> seen = new HashMap<>();
      final long usedBefore = quota.usedBytes();
      final Map<Multihash, Long> before = firstSeen;
      final GcResult result = pins.gc(multihash -> {
        if (stopped.get() || cache.holds(multihash) || kept.contains(multihash)) {
          return false;
        }
        final Long first = before.get(multihash);
        final long since = first != null ? first : now;
        // Shared stores: another node may be writing it; only a second look after the grace.
        final boolean due = shared ? first != null && now - since >= graceMs
            : evicted.contains(multihash) || now - since >= graceMs;
        if (!due) {
          if (seen.size() < MAX_TRACKED) {
            seen.put(multihash, since);
          }
          return false;
        }
        if (shared && !policy.mayCollect()) {
          // Lost the leadership mid-run: another node decides from now on.
          stopped.set(true);
          return false;
        }
        return true;
      });
      firstSeen = stopped.get() ? new HashMap<>() : seen;
      final long freed = Math.max(0, usedBefore - quota.usedBytes());
      runs.incrementAndGet();
      removedBlocks.addAndGet(result.removed());
      freedBytes.addAndGet(freed);
      quota.recheck();
      LOG.info("GC: removed {} unpinned block(s) ({} bytes), kept {} pinned block(s) of {} pin(s),"
              + " {} cached, {} in their grace period; {} ms", result.removed(), freed,
          result.marked(), result.pins(), cache.blockCount(), seen.size(),
          clock.millis() - started);
      return Outcome.DONE;
    } catch (final RuntimeException e) {
      failed.incrementAndGet();
      LOG.warn("GC failed, nothing more deleted: {}", e.toString());
      return Outcome.FAILED;
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
