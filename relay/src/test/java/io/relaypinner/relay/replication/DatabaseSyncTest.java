package io.relaypinner.relay.replication;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.relaypinner.ipfs.blockstore.MemoryBlockstore;
import io.relaypinner.ipfs.datastore.MemoryDatastore;
import io.relaypinner.ipfs.pin.CodecLinkResolver;
import io.relaypinner.ipfs.pin.PinStore;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.orbitdb.BlockFetcher;
import io.relaypinner.orbitdb.JavaWriter;
import io.relaypinner.orbitdb.OrbitDbAddress;
import io.relaypinner.orbitdb.OrbitDbReplica;
import io.relaypinner.orbitdb.OrbitDbReplicas;
import io.relaypinner.orbitdb.ReplicaContext;
import io.relaypinner.orbitdb.heads.HeadsEndpoint;
import io.relaypinner.orbitdb.identity.Identities;
import io.relaypinner.orbitdb.identity.IdentityVerifiers;
import io.relaypinner.orbitdb.log.Entry;
import io.relaypinner.orbitdb.log.LogConfig;
import io.relaypinner.relay.config.SyncConfig;
import io.relaypinner.relay.sync.ManualTimer;
import io.relaypinner.relay.sync.SyncContext;
import io.relaypinner.relay.sync.SyncResult;
import io.relaypinner.relay.sync.SyncTrigger;
import io.relaypinner.relay.testing.MutableClock;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import java.util.function.LongSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * One sync of one database ({@link DatabaseSync}) on a {@link MutableClock}, its deadlines on a
 * {@link ManualTimer}: it decides on the clock and waits for events (a head, a join that ends,
 * the timer at its next deadline), so the clock standing still holds it exactly where it is and
 * every step of time is seen at once. Blocks come from Java-written logs; no peer is connected.
 */
class DatabaseSyncTest {
  private static final Duration TIMEOUT = Duration.ofSeconds(10);
  private static final long QUIET = DatabaseSync.Config.DEFAULT.quietPeriod().toMillis();

  private final MutableClock clock = new MutableClock(Instant.parse("2026-11-24T12:00:00Z"));
  private final long t0 = clock.millis();
  private final ManualTimer timer = new ManualTimer(clock);
  private final MemoryBlockstore remote = new MemoryBlockstore();
  private final Set<Cid> withheld = ConcurrentHashMap.newKeySet();
  private final MemoryBlockstore local = new MemoryBlockstore();
  private final MemoryDatastore datastore = new MemoryDatastore();
  private final ExecutorService executor = Executors.newFixedThreadPool(2);
  private final ExecutorService syncThread = Executors.newSingleThreadExecutor();
  private final Map<String, Long> counters = new ConcurrentHashMap<>();
  private final JavaWriter writer = new JavaWriter();
  private final OrbitDbReplicas replicas;
  private final DatabaseSync sync;

  DatabaseSyncTest() {
    final BlockFetcher fetcher = cid -> withheld.contains(cid)
        ? CompletableFuture.failedFuture(new IOException("no peer has " + cid))
        : remote.get(cid).map(CompletableFuture::completedFuture).orElseGet(() ->
            CompletableFuture.failedFuture(new IOException("no peer has " + cid)));
    replicas = new OrbitDbReplicas(new ReplicaContext(local, datastore, fetcher,
        new Identities(local, fetcher, IdentityVerifiers.defaults(), executor, 100), executor,
        LogConfig.DEFAULT, clock));
    final PinStore pins = new PinStore(datastore, local, CodecLinkResolver.standard());
    final MediaPinQueue pinQueue = new MediaPinQueue(
        (cid, holder) -> CompletableFuture.supplyAsync(() -> pins.pin(cid, holder), executor),
        (cid, holder) -> pins.holdIfPinned(cid, holder, false),
        executor, 2);
    final MediaPath media = new MediaPath(
        new MediaCidExtractor(SyncConfig.DEFAULT_MEDIA_CID_FIELDS), pinQueue,
        new ReplicatedBlocks(cid -> { }, local, pins, this::count), (session, cid) -> { },
        this::count);
    final Function<DatabaseSession, HeadsEndpoint> noEndpoints = session -> {
      throw new AssertionError("no peer is connected: nothing is dialled");
    };
    sync = new DatabaseSync(new OfflineNetwork(), noEndpoints, media, clock, timer,
        DatabaseSync.Config.DEFAULT, this::count);
  }

  @AfterEach
  void close() {
    syncThread.shutdownNow();
    executor.shutdownNow();
  }

  private void count(final String name) {
    counters.merge(name, 1L, Long::sum);
  }

  /** One database, its replica and its session. */
  private record Database(OrbitDbAddress address, List<Entry> chain, OrbitDbReplica replica,
      DatabaseSession session) {}

  private Database database(final String name, final int entries) throws Exception {
    remote.put(writer.identityCid(), writer.identityBlock());
    final OrbitDbAddress address = JavaWriter.database(remote, name, List.of(writer.id()));
    final List<Entry> chain = writer.chain(remote, address, entries);
    return new Database(address, chain, replicas.follow(address).get(10, TimeUnit.SECONDS),
        new DatabaseSession(address, InboxBudget.defaults()));
  }

  private static SyncContext context(final Database db, final SyncTrigger trigger,
      final BooleanSupplier cancelled) {
    return new SyncContext() {
      @Override
      public String address() {
        return db.address().toString();
      }

      @Override
      public SyncTrigger trigger() {
        return trigger;
      }

      @Override
      public Duration timeout() {
        return TIMEOUT;
      }

      @Override
      public void countOperation() {}

      @Override
      public boolean cancelled() {
        return cancelled.getAsBoolean();
      }
    };
  }

  /** Runs a sync of {@code db} on its own thread, begun now by the clock. */
  private CompletableFuture<SyncResult> start(final Database db, final SyncTrigger trigger,
      final BooleanSupplier cancelled, final LongSupplier ownedUntil) {
    final long start = clock.millis();
    return CompletableFuture.supplyAsync(() -> {
      try {
        return sync.run(context(db, trigger, cancelled), db.session(), db.replica(), null, start,
            ownedUntil);
      } catch (final Exception e) {
        throw new CompletionException(e);
      }
    }, syncThread);
  }

  private CompletableFuture<SyncResult> start(final Database db, final SyncTrigger trigger) {
    return start(db, trigger, () -> false, () -> Long.MAX_VALUE);
  }

  /** Waits until the sync waits for the timer at {@code millis} (clock millis) and nothing else. */
  private void awaitParkedUntil(final long millis) {
    await().atMost(Duration.ofSeconds(10))
        .until(() -> timer.nextDue().equals(OptionalLong.of(millis)));
  }

  @Test
  void aSyncThatJoinedEntries_shouldEndOnceQuiet_exactlyWhenTheClockSaysSo() throws Exception {
    final Database db = database("quiet", 2);
    db.session().offer(db.chain().get(1).block());

    final CompletableFuture<SyncResult> outcome = start(db, SyncTrigger.MESSAGE);
    // Joined at t0; the only decision left is the end of the quiet period.
    awaitParkedUntil(t0 + QUIET);
    assertThat(db.replica().log().size()).isEqualTo(2);
    timer.advance(Duration.ofMillis(QUIET - 1));
    assertThat(outcome).isNotDone();
    timer.advance(Duration.ofMillis(1));

    final SyncResult result = outcome.get(10, TimeUnit.SECONDS);
    assertThat(result.receivedUpdate()).isTrue();
    assertThat(result.newEntries()).isEqualTo(2);
  }

  @Test
  void anExplicitSync_withNothingNew_shouldEndAtOnce_theClockStandingStill() throws Exception {
    final Database db = database("nothing-new", 1);
    db.session().offer(db.chain().get(0).block());
    final CompletableFuture<SyncResult> first = start(db, SyncTrigger.MESSAGE);
    awaitParkedUntil(t0 + QUIET);
    timer.advance(Duration.ofMillis(QUIET));
    first.get(10, TimeUnit.SECONDS);

    // Complete, nobody to ask, nothing queued: no deadline to wait for.
    final SyncResult again = start(db, SyncTrigger.HTTP).get(10, TimeUnit.SECONDS);

    assertThat(again.receivedUpdate()).isFalse();
    assertThat(again.entries()).isEqualTo(1);
    assertThat(clock.millis()).isEqualTo(t0 + QUIET);
  }

  @Test
  void aHeadOffered_shouldWakeAWaitingSync_andBeJoined_theClockStandingStill()
      throws Exception {
    final Database db = database("woken", 1);
    // An empty log waits for its update window (a peer may not have spoken yet).
    final CompletableFuture<SyncResult> outcome = start(db, SyncTrigger.HTTP);
    awaitParkedUntil(t0 + QUIET);

    db.session().offer(db.chain().get(0).block());

    await().atMost(Duration.ofSeconds(10)).until(() -> db.replica().log().size() == 1);
    awaitParkedUntil(t0 + QUIET);
    assertThat(outcome).isNotDone();
    timer.advance(Duration.ofMillis(QUIET));
    assertThat(outcome.get(10, TimeUnit.SECONDS).receivedUpdate()).isTrue();
  }

  @Test
  void aSyncOfAnIncompleteLog_shouldGiveUp_atThreeTimesTheTimeout_onTheClock()
      throws Exception {
    final Database db = database("gap", 3);
    withheld.add(db.chain().get(0).cid());
    db.session().offer(db.chain().get(2).block());
    final long giveUp = t0 + TIMEOUT.toMillis() * DatabaseSync.Config.DEFAULT.giveUpFactor();

    final CompletableFuture<SyncResult> outcome = start(db, SyncTrigger.MESSAGE);
    await().atMost(Duration.ofSeconds(10)).until(() -> db.replica().log().size() == 2);
    // It resumes the frontier every resumeEvery meanwhile, each time woken by the timer.
    for (int i = 0; i < 3; i++) {
      final long due = timer.nextDue().orElseThrow();
      assertThat(due).isLessThan(giveUp);
      timer.advance(Duration.ofMillis(due - clock.millis()));
      await().atMost(Duration.ofSeconds(10))
          .until(() -> timer.nextDue().orElse(0) > clock.millis());
    }
    timer.advance(Duration.ofMillis(giveUp - 1 - clock.millis()));
    awaitParkedUntil(giveUp);
    assertThat(outcome).isNotDone();
    timer.advance(Duration.ofMillis(1));

    assertThatThrownBy(() -> outcome.get(10, TimeUnit.SECONDS))
        .isInstanceOf(ExecutionException.class)
        .hasRootCauseInstanceOf(DatabaseSync.IncompleteLogException.class);
    assertThat(counters).containsEntry("syncs-incomplete", 1L);
  }

  /**
   * Issue 37: a writer's long burst on a busy machine: entries arrive more often than the quiet
   * period for three sync timeouts. The log is complete at every step; before, the sync still
   * failed at three timeouts as an "incomplete log" ("still missing 0 blocks"), so the database,
   * every entry of it replicated, was never listed in {@code /pinning/databases}.
   */
  @Test
  void aSyncWhoseEntriesKeepArriving_shouldEndAsASuccess_atThreeTimesTheTimeout_whenComplete()
      throws Exception {
    final long step = QUIET - 100;
    final long giveUp = t0 + TIMEOUT.toMillis() * DatabaseSync.Config.DEFAULT.giveUpFactor();
    final int entries = (int) ((giveUp - t0) / step) + 2;
    final Database db = database("burst", entries);

    final CompletableFuture<SyncResult> outcome = start(db, SyncTrigger.MESSAGE);
    int offered = 0;
    while (clock.millis() < giveUp) {
      db.session().offer(db.chain().get(offered).block());
      final int joined = ++offered;
      // Polled closely: 150 steps.
      await().atMost(Duration.ofSeconds(10)).pollDelay(Duration.ZERO)
          .pollInterval(Duration.ofMillis(1)).until(() -> db.replica().log().size() == joined
              && timer.nextDue().orElse(0) > clock.millis());
      assertThat(db.replica().log().isComplete()).isTrue();
      assertThat(outcome).isNotDone();
      timer.advance(Duration.ofMillis(Math.min(step, giveUp - clock.millis())));
    }

    final SyncResult result = outcome.get(10, TimeUnit.SECONDS);
    assertThat(result.complete()).isTrue();
    assertThat(result.entries()).isEqualTo(offered);
    assertThat(result.receivedUpdate()).isTrue();
    assertThat(counters).containsEntry("syncs-ended-unquiet", 1L)
        .doesNotContainKey("syncs-incomplete");
  }

  @Test
  void aSyncAsOwner_shouldStop_whenItsLeaseEnds_onTheClock() throws Exception {
    final Database db = database("lease", 1);
    final long leaseEnd = t0 + 1_000;

    final CompletableFuture<SyncResult> outcome = start(db, SyncTrigger.HTTP,
        () -> clock.millis() >= leaseEnd, () -> leaseEnd);
    awaitParkedUntil(t0 + QUIET);
    timer.advance(Duration.ofMillis(QUIET));
    // Still waiting for its update window, but the lease ends first.
    awaitParkedUntil(leaseEnd);
    timer.advance(Duration.ofMillis(leaseEnd - 1 - clock.millis()));
    assertThat(outcome).isNotDone();
    timer.advance(Duration.ofMillis(1));

    assertThatThrownBy(() -> outcome.get(10, TimeUnit.SECONDS))
        .isInstanceOf(ExecutionException.class)
        .hasRootCauseInstanceOf(InterruptedException.class);
  }
}
