package io.relaypinner.relay.sync;

import io.netty.util.concurrent.DefaultThreadFactory;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.relaypinner.common.Backoff;
import io.relaypinner.common.Failures;
import io.relaypinner.ipfs.blockstore.StoreUnavailableException;
import io.relaypinner.orbitdb.OrbitDbAddress;
import io.relaypinner.relay.config.SyncConfig;
import io.relaypinner.relay.pubsub.OrbitDbTopics;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Schedules database syncs, spec 3.5 and 8: {@code RELAY_SYNC_SLOTS} syncs run at once on worker
 * threads, the others wait in a queue (at most {@link #MAX_QUEUED} addresses); an address already
 * queued or running is not queued again.
 *
 * <ul>
 *   <li>Pubsub triggers ({@link #enqueue}) are skipped while the topic is in cooldown
 *       ({@code RELAY_ORBITDB_SYNC_COOLDOWN_MS} after a sync timed out or failed). A topic
 *       message that arrives while a sync of its database runs queues one more sync of it once
 *       that one ends (however many messages arrived), so no update is left unsynced.
 *   <li>An explicit request ({@link #requestSync}, {@code POST /pinning/sync}) coalesces onto a
 *       queued or running sync of the same address, or else queues a fresh one at the head of the
 *       queue, cooldown or not. Its caller gets {@link SyncOutcome.TimedOut} once
 *       {@code RELAY_PINNING_SYNC_TIMEOUT_MS} passed; the sync keeps going.
 *   <li>A sync running longer than {@code RELAY_PINNING_SYNC_TIMEOUT_MS} loses its slot: another
 *       worker starts the next queued sync, {@code timedOutSyncs} rises, the topic enters
 *       cooldown, and the late sync finishes in the background, where its result is still
 *       recorded. At most {@link #maxDetached()} such syncs run detached; beyond that a timed-out
 *       sync keeps its slot, which bounds the threads a database that never syncs can take.
 *   <li>A sync that failed because a shared store was unavailable (a {@link
 *       StoreUnavailableException} in its cause chain) enters no cooldown: it is queued again
 *       ({@link SyncTrigger#RETRY}) after {@link #STORE_RETRY_MIN}, doubling up to
 *       {@link #STORE_RETRY_MAX} while the store stays down; its first failure is logged at INFO
 *       (the store logged the outage once), the others at DEBUG.
 *   <li>A sync that failed otherwise runs again when its cooldown ends ({@link
 *       SyncTrigger#RESUME}), then after twice the delay each time up to {@link #RESUME_MAX},
 *       until one succeeds: nothing else would sync a database whose peers stay connected but
 *       send nothing new.
 *   <li>{@link #close(Duration)} drains: no new syncs, queued ones are dropped, running ones get a
 *       grace period and are then interrupted. A sync's result is recorded (history, counters)
 *       outside the interruptible part, so shutdown never leaves a record half-written.
 * </ul>
 *
 * <p>Timestamps, running times and cooldowns come from the {@link Clock}; the timeouts from the
 * {@link Timer}; both are injected so that tests control time. Thread-safe.
 */
public final class SyncEngine implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(SyncEngine.class);
  /** How many pinned media CIDs {@code /pinning/stats} lists (the count is unbounded). */
  public static final int MAX_LISTED_PINS = 10_000;
  /** Addresses queued or running at most: beyond that, new syncs are refused. */
  public static final int MAX_QUEUED = 2 * OrbitDbTopics.MAX_TOPICS;
  /** Grace period of {@link #close()}. */
  public static final Duration DEFAULT_GRACE = Duration.ofSeconds(5);
  /** First delay before a sync that met a store outage runs again. */
  public static final Duration STORE_RETRY_MIN = Duration.ofSeconds(2);
  /** Longest delay between the retries of a sync while a store stays down. */
  public static final Duration STORE_RETRY_MAX = Duration.ofSeconds(60);
  /** Longest delay between the resumptions of a failing sync. */
  public static final Duration RESUME_MAX = Duration.ofMinutes(30);
  private static final Backoff STORE_RETRY = Backoff.of(STORE_RETRY_MIN, STORE_RETRY_MAX);
  /** How long {@link #close} waits for interrupted syncs before giving up on them. */
  private static final Duration INTERRUPT_WAIT = Duration.ofSeconds(2);

  /** Runs a task after a delay; the returned handle cancels it. */
  @FunctionalInterface
  public interface Timer {
    Runnable schedule(Runnable task, Duration delay);

    /** A timer on a scheduled executor. */
    static Timer of(final ScheduledExecutorService executor) {
      return (task, delay) -> {
        final ScheduledFuture<?> future =
            executor.schedule(task, delay.toNanos(), TimeUnit.NANOSECONDS);
        return () -> future.cancel(false);
      };
    }
  }

  private enum Phase { QUEUED, SYNCING, RECORDING, DONE }

  /** One sync of one address, from queued to recorded. Fields guarded by the engine's lock. */
  private final class Job implements SyncContext {
    final String address;
    /** Why it runs; a queued topic-message sync becomes a takeover when one arrives. */
    volatile SyncTrigger trigger;
    final CompletableFuture<SyncResult> done = new CompletableFuture<>();
    Phase phase = Phase.QUEUED;
    long startedMillis;
    boolean detached;
    /** Sync once more afterwards, for this trigger (a topic message or a takeover arrived
     * while this sync ran), or null. */
    SyncTrigger followUp;
    Thread thread;
    Runnable cancelTimeout = () -> { };
    volatile boolean cancelled;

    Job(final String address, final SyncTrigger trigger) {
      this.address = address;
      this.trigger = trigger;
    }

    @Override
    public String address() {
      return address;
    }

    @Override
    public SyncTrigger trigger() {
      return trigger;
    }

    @Override
    public Duration timeout() {
      return timeout;
    }

    @Override
    public void countOperation() {
      syncOperations.incrementAndGet();
    }

    @Override
    public boolean cancelled() {
      return cancelled;
    }
  }

  private final DatabaseSyncer syncer;
  private final SyncHistory history;
  private final Clock clock;
  private final Timer timer;
  private final ScheduledExecutorService ownTimer;
  private final int slots;
  private final int maxDetached;
  private final Duration timeout;
  private final Duration cooldown;
  /** When a sync that keeps failing (not for a store outage) is resumed: from its cooldown. */
  private final Backoff resume;
  private final ThreadPoolExecutor workers;
  private final SyncMetrics metrics;

  private final Object lock = new Object();
  private final List<Consumer<String>> explicitRequestListeners = new CopyOnWriteArrayList<>();
  /** Queued or running (including detached) jobs by address. */
  private final Map<String, Job> jobs = new HashMap<>();
  private final ArrayDeque<Job> waiting = new ArrayDeque<>();
  private final Set<Job> inSlots = new LinkedHashSet<>();
  private int detached;
  /** Address to end of cooldown (clock millis). */
  private final Map<String, Long> cooldownUntil = new HashMap<>();
  /** Address to its consecutive syncs failed by a store outage (at most MAX_QUEUED). */
  private final Map<String, Integer> storeFailures = new HashMap<>();
  /** Address to the number of its failures in a row (not for a store), to resume it. */
  private final Map<String, Integer> failuresInARow = new HashMap<>();
  private final AtomicLong storeRetries = new AtomicLong();
  private final AtomicLong resumedSyncs = new AtomicLong();
  private long timedOutSyncs;
  private boolean closing;
  private final LinkedHashSet<String> pinnedMedia = new LinkedHashSet<>();

  private final AtomicLong syncOperations = new AtomicLong();
  private final AtomicLong failedSyncs = new AtomicLong();
  private final AtomicLong totalPinned = new AtomicLong();
  private final AtomicLong skippedInCooldown = new AtomicLong();
  private final RecentProblems problems;

  /**
   * An engine with its own timer thread.
   *
   * @param history loaded by the caller ({@link SyncHistory#load()}) before syncs start
   */
  public SyncEngine(final SyncConfig config, final DatabaseSyncer syncer,
      final SyncHistory history, final PrometheusRegistry registry, final Clock clock) {
    this(config, syncer, history, registry, clock, null);
  }

  /**
   * An engine whose timeouts run on {@code timer} ({@code null}: its own timer thread).
   *
   * @param history loaded by the caller ({@link SyncHistory#load()}) before syncs start
   */
  public SyncEngine(final SyncConfig config, final DatabaseSyncer syncer,
      final SyncHistory history, final PrometheusRegistry registry, final Clock clock,
      final Timer timer) {
    Objects.requireNonNull(config, "config");
    this.syncer = Objects.requireNonNull(syncer, "syncer");
    this.history = Objects.requireNonNull(history, "history");
    this.clock = Objects.requireNonNull(clock, "clock");
    this.problems = new RecentProblems(clock);
    this.slots = config.slots();
    this.maxDetached = 2 * config.slots();
    this.timeout = config.pinningSyncTimeout();
    this.cooldown = config.syncCooldown();
    // A cooldown longer than RESUME_MAX resumes after RESUME_MAX each time.
    this.resume = Backoff.of(
        cooldown.compareTo(RESUME_MAX) < 0 ? cooldown : RESUME_MAX, RESUME_MAX);
    if (timer == null) {
      final ScheduledThreadPoolExecutor scheduler = new ScheduledThreadPoolExecutor(1,
          new DefaultThreadFactory("relay-sync-timer", true));
      // Every request schedules its deadline; most are cancelled long before they are due.
      scheduler.setRemoveOnCancelPolicy(true);
      this.ownTimer = scheduler;
      this.timer = Timer.of(ownTimer);
    } else {
      this.ownTimer = null;
      this.timer = timer;
    }
    final int threads = slots + maxDetached;
    this.workers = new ThreadPoolExecutor(threads, threads, 30, TimeUnit.SECONDS,
        new LinkedBlockingQueue<>(), new DefaultThreadFactory("relay-sync", true));
    this.workers.allowCoreThreadTimeOut(true);
    this.metrics = new SyncMetrics(Objects.requireNonNull(registry, "registry"),
        this::waitingCount, this::activeCount, this::cooldownCount);
  }

  /**
   * The timer of this engine's timeouts, for syncers that wait for a time of the same clock
   * (it outlives every sync the engine waits for at {@link #close}).
   */
  public Timer timer() {
    return timer;
  }

  /** Syncs that may run on after their timeout without a slot, at most. */
  public int maxDetached() {
    return maxDetached;
  }

  /** The sync history this engine records into. */
  public SyncHistory history() {
    return history;
  }

  /**
   * Queues a sync started by the topic of a database (spec 6). Not queued when the address is
   * queued or running already, in cooldown, or the engine is closing.
   *
   * @return whether a new sync was queued
   * @throws IllegalArgumentException when {@code address} is not a database address
   *     ({@link OrbitDbAddress#parse})
   */
  public boolean enqueue(final String address, final SyncTrigger trigger) {
    checkAddress(address);
    Objects.requireNonNull(trigger, "trigger");
    synchronized (lock) {
      if (closing) {
        return false;
      }
      final Job current = jobs.get(address);
      if (current != null) {
        if (trigger == SyncTrigger.TAKEOVER) {
          // The running sync may be a follower's: the new owner syncs again (a queued one has
          // not started yet and runs as the owner's full sync).
          if (current.phase == Phase.QUEUED) {
            current.trigger = SyncTrigger.TAKEOVER;
          } else {
            current.followUp = SyncTrigger.TAKEOVER;
          }
        } else if (trigger == SyncTrigger.MESSAGE && current.phase != Phase.QUEUED
            && current.followUp == null) {
          // The sync may already be past the point where it would see this update.
          current.followUp = SyncTrigger.MESSAGE;
        }
        return false;
      }
      if (jobs.size() >= MAX_QUEUED) {
        LOG.warn("sync of {} ({}) not queued: {} syncs queued already", address, trigger,
            MAX_QUEUED);
        problems.record("sync_refused", address, MAX_QUEUED + " syncs queued already");
        return false;
      }
      if (trigger != SyncTrigger.TAKEOVER && inCooldown(address)) {
        skippedInCooldown.incrementAndGet();
        LOG.debug("sync of {} ({}) skipped: in cooldown", address, trigger);
        return false;
      }
      final Job job = new Job(address, trigger);
      jobs.put(address, job);
      waiting.addLast(job);
      startWaiting();
      return true;
    }
  }

  /**
   * Tells {@code listener} about every explicit request ({@link #requestSync}), also one that
   * coalesces onto a sync already queued or running (spec 3.5: an explicit sync reconnects
   * peers seen on the topic). Called on the requesting thread; must not block.
   */
  public void onExplicitRequest(final Consumer<String> listener) {
    explicitRequestListeners.add(Objects.requireNonNull(listener, "listener"));
  }

  /**
   * An explicit sync (spec 4.5): waits on a queued or running sync of the same address
   * (coalesced), or queues a fresh one ahead of pubsub-triggered ones, cooldown or not. The
   * future never completes exceptionally; it completes with {@link SyncOutcome.TimedOut} when
   * {@code RELAY_PINNING_SYNC_TIMEOUT_MS} passes first.
   *
   * @throws IllegalArgumentException when {@code address} is not a database address
   *     ({@link OrbitDbAddress#parse})
   */
  public CompletableFuture<SyncOutcome> requestSync(final String address) {
    checkAddress(address);
    for (final Consumer<String> listener : explicitRequestListeners) {
      try {
        listener.accept(address);
      } catch (final RuntimeException e) {
        LOG.warn("explicit sync listener failed for {}: {}", address, e.toString());
      }
    }
    final Job job;
    final boolean coalesced;
    synchronized (lock) {
      if (closing) {
        return CompletableFuture.completedFuture(
            new SyncOutcome.Failed("the relay is shutting down", false));
      }
      final Job existing = jobs.get(address);
      coalesced = existing != null;
      if (coalesced) {
        job = existing;
      } else if (jobs.size() >= MAX_QUEUED) {
        return CompletableFuture.completedFuture(new SyncOutcome.Failed(
            "the sync queue is full (" + MAX_QUEUED + " databases)", false));
      } else {
        job = new Job(address, SyncTrigger.HTTP);
        jobs.put(address, job);
        waiting.addFirst(job);
        startWaiting();
      }
    }
    final CompletableFuture<SyncOutcome> answer = new CompletableFuture<>();
    final Runnable cancel = timer.schedule(
        () -> answer.complete(new SyncOutcome.TimedOut(timeout.toMillis(), coalesced)), timeout);
    job.done.whenComplete((result, error) -> {
      cancel.run();
      answer.complete(result != null
          ? new SyncOutcome.Completed(result, coalesced)
          : new SyncOutcome.Failed(message(error), coalesced, storeOf(error)));
    });
    return answer;
  }

  /**
   * Records a media pin that finished and counts for its database (spec 2.4 {@code totalPinned},
   * {@code pinnedMediaCids}): the one route by which "pinned" reaches the engine.
   */
  public void mediaPinned(final String cid) {
    Objects.requireNonNull(cid, "cid");
    synchronized (lock) {
      addPinned(cid);
    }
  }

  /** The counters and the queue as of now (spec 2.4). Answers from memory. */
  public SyncStats stats() {
    synchronized (lock) {
      final long now = clock.millis();
      final List<Job> active = new ArrayList<>(inSlots);
      active.sort(Comparator.comparingLong((Job job) -> job.startedMillis)
          .thenComparing(job -> job.address));
      final List<SyncQueueStats.ActiveTopic> topics = new ArrayList<>(active.size());
      for (final Job job : active) {
        topics.add(new SyncQueueStats.ActiveTopic(job.address,
            Math.max(0, now - job.startedMillis)));
      }
      final SyncQueueStats queue = new SyncQueueStats(waiting.size(), inSlots.size(), topics,
          jobs.size(), cooldownCountLocked(now), timedOutSyncs);
      return new SyncStats(totalPinned.get(), syncOperations.get(), failedSyncs.get(),
          List.copyOf(pinnedMedia), queue);
    }
  }

  /** The slots syncs run in ({@code RELAY_SYNC_SLOTS}). */
  public int slots() {
    return slots;
  }

  /** Failed, timed-out and refused syncs, most recent first (the last 50). */
  public List<RecentProblems.Problem> recentProblems() {
    return problems.list();
  }

  /**
   * A store outage ended: every sync it failed runs again now (not at its next back-off).
   * Never blocks.
   */
  public void storeRecovered() {
    final List<String> failed;
    synchronized (lock) {
      failed = new ArrayList<>(storeFailures.keySet());
    }
    for (final String address : failed) {
      retryAfterStoreFailure(address);
    }
  }

  private void retryAfterStoreFailure(final String address) {
    synchronized (lock) {
      if (!storeFailures.containsKey(address)) {
        return;   // it succeeded meanwhile
      }
    }
    if (enqueue(address, SyncTrigger.RETRY)) {
      storeRetries.incrementAndGet();
    }
  }

  private void resumeAfterFailure(final String address) {
    synchronized (lock) {
      if (!failuresInARow.containsKey(address)) {
        return;   // it succeeded meanwhile
      }
    }
    if (enqueue(address, SyncTrigger.RESUME)) {
      resumedSyncs.incrementAndGet();
      metrics.resumed();
    }
  }

  /** Failed syncs queued again after their cooldown ({@link SyncTrigger#RESUME}), since start. */
  public long resumedSyncs() {
    return resumedSyncs.get();
  }

  /** Syncs queued again after a store outage failed them, since start. */
  public long storeRetries() {
    return storeRetries.get();
  }

  /** Pubsub triggers skipped because their topic was in cooldown, since start. */
  public long skippedInCooldown() {
    return skippedInCooldown.get();
  }

  /**
   * The one rule ({@link OrbitDbAddress#parse}), before anything is queued, counted, cooled down
   * or recorded: an address no JS peer can open would otherwise fail, cool down and be resumed
   * for good.
   */
  private void checkAddress(final String address) {
    if (!OrbitDbAddress.isValid(address)) {
      throw new IllegalArgumentException("not an OrbitDB address /orbitdb/<base58btc dag-cbor "
          + "CID>: " + address);
    }
  }

  private boolean inCooldown(final String address) {
    final Long until = cooldownUntil.get(address);
    if (until == null) {
      return false;
    }
    if (clock.millis() >= until) {
      cooldownUntil.remove(address);
      return false;
    }
    return true;
  }

  private int cooldownCountLocked(final long now) {
    cooldownUntil.values().removeIf(until -> now >= until);
    return cooldownUntil.size();
  }

  private int waitingCount() {
    synchronized (lock) {
      return waiting.size();
    }
  }

  private int activeCount() {
    synchronized (lock) {
      return inSlots.size();
    }
  }

  private int cooldownCount() {
    synchronized (lock) {
      return cooldownCountLocked(clock.millis());
    }
  }

  /** Starts queued syncs while slots are free. Holds the lock. */
  private void startWaiting() {
    while (!closing && inSlots.size() < slots && !waiting.isEmpty()) {
      final Job job = waiting.pollFirst();
      job.phase = Phase.SYNCING;
      job.startedMillis = clock.millis();
      inSlots.add(job);
      try {
        workers.execute(() -> run(job));
      } catch (final RejectedExecutionException e) {
        // Only after close(): the job ends as cancelled.
        job.cancelled = true;
        inSlots.remove(job);
        jobs.remove(job.address, job);
        job.phase = Phase.DONE;
        job.done.completeExceptionally(new CancellationException("sync engine closed"));
        continue;
      }
      job.cancelTimeout = timer.schedule(() -> onTimeout(job), timeout);
    }
  }

  /** The sync ran past its timeout: reclaim its slot, cool the topic down. */
  private void onTimeout(final Job job) {
    synchronized (lock) {
      if (job.phase == Phase.DONE || job.detached || closing) {
        return;
      }
      timedOutSyncs++;
      metrics.timedOut();
      problems.record("sync_timeout", job.address, "exceeded " + timeout.toMillis() + " ms");
      cooldownUntil.put(job.address, clock.millis() + cooldown.toMillis());
      if (detached < maxDetached) {
        job.detached = true;
        detached++;
        inSlots.remove(job);
        LOG.warn("sync of {} exceeded {} ms; its slot is reclaimed and it finishes in the "
            + "background (cooldown {} ms)", job.address, timeout.toMillis(), cooldown.toMillis());
        startWaiting();
      } else {
        LOG.warn("sync of {} exceeded {} ms; {} late syncs already run in the background, so it "
            + "keeps its slot", job.address, timeout.toMillis(), detached);
      }
    }
  }

  private void run(final Job job) {
    synchronized (lock) {
      job.thread = Thread.currentThread();
    }
    SyncResult result = null;
    Throwable error = null;
    try {
      if (job.cancelled) {
        throw new CancellationException("sync engine closed");
      }
      result = syncer.sync(job);
      if (result == null || !result.dbAddress().equals(job.address)) {
        throw new IllegalStateException("syncer answered " + (result == null ? "null"
            : result.dbAddress()) + " for " + job.address);
      }
    } catch (final Exception e) {
      result = null;
      error = e;
    } finally {
      synchronized (lock) {
        job.phase = Phase.RECORDING;
        job.thread = null;
        // An interrupt aimed at the sync must not break the datastore write below.
        Thread.interrupted();
      }
    }
    final boolean cancelled = job.cancelled && error != null;
    String outcome;
    if (error == null) {
      try {
        if (result.complete()) {
          history.record(job.address, clock.instant());
        }
        outcome = SyncMetrics.SUCCESS;
      } catch (final RuntimeException e) {
        error = e;
        outcome = SyncMetrics.FAILURE;
      }
    } else {
      outcome = cancelled ? SyncMetrics.CANCELLED : SyncMetrics.FAILURE;
    }
    final long millis;
    final boolean storeDown = outcome.equals(SyncMetrics.FAILURE)
        && StoreUnavailableException.find(error) != null;
    int storeFailed = 0;
    int resumeAfter = 0;
    synchronized (lock) {
      millis = Math.max(0, clock.millis() - job.startedMillis);
      if (outcome.equals(SyncMetrics.FAILURE)) {
        failedSyncs.incrementAndGet();
        if (storeDown && !closing && (storeFailures.containsKey(job.address)
            || storeFailures.size() < MAX_QUEUED)) {
          // Not the database's fault: retried with back-off (below), no cooldown.
          storeFailed = storeFailures.merge(job.address, 1, Integer::sum);
        } else {
          storeFailures.remove(job.address);
          cooldownUntil.put(job.address, clock.millis() + cooldown.toMillis());
          if (!closing && (failuresInARow.containsKey(job.address)
              || failuresInARow.size() < MAX_QUEUED)) {
            resumeAfter = failuresInARow.merge(job.address, 1, Integer::sum);
          }
        }
      } else if (outcome.equals(SyncMetrics.SUCCESS)) {
        storeFailures.remove(job.address);
        failuresInARow.remove(job.address);
      }
      job.phase = Phase.DONE;
      jobs.remove(job.address, job);
      if (job.detached) {
        detached--;
      } else {
        inSlots.remove(job);
      }
      final boolean takeover = job.followUp == SyncTrigger.TAKEOVER;
      if (job.followUp != null && !closing && !jobs.containsKey(job.address)
          && (takeover || !inCooldown(job.address)) && jobs.size() < MAX_QUEUED) {
        final Job next = new Job(job.address, job.followUp);
        jobs.put(job.address, next);
        waiting.addLast(next);
      }
      startWaiting();
      lock.notifyAll();
    }
    job.cancelTimeout.run();
    metrics.finished(outcome, millis);
    if (outcome.equals(SyncMetrics.SUCCESS)) {
      LOG.debug("synced {} ({}) in {} ms: {} new entries, {} media CIDs", job.address,
          job.trigger.name().toLowerCase(Locale.ROOT), millis, result.newEntries(),
          result.extractedMediaCids().size());
      job.done.complete(result);
    } else {
      if (storeFailed > 0) {
        final long delay = STORE_RETRY.delayMillis(storeFailed);
        if (storeFailed == 1) {
          LOG.info("sync of {} failed after {} ms: {}; retrying in {} ms, then with back-off "
              + "while the store is down", job.address, millis, message(error), delay);
        } else {
          LOG.debug("sync of {} failed again ({} times): {}; retrying in {} ms", job.address,
              storeFailed, message(error), delay);
        }
        problems.record("sync_store_unavailable", job.address, message(error));
        timer.schedule(() -> retryAfterStoreFailure(job.address), Duration.ofMillis(delay));
      } else if (outcome.equals(SyncMetrics.FAILURE)) {
        LOG.warn("sync of {} failed after {} ms: {} (cooldown {} ms)", job.address, millis,
            message(error), cooldown.toMillis());
        problems.record("sync_failed", job.address, message(error));
      }
      if (resumeAfter > 0) {
        final long delay = resume.delayMillis(resumeAfter);
        timer.schedule(() -> resumeAfterFailure(job.address), Duration.ofMillis(delay));
      }
      job.done.completeExceptionally(error);
    }
  }

  /** Holds the lock. */
  private void addPinned(final String cid) {
    totalPinned.incrementAndGet();
    pinnedMedia.remove(cid);
    pinnedMedia.add(cid);
    if (pinnedMedia.size() > MAX_LISTED_PINS) {
      final Iterator<String> oldest = pinnedMedia.iterator();
      oldest.next();
      oldest.remove();
    }
  }

  private static String storeOf(final Throwable error) {
    final StoreUnavailableException outage = StoreUnavailableException.find(error);
    return outage == null ? null : outage.store();
  }

  private static String message(final Throwable error) {
    return error == null ? "unknown error" : Failures.messageOf(Failures.unwrap(error));
  }

  /** {@link #close(Duration)} with {@link #DEFAULT_GRACE}. */
  @Override
  public void close() {
    close(DEFAULT_GRACE);
  }

  /**
   * Drains: no new syncs, queued ones are dropped (their waiting callers get a failure), running
   * ones may finish within {@code grace}, then they are interrupted and waited for a little more.
   * Returns when every sync ended, or logs a warning naming those that did not.
   */
  public void close(final Duration grace) {
    final List<Job> dropped = new ArrayList<>();
    synchronized (lock) {
      if (closing) {
        return;
      }
      closing = true;
      for (final Job job : waiting) {
        jobs.remove(job.address, job);
        job.phase = Phase.DONE;
        dropped.add(job);
      }
      waiting.clear();
    }
    for (final Job job : dropped) {
      job.done.completeExceptionally(new CancellationException("the relay is shutting down"));
    }
    if (!awaitIdle(grace)) {
      synchronized (lock) {
        for (final Job job : jobs.values()) {
          job.cancelled = true;
          if (job.phase == Phase.SYNCING && job.thread != null) {
            job.thread.interrupt();
          }
        }
      }
      if (!awaitIdle(INTERRUPT_WAIT)) {
        synchronized (lock) {
          LOG.warn("syncs still running at shutdown: {}", jobs.keySet());
        }
      }
    }
    workers.shutdown();
    if (ownTimer != null) {
      ownTimer.shutdownNow();
    }
  }

  /**
   * Waits at most {@code limit} for every sync to end. A shutdown deadline: real time on
   * purpose, not the engine's clock (a fixed or test clock must not make close wait forever).
   */
  private boolean awaitIdle(final Duration limit) {
    final long deadline = System.nanoTime() + limit.toNanos();
    synchronized (lock) {
      while (!jobs.isEmpty()) {
        final long left = deadline - System.nanoTime();
        if (left <= 0) {
          return false;
        }
        try {
          TimeUnit.NANOSECONDS.timedWait(lock, left);
        } catch (final InterruptedException e) {
          Thread.currentThread().interrupt();
          return false;
        }
      }
      return true;
    }
  }

  /** For diagnostics: the addresses queued or running, in no particular order. */
  public Set<String> inFlight() {
    synchronized (lock) {
      return Set.copyOf(jobs.keySet());
    }
  }
}
