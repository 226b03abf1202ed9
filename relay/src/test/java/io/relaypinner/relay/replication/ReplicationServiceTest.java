package io.relaypinner.relay.replication;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.relaypinner.ipfs.blockstore.MemoryBlockstore;
import io.relaypinner.ipfs.pin.CodecLinkResolver;
import io.relaypinner.ipfs.datastore.MemoryDatastore;
import io.relaypinner.ipfs.pin.PinStore;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.multiformats.PeerId;
import io.relaypinner.orbitdb.BlockFetcher;
import io.relaypinner.orbitdb.JavaWriter;
import io.relaypinner.orbitdb.OrbitDbAddress;
import io.relaypinner.orbitdb.OrbitDbReplicas;
import io.relaypinner.orbitdb.ReplicaContext;
import io.relaypinner.orbitdb.identity.Identities;
import io.relaypinner.orbitdb.identity.IdentityVerifiers;
import io.relaypinner.orbitdb.log.Entry;
import io.relaypinner.orbitdb.log.LogConfig;
import io.relaypinner.orbitdb.log.LogMemory;
import io.relaypinner.relay.config.SyncConfig;
import io.relaypinner.relay.sync.ManualTimer;
import io.relaypinner.relay.sync.SyncEngine;
import io.relaypinner.relay.sync.SyncHistory;
import io.relaypinner.relay.sync.SyncOutcome;
import io.relaypinner.relay.sync.SyncResult;
import io.relaypinner.relay.sync.SyncTrigger;
import io.relaypinner.relay.testing.MutableClock;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The replication core without a network: a fake {@link ReplicationNetwork}, blocks fetched from
 * a map of Java-written logs ({@link JavaWriter}), the real {@link SyncEngine} on a
 * {@link MutableClock} whose timeouts run when the test moves time ({@link #timer}); the syncs'
 * own deadlines (quiet period, update window, resumptions) come as the test moves the clock
 * ({@link #runUntil}, on {@link #syncTimer}).
 */
class ReplicationServiceTest {
  private static final Duration TIMEOUT = Duration.ofSeconds(10);
  private static final Duration COOLDOWN = Duration.ofSeconds(60);
  private static final PeerId PEER = io.relaypinner.libp2p.crypto.Keys.generate(
      io.relaypinner.libp2p.crypto.KeyType.ED25519, new java.security.SecureRandom())
      .publicKey().peerId();

  private final MutableClock clock = new MutableClock(Instant.parse("2026-11-24T12:00:00Z"));
  /** The engine's timeouts: they run only when a test says so. */
  private final ManualTimer timer = new ManualTimer(clock);
  /** The syncs' deadlines: they come as {@link #runUntil} moves the clock. */
  private final ManualTimer syncTimer = new ManualTimer(clock);
  /** What the network could give: blocks held by peers. */
  private final MemoryBlockstore remote = new MemoryBlockstore();
  private final Set<Cid> withheld = ConcurrentHashMap.newKeySet();
  /** Fetches of these wait until the latch opens. */
  private final Set<Cid> gated = ConcurrentHashMap.newKeySet();
  private final java.util.concurrent.CountDownLatch gate =
      new java.util.concurrent.CountDownLatch(1);
  private final MemoryBlockstore local = new MemoryBlockstore();
  private final MemoryDatastore datastore = new MemoryDatastore();
  private final ThreadPoolExecutor executor = new ThreadPoolExecutor(4, 4, 0,
      TimeUnit.MILLISECONDS, new LinkedBlockingQueue<>());
  private final List<String> follows = new CopyOnWriteArrayList<>();
  private volatile boolean followAccepted = true;
  private final SyncHistory history = new SyncHistory(datastore, 100);
  private final JavaWriter writer = new JavaWriter();
  private final OfflineNetwork network = new OfflineNetwork();
  private final ReplicationService service;
  private final SyncEngine engine;

  ReplicationServiceTest() {
    final BlockFetcher fetcher = cid -> {
      if (withheld.contains(cid)) {
        return CompletableFuture.failedFuture(new IOException("no peer has " + cid));
      }
      if (gated.contains(cid)) {
        return CompletableFuture.supplyAsync(() -> {
          try {
            gate.await();
          } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
          }
          return remote.get(cid).orElseThrow();
        });
      }
      return remote.get(cid).map(CompletableFuture::completedFuture).orElseGet(() ->
          CompletableFuture.failedFuture(new IOException("no peer has " + cid)));
    };
    // Twenty incomplete entries per log (forty in all): a longer gap walks its history.
    final OrbitDbReplicas replicas = new OrbitDbReplicas(new ReplicaContext(local, datastore,
        fetcher, new Identities(local, fetcher, IdentityVerifiers.defaults(), executor, 100),
        executor, LogConfig.DEFAULT, clock, new LogMemory(LogMemory.VERIFIED,
        LogMemory.REJECTED, 40, LogMemory.MISSING)));
    final PinStore pins = new PinStore(datastore, local, CodecLinkResolver.standard());
    final MediaPinQueue pinQueue = new MediaPinQueue(
        (cid, holder) -> CompletableFuture.supplyAsync(() -> pins.pin(cid, holder), executor),
        (cid, holder) -> pins.holdIfPinned(cid, holder, false),
        executor, 2);
    final Function<String, CompletableFuture<Boolean>> follow = topic -> {
      follows.add(topic);
      return CompletableFuture.completedFuture(followAccepted);
    };
    service = new ReplicationService(network, local, pins, replicas,
        new MediaCidExtractor(SyncConfig.DEFAULT_MEDIA_CID_FIELDS), pinQueue, executor,
        ReplicationService.Config.DEFAULT, InboxBudget.defaults(), topic -> true, follow, clock,
        syncTimer);
    engine = new SyncEngine(new SyncConfig(TIMEOUT, COOLDOWN, 2,
        SyncConfig.DEFAULT_MEDIA_CID_FIELDS), service.syncer(), history, new PrometheusRegistry(),
        clock, timer);
    service.start(engine);
  }

  @AfterEach
  void close() {
    engine.close(Duration.ZERO);
    service.close();
    executor.shutdownNow();
  }

  private OrbitDbAddress database(final String name, final JavaWriter... writers) {
    final List<String> ids = java.util.Arrays.stream(writers).map(JavaWriter::id).toList();
    for (final JavaWriter w : writers) {
      remote.put(w.identityCid(), w.identityBlock());
    }
    return JavaWriter.database(remote, name, ids);
  }

  /** Moves the clock in small steps (syncs end after a quiet period) until {@code done}. */
  private void runUntil(final BooleanSupplier done) {
    await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(20)).until(() -> {
      if (done.getAsBoolean()) {
        return true;
      }
      syncTimer.advance(Duration.ofMillis(50));
      return false;
    });
  }

  private long log(final OrbitDbAddress address) {
    return service.replicas().replica(address).map(r -> (long) r.log().size()).orElse(-1L);
  }

  /**
   * A followed database of {@code entries} entries by {@link #writer}, announced by a topic
   * message and synced, with no sync left queued.
   */
  private OrbitDbAddress syncedDatabase(final String name, final int entries) throws Exception {
    final OrbitDbAddress address = database(name, writer);
    final List<Entry> chain = writer.chain(remote, address, entries);
    service.topicListener().onFollow(address.topic());
    service.topicListener().onMessage(address.topic(), chain.get(entries - 1).block(), PEER);
    final CompletableFuture<SyncOutcome> first = engine.requestSync(address.topic());
    runUntil(first::isDone);
    assertThat(log(address)).isEqualTo(entries);
    runUntil(() -> engine.stats().syncQueue().queuedTopics() == 0);
    return address;
  }

  @Test
  void sync_shouldSucceed_whenTheLogIsCompleteAsFarAsTheKnownHeads() throws Exception {
    final OrbitDbAddress address = database("complete", writer);
    final List<Entry> chain = writer.chain(remote, address, 5);
    service.topicListener().onFollow(address.topic());
    service.topicListener().onMessage(address.topic(), chain.get(4).block(), PEER);

    final CompletableFuture<SyncOutcome> outcome = engine.requestSync(address.topic());
    runUntil(outcome::isDone);

    assertThat(outcome.get()).isInstanceOf(SyncOutcome.Completed.class);
    assertThat(log(address)).isEqualTo(5);
    assertThat(history.get(address.topic())).isPresent();
    assertThat(engine.stats().syncQueue().timedOutSyncs()).isZero();
    // Entries and their writer's identity are stored and pinned.
    assertThat(local.has(chain.get(0).cid())).isTrue();
    assertThat(local.has(writer.identityCid())).isTrue();
  }

  @Test
  void headsFromAHeadsExchange_shouldBePublishedOnTheTopic_onceJoined_butNotThoseOfMessages()
      throws Exception {
    final OrbitDbAddress address = database("republish", writer);
    final List<Entry> chain = writer.chain(remote, address, 4);
    service.topicListener().onFollow(address.topic());

    // A peer hands its head over in a heads exchange (orbitdb#1255: readers subscribed to the
    // topic would never hear of it).
    network.endpoints.apply(address).orElseThrow().onHead(chain.get(2).block(), PEER);
    runUntil(() -> log(address) == 3);
    await().atMost(Duration.ofSeconds(10)).until(() -> !network.published.isEmpty());
    assertThat(network.published).hasSize(1);
    assertThat(network.published.get(0).getKey()).isEqualTo(address.topic());
    assertThat(network.published.get(0).getValue()).isEqualTo(chain.get(2).block());
    assertThat(service.counters()).containsEntry("heads-republished", 1L);

    // The next entry comes as a message on the topic: gossipsub forwarded it already.
    service.topicListener().onMessage(address.topic(), chain.get(3).block(), PEER);
    runUntil(() -> log(address) == 4);
    runUntil(() -> engine.stats().syncQueue().queuedTopics() == 0);
    assertThat(network.published).hasSize(1);
  }

  @Test
  void aTopicMessageSync_withNothingQueued_endsOnceQuiet_notAfterTheUpdateWindow()
      throws Exception {
    final OrbitDbAddress address = syncedDatabase("follow-up", 2);

    // The follow-up a message queues when its heads were joined already: no heads left, no
    // peer to ask. It ends after the quiet period (300 ms), not the 5 s update window.
    final long operations = engine.stats().syncOperations();
    final java.time.Instant before = clock.instant();
    assertThat(engine.enqueue(address.topic(), SyncTrigger.MESSAGE)).isTrue();
    runUntil(() -> engine.stats().syncOperations() > operations
        && engine.stats().syncQueue().queuedTopics() == 0);
    assertThat(Duration.between(before, clock.instant()))
        .isLessThan(ReplicationService.Config.DEFAULT.updateWindow());
  }

  @Test
  void syncsWithNothingNew_shouldScanTheLogOnlyWhenAskedOrDue_notForEveryTopicMessage()
      throws Exception {
    final OrbitDbAddress address = syncedDatabase("scans", 3);
    // An explicit sync asks for the log's media: it scans, or answers from the last scan.
    explicitSync(address);
    final long scans = service.counters().get("fallback-scans");

    // Topic messages after a scan do not walk the log again, however many come.
    for (int i = 0; i < 5; i++) {
      syncOnMessage(address);
    }
    assertThat(service.counters()).containsEntry("fallback-scans", scans);

    explicitSync(address);
    assertThat(service.counters().get("fallback-scans")
        + service.counters().getOrDefault("fallback-scans-kept", 0L)).isGreaterThan(scans);
  }

  private void explicitSync(final OrbitDbAddress address) {
    final CompletableFuture<SyncOutcome> explicit = engine.requestSync(address.topic());
    await().atMost(Duration.ofSeconds(10)).until(explicit::isDone);
  }

  private void syncOnMessage(final OrbitDbAddress address) {
    final long operations = engine.stats().syncOperations();
    assertThat(engine.enqueue(address.topic(), SyncTrigger.MESSAGE)).isTrue();
    runUntil(() -> engine.stats().syncOperations() > operations
        && engine.stats().syncQueue().queuedTopics() == 0);
  }

  @Test
  void anExplicitSync_withNothingNew_answersAtOnce_withoutTheQuietPeriodOrTheWindow()
      throws Exception {
    final OrbitDbAddress address = syncedDatabase("nothing-new", 3);

    // The clock stands still: a sync that waited for its quiet period or its update window
    // would never end. Nothing new and nobody left to ask: the answer comes at once.
    final CompletableFuture<SyncOutcome> again = engine.requestSync(address.topic());
    await().atMost(Duration.ofSeconds(10)).until(again::isDone);

    assertThat(again.get()).isInstanceOfSatisfying(SyncOutcome.Completed.class, completed -> {
      assertThat(completed.result().receivedUpdate()).isFalse();
      assertThat(completed.result().fallbackScanUsed()).isTrue();
      assertThat(completed.result().entries()).isEqualTo(3);
    });
  }

  @Test
  void anExplicitSync_ofAnEmptyLog_stillWaitsForTheWindow() throws Exception {
    final OrbitDbAddress address = database("empty", writer);
    final CompletableFuture<SyncOutcome> outcome = engine.requestSync(address.topic());
    await().until(() -> service.sessionCount() == 1);

    // A database just followed has no entry yet: a peer may not have spoken, so the sync waits
    // (the clock stands still here) and takes the head that comes.
    Thread.sleep(300);
    assertThat(outcome).isNotDone();
    writer.chain(remote, address, 1).forEach(entry ->
        service.topicListener().onMessage(address.topic(), entry.block(), PEER));
    runUntil(outcome::isDone);
    assertThat(outcome.get()).isInstanceOf(SyncOutcome.Completed.class);
    assertThat(log(address)).isEqualTo(1);
  }

  @Test
  void aResumedSync_isSkippedAndNotRecorded_whenNobodyOnTheTopicCanGiveTheBlocks() {
    final OrbitDbAddress address = database("resume", writer);
    service.topicListener().onFollow(address.topic());
    runUntil(() -> engine.stats().syncQueue().queuedTopics() == 0);
    final var before = history.get(address.topic());
    final long operations = engine.stats().syncOperations();
    assertThat(engine.enqueue(address.topic(), SyncTrigger.RESUME)).isTrue();
    runUntil(() -> service.counters().getOrDefault("syncs-resume-skipped", 0L) == 1L
        && engine.stats().syncQueue().queuedTopics() == 0);
    assertThat(engine.stats().syncOperations()).isEqualTo(operations);
    clock.advance(Duration.ofSeconds(1));
    assertThat(history.get(address.topic())).isEqualTo(before);
  }

  @Test
  void headsArrivingDuringAJoin_shouldBeJoinedTogether_inOneJoin() throws Exception {
    final OrbitDbAddress address = database("burst", writer);
    final List<Entry> chain = writer.chain(remote, address, 12);
    service.topicListener().onFollow(address.topic());
    // The first join waits for the writer's identity; the heads that come meanwhile queue.
    gated.add(writer.identityCid());
    service.topicListener().onMessage(address.topic(), chain.get(0).block(), PEER);
    final CompletableFuture<SyncOutcome> outcome = engine.requestSync(address.topic());
    await().atMost(Duration.ofSeconds(10)).until(() -> engine.stats().syncQueue().active() > 0);
    for (final Entry entry : chain.subList(1, 12)) {
      service.topicListener().onMessage(address.topic(), entry.block(), PEER);
    }
    gate.countDown();
    runUntil(outcome::isDone);

    assertThat(outcome.get()).isInstanceOf(SyncOutcome.Completed.class);
    assertThat(log(address)).isEqualTo(12);
    assertThat(service.counters()).containsEntry("heads-joined-together", 1L);
  }

  @Test
  void sync_shouldAnswer504CoolDownAndStayUnsynced_whenAnEntryCannotBeFetched()
      throws Exception {
    final OrbitDbAddress address = database("gap", writer);
    final List<Entry> chain = writer.chain(remote, address, 5);
    withheld.add(chain.get(1).cid());
    service.topicListener().onFollow(address.topic());
    service.topicListener().onMessage(address.topic(), chain.get(4).block(), PEER);
    final CompletableFuture<SyncOutcome> outcome = engine.requestSync(address.topic());
    runUntil(() -> log(address) == 4);

    timer.advance(TIMEOUT);

    assertThat(outcome.get(5, TimeUnit.SECONDS)).isInstanceOf(SyncOutcome.TimedOut.class);
    assertThat(engine.stats().syncQueue().timedOutSyncs()).isEqualTo(1);
    assertThat(engine.stats().syncQueue().cooldownTopics()).isEqualTo(1);
    assertThat(history.get(address.topic())).isEmpty();

    // The sync keeps trying, then gives up at three timeouts: failed, still not synced, and
    // pubsub triggers wait for the cooldown.
    runUntil(() -> engine.stats().failedSyncs() == 1);
    assertThat(service.counters()).containsEntry("syncs-incomplete", 1L);
    assertThat(history.get(address.topic())).isEmpty();
    assertThat(engine.enqueue(address.topic(), SyncTrigger.MESSAGE)).isFalse();
    assertThat(engine.skippedInCooldown()).isEqualTo(1);

    // The gap fills later: an explicit sync completes the log and records it.
    withheld.clear();
    final CompletableFuture<SyncOutcome> again = engine.requestSync(address.topic());
    runUntil(again::isDone);
    assertThat(again.get()).as(() -> service.replicas().replica(address).get().log().counters()
        + " missing " + service.replicas().replica(address).get().log().missing() + " chain "
        + chain.stream().map(Entry::cid).toList()).isInstanceOf(SyncOutcome.Completed.class);
    assertThat(log(address)).isEqualTo(5);
    assertThat(history.get(address.topic())).isPresent();
  }

  @Test
  void explicitSync_shouldLeaveNothing_whenTheAddressIsUnknown() throws Exception {
    final OrbitDbAddress unknown = database("nowhere", writer);
    withheld.add(unknown.manifest());

    final CompletableFuture<SyncOutcome> outcome = engine.requestSync(unknown.topic());
    runUntil(outcome::isDone);

    assertThat(outcome.get()).isInstanceOf(SyncOutcome.Failed.class);
    assertThat(service.sessionCount()).isZero();
    assertThat(service.replicas().replicas()).isEmpty();
    assertThat(follows).isEmpty();
  }

  @Test
  void explicitSync_shouldFollowTheDatabase_whenItSucceeds() throws Exception {
    final OrbitDbAddress address = database("explicit", writer);
    final List<Entry> chain = writer.chain(remote, address, 3);
    final CompletableFuture<SyncOutcome> outcome = engine.requestSync(address.topic());
    // A heads exchange brings the head while the sync waits for an update.
    await().until(() -> service.sessionCount() == 1);
    service.topicListener().onMessage(address.topic(), chain.get(2).block(), PEER);
    runUntil(outcome::isDone);

    assertThat(outcome.get()).isInstanceOf(SyncOutcome.Completed.class);
    assertThat(follows).containsExactly(address.topic());
    assertThat(service.sessionCount()).isEqualTo(1);
    assertThat(log(address)).isEqualTo(3);
  }

  /** Issue 36: asked for by name, a followed database becomes requested (never evicted). */
  @Test
  void explicitSync_ofAFollowedDatabase_shouldMarkItRequested() throws Exception {
    final OrbitDbAddress address = database("asked-again", writer);
    final List<Entry> chain = writer.chain(remote, address, 2);
    final CompletableFuture<SyncOutcome> first = engine.requestSync(address.topic());
    await().until(() -> service.sessionCount() == 1);
    service.topicListener().onMessage(address.topic(), chain.get(1).block(), PEER);
    runUntil(first::isDone);
    assertThat(follows).containsExactly(address.topic());

    final CompletableFuture<SyncOutcome> again = engine.requestSync(address.topic());
    runUntil(again::isDone);

    assertThat(again.get()).isInstanceOf(SyncOutcome.Completed.class);
    assertThat(follows).containsExactly(address.topic(), address.topic());
  }

  @Test
  void explicitSync_shouldCloseItsSession_whenFollowingIsRefused() throws Exception {
    followAccepted = false;
    final OrbitDbAddress address = database("refused-follow", writer);
    final CompletableFuture<SyncOutcome> outcome = engine.requestSync(address.topic());
    runUntil(outcome::isDone);

    assertThat(outcome.get()).isInstanceOf(SyncOutcome.Completed.class);
    assertThat(follows).containsExactly(address.topic());
    assertThat(service.sessionCount()).isZero();
    assertThat(service.counters()).containsEntry("explicit-follow-refused", 1L);
  }

  @Test
  void refusedEntry_shouldLeaveItsWritersIdentityUnstored() throws Exception {
    final JavaWriter intruder = new JavaWriter();
    final OrbitDbAddress address = database("guarded", writer);
    remote.put(intruder.identityCid(), intruder.identityBlock());
    final Entry good = writer.chain(remote, address, 1).get(0);
    final byte[] bad = intruder.entry(address, 2, List.of(good.cid()), List.of(),
        io.relaypinner.ipfs.dagcbor.DagCborValue.of("x"));
    service.topicListener().onFollow(address.topic());
    service.topicListener().onMessage(address.topic(), bad, PEER);
    service.topicListener().onMessage(address.topic(), good.block(), PEER);
    final CompletableFuture<SyncOutcome> outcome = engine.requestSync(address.topic());
    runUntil(() -> outcome.isDone() && log(address) == 1);

    assertThat(local.has(writer.identityCid())).isTrue();
    assertThat(local.has(intruder.identityCid())).isFalse();
    assertThat(local.has(Entry.decode(bad).cid())).isFalse();
    assertThat(service.counters()).containsKey("log.rejected.unauthorized_writer");
  }

  @Test
  void unfollow_shouldReleaseTheSessionAndItsInbox() {
    final OrbitDbAddress address = database("dropped", writer);
    final List<Entry> chain = writer.chain(remote, address, 1);
    engine.close(Duration.ZERO);
    service.topicListener().onFollow(address.topic());
    service.topicListener().onMessage(address.topic(), chain.get(0).block(), PEER);
    assertThat(service.inboxBytes()).isPositive();

    service.topicListener().onUnfollow(address.topic());

    assertThat(service.sessionCount()).isZero();
    assertThat(service.inboxBytes()).isZero();
  }

  @Test
  void oversizedPayload_shouldBeDroppedWhenOffered() {
    final OrbitDbAddress address = database("oversized", writer);
    engine.close(Duration.ZERO);
    service.topicListener().onFollow(address.topic());

    service.topicListener().onMessage(address.topic(), new byte[Entry.MAX_BLOCK_SIZE + 1], PEER);

    assertThat(service.inboxBytes()).isZero();
    assertThat(service.counters()).containsEntry("bound.inbox-oversized", 1L);
  }

  /**
   * Appends {@code count} entries to {@code chain} (a linear log), each naming a media block the
   * relay holds, whose CIDs are added to {@code media}; returns {@code chain}.
   */
  private List<Entry> mediaChain(final OrbitDbAddress address, final int count,
      final List<Cid> media, final List<Entry> chain) {
    for (int n = 0; n < count; n++) {
      final int i = chain.size();
      final byte[] file = (address + " media " + i).getBytes(
          java.nio.charset.StandardCharsets.UTF_8);
      final Cid cid = Cid.v1(io.relaypinner.multiformats.Multicodec.RAW,
          io.relaypinner.multiformats.Multihash.sha2_256(file));
      local.put(cid, file);
      media.add(cid);
      final Entry entry = Entry.decode(writer.entry(address, i + 1,
          i == 0 ? List.of() : List.of(chain.get(i - 1).cid()), List.of(),
          io.relaypinner.ipfs.dagcbor.DagCborValue.map(Map.of("mediaCid",
              io.relaypinner.ipfs.dagcbor.DagCborValue.of(cid.toString())))));
      remote.put(entry.cid(), entry.block());
      chain.add(entry);
    }
    return chain;
  }

  private List<Entry> mediaChain(final OrbitDbAddress address, final int count,
      final List<Cid> media) {
    return mediaChain(address, count, media, new java.util.ArrayList<>());
  }

  private SyncResult explicitResult(final OrbitDbAddress address) throws Exception {
    final CompletableFuture<SyncOutcome> explicit = engine.requestSync(address.topic());
    await().atMost(Duration.ofSeconds(10)).until(explicit::isDone);
    assertThat(explicit.get()).isInstanceOf(SyncOutcome.Completed.class);
    return ((SyncOutcome.Completed) explicit.get()).result();
  }

  @Test
  void explicitSyncsWithNothingNew_shouldAnswerWithTheLogsMedia_withoutWalkingItAgain()
      throws Exception {
    final OrbitDbAddress address = database("kept-media", writer);
    final List<Cid> media = new java.util.ArrayList<>();
    final List<Entry> chain = mediaChain(address, 5, media);
    service.topicListener().onFollow(address.topic());
    service.topicListener().onMessage(address.topic(), chain.get(4).block(), PEER);
    final CompletableFuture<SyncOutcome> first = engine.requestSync(address.topic());
    runUntil(first::isDone);
    runUntil(() -> engine.stats().syncQueue().queuedTopics() == 0);

    // The first explicit sync with nothing new reads the log (or the session's first scan did).
    final SyncResult scanned = explicitResult(address);
    assertThat(scanned.fallbackScanUsed()).isTrue();
    assertThat(scanned.extractedMediaCids()).containsExactlyInAnyOrderElementsOf(
        media.stream().map(Cid::toString).toList());
    final long scans = service.counters().get("fallback-scans");
    final long kept0 = service.counters().getOrDefault("fallback-scans-kept", 0L);

    // The next ones answer the same from what that scan found: no walk of the history.
    final SyncResult kept = explicitResult(address);
    assertThat(kept.fallbackScanUsed()).isTrue();
    assertThat(kept.extractedMediaCids()).containsExactlyInAnyOrderElementsOf(
        scanned.extractedMediaCids());
    assertThat(service.counters()).containsEntry("fallback-scans", scans)
        .containsEntry("fallback-scans-kept", kept0 + 1);

    // New entries keep it current.
    mediaChain(address, 2, media, chain);
    service.topicListener().onMessage(address.topic(), chain.get(6).block(), PEER);
    runUntil(() -> log(address) == 7);
    runUntil(() -> engine.stats().syncQueue().queuedTopics() == 0);
    final SyncResult after = explicitResult(address);
    assertThat(after.receivedUpdate()).isFalse();
    assertThat(after.extractedMediaCids()).containsExactlyInAnyOrderElementsOf(
        media.stream().map(Cid::toString).toList());
    assertThat(service.counters()).containsEntry("fallback-scans", scans)
        .containsEntry("fallback-scans-kept", kept0 + 2);
  }

  @Test
  void mediaOfAHistoryTooLongToTrack_shouldBeReportedOnceItIsComplete() throws Exception {
    final OrbitDbAddress address = database("long-history", writer);
    final List<Cid> media = new java.util.ArrayList<>();
    final List<Entry> chain = mediaChain(address, 30, media);
    // The first entry is synced alone, and the session's first scan is behind it.
    service.topicListener().onFollow(address.topic());
    service.topicListener().onMessage(address.topic(), chain.get(0).block(), PEER);
    final CompletableFuture<SyncOutcome> first = engine.requestSync(address.topic());
    runUntil(first::isDone);
    runUntil(() -> engine.stats().syncQueue().queuedTopics() == 0
        && engine.stats().pinnedMediaCids().size() == 1);
    final long scans = service.counters().getOrDefault("fallback-scans", 0L);

    // The other 29 come with the second withheld: 28 wait for it, more than the log's 20.
    withheld.add(chain.get(1).cid());
    service.topicListener().onMessage(address.topic(), chain.get(29).block(), PEER);
    final CompletableFuture<SyncOutcome> outcome = engine.requestSync(address.topic());
    runUntil(() -> log(address) == 29);
    assertThat(service.replicas().replica(address).get().log().isWalkingHistory()).isTrue();
    assertThat(engine.stats().pinnedMediaCids()).hasSize(1);

    // It arrives: the walk ends, and every entry's media is reported, by no fallback scan.
    withheld.clear();
    runUntil(outcome::isDone);

    assertThat(outcome.get()).isInstanceOf(SyncOutcome.Completed.class);
    runUntil(() -> engine.stats().pinnedMediaCids().size() == 30);
    assertThat(engine.stats().pinnedMediaCids()).containsExactlyInAnyOrderElementsOf(
        media.stream().map(Cid::toString).toList());
    assertThat(service.counters()).containsEntry("fallback-scans", scans)
        .containsEntry("log.history-walks", 1L)
        .containsEntry("log.histories-completed", 1L).containsEntry("history-scans", 1L);
  }
}
