package io.relaypinner.relay.sync;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.prometheus.metrics.model.snapshots.CounterSnapshot;
import io.prometheus.metrics.model.snapshots.MetricSnapshot;
import io.relaypinner.ipfs.blockstore.StoreUnavailableException;
import io.relaypinner.ipfs.datastore.MemoryDatastore;
import io.relaypinner.ipfs.datastore.MvStoreDatastore;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.multiformats.Multicodec;
import io.relaypinner.multiformats.Multihash;
import io.relaypinner.orbitdb.OrbitDbAddress;
import io.relaypinner.relay.config.SyncConfig;
import io.relaypinner.relay.testing.MutableClock;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The sync engine's scheduling with a controlled clock, timer and syncer: no sleeps. */
class SyncEngineTest {
  private static final Duration TIMEOUT = Duration.ofSeconds(30);
  private static final Duration COOLDOWN = Duration.ofSeconds(60);
  private static final Instant START = Instant.parse("2026-11-22T10:00:00Z");
  private static final String A = address("a");
  private static final String B = address("b");
  private static final String C = address("c");

  private final MutableClock clock = new MutableClock(START);
  private final ManualTimer timer = new ManualTimer(clock);
  private final ControlledSyncer syncer = new ControlledSyncer();
  private final PrometheusRegistry registry = new PrometheusRegistry();
  private final List<AutoCloseable> toClose = new ArrayList<>();

  @TempDir
  Path tempDir;

  @AfterEach
  void tearDown() throws Exception {
    for (final String address : List.of(A, B, C)) {
      syncer.release(address);
    }
    for (int i = toClose.size() - 1; i >= 0; i--) {
      toClose.get(i).close();
    }
  }

  /** A database address ({@code /orbitdb/zdpu…}) made from {@code seed}. */
  static String address(final String seed) {
    return new OrbitDbAddress(manifest(seed)).toString();
  }

  /**
   * The same manifest as {@link #address} in base32, {@code /orbitdb/bafy…}: a well-formed CID
   * that no JS OrbitDB peer opens, refused by the one rule.
   */
  static String base32Address(final String seed) {
    return OrbitDbAddress.PREFIX + manifest(seed);
  }

  private static Cid manifest(final String seed) {
    return Cid.v1(Multicodec.DAG_CBOR, Multihash.sha2_256(seed.getBytes(StandardCharsets.UTF_8)));
  }

  private SyncEngine engine(final int slots, final DatabaseSyncer databaseSyncer,
      final SyncHistory history) {
    final SyncEngine engine = new SyncEngine(
        new SyncConfig(TIMEOUT, COOLDOWN, slots, SyncConfig.DEFAULT_MEDIA_CID_FIELDS),
        databaseSyncer, history, registry, clock, timer);
    toClose.add(engine);
    return engine;
  }

  private SyncEngine engine(final int slots) {
    return engine(slots, syncer, new SyncHistory(new MemoryDatastore(), 100));
  }

  private static SyncOutcome outcome(final CompletableFuture<SyncOutcome> future)
      throws Exception {
    return future.get(10, TimeUnit.SECONDS);
  }

  private double counter(final String name) {
    for (final MetricSnapshot snapshot : registry.scrape()) {
      if (snapshot.getMetadata().getPrometheusName().equals(name)) {
        return ((CounterSnapshot) snapshot).getDataPoints().get(0).getValue();
      }
    }
    throw new AssertionError("no metric " + name);
  }

  @Test
  void aSyncFailedByAStoreOutage_isRetriedWithBackOffAndNoCooldown_andAtOnceWhenTheStoreIsBack()
      throws Exception {
    final AtomicInteger calls = new AtomicInteger();
    final AtomicInteger outages = new AtomicInteger(3);
    final SyncEngine engine = engine(2, context -> {
      calls.incrementAndGet();
      if (outages.getAndDecrement() > 0) {
        throw new StoreUnavailableException("s3", "bucket unreachable", null);
      }
      return new SyncResult(context.address(), 1, 1, 1, true, false, List.of());
    }, new SyncHistory(new MemoryDatastore(), 100));

    // 503 store_unavailable for the caller; nothing recorded as synced.
    final SyncOutcome first = outcome(engine.requestSync(A));
    assertThat(first).isInstanceOf(SyncOutcome.Failed.class);
    assertThat(((SyncOutcome.Failed) first).unavailableStore()).isEqualTo("s3");
    assertThat(engine.history().get(A)).isEmpty();
    await().atMost(Duration.ofSeconds(10)).until(() -> engine.stats().failedSyncs() == 1);

    // Retried after 2 s, then 4 s: back-off, no cooldown of 60 s.
    timer.advance(SyncEngine.STORE_RETRY_MIN.minusMillis(1));
    assertThat(calls.get()).isEqualTo(1);
    timer.advance(Duration.ofMillis(1));
    await().atMost(Duration.ofSeconds(10)).until(() -> engine.stats().failedSyncs() == 2);
    assertThat(calls.get()).isEqualTo(2);
    assertThat(engine.storeRetries()).isEqualTo(1);
    timer.advance(Duration.ofSeconds(3));
    assertThat(calls.get()).isEqualTo(2);

    // The store answers again: the failed sync runs at once, not at its next back-off.
    engine.storeRecovered();
    await().atMost(Duration.ofSeconds(10)).until(() -> engine.stats().failedSyncs() == 3);
    engine.storeRecovered();
    await().atMost(Duration.ofSeconds(10)).until(() -> engine.history().get(A).isPresent());
    assertThat(calls.get()).isEqualTo(4);

    // Once it succeeded, the back-off timers left do not sync it again.
    timer.advance(SyncEngine.STORE_RETRY_MAX);
    engine.storeRecovered();
    assertThat(calls.get()).isEqualTo(4);
    assertThat(engine.recentProblems()).allMatch(p -> p.kind().equals("sync_store_unavailable"));
  }

  @Test
  void enqueue_shouldWaitForASlot_whenTwoSlotsAreBusy() {
    final SyncEngine engine = engine(2);

    assertThat(engine.enqueue(A, SyncTrigger.FOLLOW)).isTrue();
    clock.advance(Duration.ofSeconds(5));
    assertThat(engine.enqueue(B, SyncTrigger.MESSAGE)).isTrue();
    assertThat(engine.enqueue(C, SyncTrigger.MESSAGE)).isTrue();
    await().atMost(Duration.ofSeconds(10))
        .until(() -> syncer.isRunning(A) && syncer.isRunning(B));

    clock.advance(Duration.ofSeconds(1));
    final SyncQueueStats queue = engine.stats().syncQueue();
    assertThat(queue.active()).isEqualTo(2);
    assertThat(queue.waiting()).isEqualTo(1);
    assertThat(queue.queuedTopics()).isEqualTo(3);
    assertThat(queue.activeTopics()).containsExactly(
        new SyncQueueStats.ActiveTopic(A, 6_000), new SyncQueueStats.ActiveTopic(B, 1_000));
    assertThat(syncer.calls(C)).isZero();

    syncer.release(A);
    await().atMost(Duration.ofSeconds(10)).until(() -> syncer.isRunning(C));
    assertThat(engine.stats().syncQueue().waiting()).isZero();
    assertThat(engine.history().get(A)).isPresent();
  }

  @Test
  void requestSync_shouldRunOnceAndAnswerCoalesced_whenSameAddressIsRequestedTwice()
      throws Exception {
    final SyncEngine engine = engine(2);

    final CompletableFuture<SyncOutcome> first = engine.requestSync(A);
    final CompletableFuture<SyncOutcome> second = engine.requestSync(A);
    assertThat(engine.enqueue(A, SyncTrigger.FOLLOW)).isFalse();
    await().atMost(Duration.ofSeconds(10)).until(() -> syncer.isRunning(A));
    assertThat(engine.stats().syncQueue().queuedTopics()).isEqualTo(1);
    syncer.release(A);

    final SyncOutcome one = outcome(first);
    final SyncOutcome two = outcome(second);
    assertThat(one).isInstanceOf(SyncOutcome.Completed.class);
    assertThat(one.coalesced()).isFalse();
    assertThat(two).isInstanceOf(SyncOutcome.Completed.class);
    assertThat(two.coalesced()).isTrue();
    assertThat(((SyncOutcome.Completed) two).result())
        .isEqualTo(((SyncOutcome.Completed) one).result());
    assertThat(syncer.calls(A)).isEqualTo(1);
    final SyncStats stats = engine.stats();
    assertThat(stats.syncOperations()).isEqualTo(1);
    // "Pinned" reaches the engine by one route, never through a result.
    assertThat(stats.totalPinned()).isZero();
    engine.mediaPinned("bafkmedia-1");
    assertThat(engine.stats().totalPinned()).isEqualTo(1);
    assertThat(engine.stats().pinnedMediaCids()).containsExactly("bafkmedia-1");
  }

  @Test
  void requestSync_shouldTimeOutReclaimSlotAndCoolDown_whenSyncOutlivesTheTimeout()
      throws Exception {
    final SyncEngine engine = engine(1);
    final CompletableFuture<SyncOutcome> first = engine.requestSync(A);
    await().atMost(Duration.ofSeconds(10)).until(() -> syncer.isRunning(A));
    assertThat(engine.enqueue(B, SyncTrigger.MESSAGE)).isTrue();
    assertThat(engine.stats().syncQueue().waiting()).isEqualTo(1);

    timer.advance(TIMEOUT);

    final SyncOutcome timedOut = outcome(first);
    assertThat(timedOut).isEqualTo(new SyncOutcome.TimedOut(TIMEOUT.toMillis(), false));
    // The slot went to B while A still runs in the background.
    await().atMost(Duration.ofSeconds(10)).until(() -> syncer.isRunning(B));
    assertThat(syncer.isRunning(A)).isTrue();
    SyncQueueStats queue = engine.stats().syncQueue();
    assertThat(queue.timedOutSyncs()).isEqualTo(1);
    assertThat(queue.cooldownTopics()).isEqualTo(1);
    assertThat(queue.active()).isEqualTo(1);
    assertThat(queue.activeTopics()).extracting(SyncQueueStats.ActiveTopic::topic)
        .containsExactly(B);
    assertThat(queue.queuedTopics()).isEqualTo(2);
    assertThat(counter("orbitdb_sync_timed_out")).isEqualTo(1.0);

    // A retry coalesces onto the sync that still runs, and gets its result.
    final CompletableFuture<SyncOutcome> retry = engine.requestSync(A);
    syncer.release(A);
    final SyncOutcome late = outcome(retry);
    assertThat(late).isInstanceOf(SyncOutcome.Completed.class);
    assertThat(late.coalesced()).isTrue();
    assertThat(syncer.calls(A)).isEqualTo(1);
    assertThat(engine.history().get(A)).isPresent();
    queue = engine.stats().syncQueue();
    assertThat(queue.queuedTopics()).isEqualTo(1);
    assertThat(queue.cooldownTopics()).isEqualTo(1);
  }

  @Test
  void timeout_shouldKeepSlot_whenTooManyLateSyncsRunDetached() {
    final SyncEngine engine = engine(1);
    final String d = address("d");
    assertThat(engine.maxDetached()).isEqualTo(2);
    for (final String address : List.of(A, B, C)) {
      engine.enqueue(address, SyncTrigger.FOLLOW);
    }
    engine.enqueue(d, SyncTrigger.FOLLOW);
    for (final String address : List.of(A, B, C)) {
      await().atMost(Duration.ofSeconds(10)).until(() -> syncer.isRunning(address));
      timer.advance(TIMEOUT);
    }

    final SyncQueueStats queue = engine.stats().syncQueue();
    assertThat(queue.timedOutSyncs()).isEqualTo(3);
    // A and B run detached; C keeps its slot, so D still waits.
    assertThat(queue.activeTopics()).extracting(SyncQueueStats.ActiveTopic::topic)
        .containsExactly(C);
    assertThat(queue.waiting()).isEqualTo(1);
    assertThat(queue.queuedTopics()).isEqualTo(4);
    assertThat(syncer.calls(d)).isZero();

    syncer.release(A);
    syncer.release(d);
    await().atMost(Duration.ofSeconds(10)).until(() -> engine.history().get(A).isPresent());
    // A's end frees a detached place, not a slot: D waits for C.
    assertThat(engine.stats().syncQueue().waiting()).isEqualTo(1);
    syncer.release(C);
    await().atMost(Duration.ofSeconds(10)).until(() -> engine.history().get(d).isPresent());
  }

  @Test
  void history_shouldSkipUnreadableEntries_whenLoading() {
    final MemoryDatastore datastore = new MemoryDatastore();
    datastore.put(SyncHistory.KEY_PREFIX + A.substring(9),
        "2026-11-22T09:00:00Z".getBytes(StandardCharsets.UTF_8));
    datastore.put(SyncHistory.KEY_PREFIX + "not-a-cid",
        "2026-11-22T09:00:00Z".getBytes(StandardCharsets.UTF_8));
    // Stored before the address rule was one: a base32 manifest CID is not an address.
    datastore.put(SyncHistory.KEY_PREFIX + base32Address("old").substring(9),
        "2026-11-22T09:00:00Z".getBytes(StandardCharsets.UTF_8));
    datastore.put(SyncHistory.KEY_PREFIX + B.substring(9),
        "yesterday".getBytes(StandardCharsets.UTF_8));

    final SyncHistory history = new SyncHistory(datastore, 10);
    history.load();

    assertThat(history.all()).containsExactly(
        new SyncHistory.Entry(A, Instant.parse("2026-11-22T09:00:00Z")));
  }

  @Test
  void requestSyncAndEnqueue_shouldRefuseAnythingButADatabaseAddress_withoutCountingIt()
      throws Exception {
    final SyncHistory history = new SyncHistory(new MemoryDatastore(), 100);
    final SyncEngine engine = engine(2, syncer, history);
    final String base32 = base32Address("a");

    for (final String refused : java.util.Arrays.asList(base32, "/orbitdb/zzz",
        "/orbitdb/not-a-cid", A + "/extra", A.substring(9), "", null)) {
      assertThatThrownBy(() -> engine.requestSync(refused))
          .isInstanceOf(IllegalArgumentException.class);
      for (final SyncTrigger trigger : SyncTrigger.values()) {
        assertThatThrownBy(() -> engine.enqueue(refused, trigger))
            .isInstanceOf(IllegalArgumentException.class);
      }
      assertThatThrownBy(() -> history.record(refused, START))
          .isInstanceOf(IllegalArgumentException.class);
    }

    // Nothing ran, failed, cooled down, was queued or recorded: nothing to resume later.
    timer.advance(SyncEngine.RESUME_MAX.multipliedBy(2));
    assertThat(syncer.calls(base32)).isZero();
    final SyncStats stats = engine.stats();
    assertThat(stats.syncOperations()).isZero();
    assertThat(stats.failedSyncs()).isZero();
    assertThat(stats.syncQueue().queuedTopics()).isZero();
    assertThat(stats.syncQueue().cooldownTopics()).isZero();
    assertThat(engine.resumedSyncs()).isZero();
    assertThat(engine.recentProblems()).isEmpty();
    assertThat(history.all()).isEmpty();

    // The same database by its one address syncs.
    syncer.release(A);
    assertThat(outcome(engine.requestSync(A))).isInstanceOf(SyncOutcome.Completed.class);
    assertThat(history.get(A)).isPresent();
  }

  @Test
  void enqueue_shouldSkipTopic_whenInCooldownAfterFailure() throws Exception {
    final SyncEngine engine = engine(2);
    syncer.fail(A);
    syncer.release(A);

    final SyncOutcome failed = outcome(engine.requestSync(A));

    assertThat(failed).isEqualTo(new SyncOutcome.Failed("cannot open " + A, false));
    assertThat(engine.stats().failedSyncs()).isEqualTo(1);
    assertThat(engine.stats().syncQueue().cooldownTopics()).isEqualTo(1);
    assertThat(engine.enqueue(A, SyncTrigger.MESSAGE)).isFalse();
    assertThat(engine.skippedInCooldown()).isEqualTo(1);
    assertThat(syncer.calls(A)).isEqualTo(1);
    assertThat(engine.history().get(A)).isEmpty();

    // An explicit request runs anyway.
    assertThat(outcome(engine.requestSync(A))).isInstanceOf(SyncOutcome.Failed.class);
    assertThat(syncer.calls(A)).isEqualTo(2);

    // After the cooldown, topic triggers run again.
    clock.advance(COOLDOWN);
    assertThat(engine.stats().syncQueue().cooldownTopics()).isZero();
    assertThat(engine.enqueue(A, SyncTrigger.MESSAGE)).isTrue();
    await().atMost(Duration.ofSeconds(10)).until(() -> syncer.calls(A) == 3);
  }

  @Test
  void enqueue_shouldSyncOnceMore_whenMessagesArriveDuringSync() throws Exception {
    final SyncEngine engine = engine(2);
    assertThat(engine.enqueue(A, SyncTrigger.FOLLOW)).isTrue();
    await().atMost(Duration.ofSeconds(10)).until(() -> syncer.isRunning(A));

    assertThat(engine.enqueue(A, SyncTrigger.MESSAGE)).isFalse();
    assertThat(engine.enqueue(A, SyncTrigger.MESSAGE)).isFalse();
    syncer.release(A);

    await().atMost(Duration.ofSeconds(10)).until(() -> syncer.calls(A) == 2
        && engine.stats().syncQueue().queuedTopics() == 0);
    assertThat(engine.stats().syncOperations()).isEqualTo(2);
  }

  @Test
  void anIncompleteResult_isASuccess_butNotRecordedAsSynced() throws Exception {
    final AtomicInteger calls = new AtomicInteger();
    final SyncEngine engine = engine(2, context -> new SyncResult(context.address(), 5, 2, 1,
        true, false, List.of(), calls.incrementAndGet() > 1),
        new SyncHistory(new MemoryDatastore(), 100));
    // A follower's sync ended before the owner fetched everything: no lastSyncedAt yet.
    assertThat(outcome(engine.requestSync(A))).isInstanceOf(SyncOutcome.Completed.class);
    assertThat(engine.history().get(A)).isEmpty();
    assertThat(engine.stats().failedSyncs()).isZero();
    // Complete: recorded.
    assertThat(outcome(engine.requestSync(A))).isInstanceOf(SyncOutcome.Completed.class);
    assertThat(engine.history().get(A)).isPresent();
  }

  @Test
  void aFailedSync_isResumedWhenItsCooldownEnds_thenWithDoublingDelays_untilOneSucceeds()
      throws Exception {
    final AtomicInteger failures = new AtomicInteger(2);
    final List<SyncTrigger> triggers = new java.util.concurrent.CopyOnWriteArrayList<>();
    final SyncEngine engine = engine(2, context -> {
      triggers.add(context.trigger());
      if (failures.getAndDecrement() > 0) {
        throw new IllegalStateException("still missing 3 blocks");
      }
      return new SyncResult(context.address(), 1, 1, 1, true, false, List.of());
    }, new SyncHistory(new MemoryDatastore(), 100));
    assertThat(engine.enqueue(A, SyncTrigger.FOLLOW)).isTrue();
    await().atMost(Duration.ofSeconds(10)).until(() -> engine.stats().failedSyncs() == 1);

    // Nothing else would sync it (its writer sends nothing new): resumed after the cooldown.
    timer.advance(COOLDOWN.minusSeconds(1));
    assertThat(triggers).hasSize(1);
    timer.advance(Duration.ofSeconds(1));
    await().atMost(Duration.ofSeconds(10)).until(() -> engine.stats().failedSyncs() == 2);
    assertThat(engine.resumedSyncs()).isEqualTo(1);
    // Failed again: the next try after twice the cooldown.
    timer.advance(COOLDOWN);
    assertThat(triggers).hasSize(2);
    timer.advance(COOLDOWN);
    await().atMost(Duration.ofSeconds(10)).until(() -> engine.history().get(A).isPresent());
    assertThat(triggers).containsExactly(SyncTrigger.FOLLOW, SyncTrigger.RESUME,
        SyncTrigger.RESUME);
    // Succeeded: no more resumptions.
    await().atMost(Duration.ofSeconds(10))
        .until(() -> engine.stats().syncQueue().queuedTopics() == 0);
    timer.advance(SyncEngine.RESUME_MAX);
    assertThat(triggers).hasSize(3);
    assertThat(counter("orbitdb_sync_resumed")).isEqualTo(2);
  }

  @Test
  void takeover_shouldRunAsAFullSyncAfterTheRunningOne_andInCooldown() throws Exception {
    final SyncEngine engine = engine(2);
    // A follower's sync runs when this relay takes the lease over: the owner syncs after it,
    // once (later topic messages do not replace the takeover).
    assertThat(engine.enqueue(A, SyncTrigger.FOLLOW)).isTrue();
    await().atMost(Duration.ofSeconds(10)).until(() -> syncer.isRunning(A));
    assertThat(engine.enqueue(A, SyncTrigger.TAKEOVER)).isFalse();
    assertThat(engine.enqueue(A, SyncTrigger.MESSAGE)).isFalse();
    syncer.release(A);
    await().atMost(Duration.ofSeconds(10)).until(() -> syncer.calls(A) == 2
        && engine.stats().syncQueue().queuedTopics() == 0);
    assertThat(syncer.triggers(A)).containsExactly(SyncTrigger.FOLLOW, SyncTrigger.TAKEOVER);

    // In cooldown after a failure, topic messages wait; a takeover does not.
    syncer.fail(B);
    syncer.release(B);
    assertThat(outcome(engine.requestSync(B))).isInstanceOf(SyncOutcome.Failed.class);
    assertThat(engine.enqueue(B, SyncTrigger.MESSAGE)).isFalse();
    assertThat(engine.enqueue(B, SyncTrigger.TAKEOVER)).isTrue();
    await().atMost(Duration.ofSeconds(10)).until(() -> syncer.calls(B) == 2);
    assertThat(syncer.triggers(B)).containsExactly(SyncTrigger.HTTP, SyncTrigger.TAKEOVER);
  }

  @Test
  void enqueue_shouldNotSyncAgain_whenNoMessageArrivedDuringSync() throws Exception {
    final SyncEngine engine = engine(2);
    syncer.release(A);
    assertThat(outcome(engine.requestSync(A))).isInstanceOf(SyncOutcome.Completed.class);
    assertThat(engine.enqueue(B, SyncTrigger.FOLLOW)).isTrue();
    syncer.release(B);
    await().atMost(Duration.ofSeconds(10))
        .until(() -> engine.stats().syncQueue().queuedTopics() == 0);

    assertThat(syncer.calls(A)).isEqualTo(1);
    assertThat(syncer.calls(B)).isEqualTo(1);
  }

  @Test
  void history_shouldSurviveRestart_whenStoredInMvStore() throws Exception {
    final Path file = tempDir.resolve("datastore.mv");
    try (MvStoreDatastore datastore = new MvStoreDatastore(file)) {
      final SyncHistory history = new SyncHistory(datastore, 100);
      history.load();
      final SyncEngine engine = engine(2, context -> {
        context.countOperation();
        return SyncResult.empty(context.address());
      }, history);
      final SyncOutcome outcome = outcome(engine.requestSync(A));
      assertThat(outcome).isEqualTo(new SyncOutcome.Completed(SyncResult.empty(A), false));
      engine.close();
    }

    try (MvStoreDatastore datastore = new MvStoreDatastore(file)) {
      final SyncHistory history = new SyncHistory(datastore, 100);
      history.load();
      assertThat(history.all()).containsExactly(new SyncHistory.Entry(A, START));
    }
  }

  @Test
  void history_shouldForgetOldestEntry_whenOverItsBound() {
    final MemoryDatastore datastore = new MemoryDatastore();
    final SyncHistory history = new SyncHistory(datastore, 2);
    history.record(A, START);
    history.record(B, START.plusSeconds(1));
    history.record(C, START.plusSeconds(2));

    assertThat(history.all()).extracting(SyncHistory.Entry::address).containsExactly(C, B);
    assertThat(datastore.scan(SyncHistory.KEY_PREFIX)).hasSize(2);
  }

  @Test
  void close_shouldLetRunningSyncFinishAndDropQueued_whenWithinGrace() throws Exception {
    final SyncEngine engine = engine(1);
    engine.enqueue(A, SyncTrigger.FOLLOW);
    await().atMost(Duration.ofSeconds(10)).until(() -> syncer.isRunning(A));
    final CompletableFuture<SyncOutcome> queued = engine.requestSync(B);

    final CompletableFuture<Void> closed =
        CompletableFuture.runAsync(() -> engine.close(Duration.ofSeconds(30)));
    // The queued request is dropped at once, then the running sync may finish.
    assertThat(outcome(queued)).isEqualTo(
        new SyncOutcome.Failed("the relay is shutting down", false));
    assertThat(engine.enqueue(C, SyncTrigger.MESSAGE)).isFalse();
    syncer.release(A);
    closed.get(10, TimeUnit.SECONDS);

    assertThat(engine.history().get(A)).isPresent();
    assertThat(syncer.calls(B)).isZero();
    assertThat(outcome(engine.requestSync(C))).isInstanceOf(SyncOutcome.Failed.class);
  }

  @Test
  void close_shouldInterruptSyncAndRecordNothing_whenGraceRunsOut() throws Exception {
    final SyncEngine engine = engine(1);
    final CompletableFuture<SyncOutcome> running = engine.requestSync(A);
    await().atMost(Duration.ofSeconds(10)).until(() -> syncer.isRunning(A));

    engine.close(Duration.ofMillis(1));

    assertThat(syncer.wasInterrupted(A)).isTrue();
    assertThat(outcome(running)).isInstanceOf(SyncOutcome.Failed.class);
    assertThat(engine.history().get(A)).isEmpty();
    assertThat(engine.stats().failedSyncs()).isZero();
    assertThat(engine.stats().syncQueue().queuedTopics()).isZero();
  }
}
