package io.relaypinner.relay.pubsub;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.relaypinner.common.budget.Limits;
import io.relaypinner.common.budget.Resource;
import io.relaypinner.common.budget.Scope;
import io.relaypinner.ipfs.dagcbor.DagCbor;
import io.relaypinner.ipfs.datastore.Datastore;
import io.relaypinner.ipfs.datastore.MemoryDatastore;
import io.relaypinner.libp2p.crypto.KeyType;
import io.relaypinner.libp2p.crypto.Keys;
import io.relaypinner.libp2p.pubsub.PubSub;
import io.relaypinner.libp2p.pubsub.ReceivedMessage;
import io.relaypinner.multiformats.PeerId;
import io.relaypinner.orbitdb.OrbitDbAddress;
import io.relaypinner.relay.sync.ManualTimer;
import io.relaypinner.relay.testing.MutableClock;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * {@link OrbitDbTopics} on a fake pubsub, a memory datastore, a storage executor that runs at
 * once, and a {@link ManualTimer} on a {@link MutableClock}: admission (the one address rule, the
 * policy, per-peer and total bounds, retries, timeouts, the failure budget), probation, the
 * persisted topics and the bound on followed databases. No sockets, no sleeps.
 */
class OrbitDbTopicsTest {
  private static final OrbitDbTopics.Limits LIMITS = limits(4, 2);
  private static final String DB = address("db");
  private static final String OTHER = address("other");
  private static final PeerId ALICE = peer();
  private static final PeerId BOB = peer();

  private final MutableClock clock = new MutableClock(Instant.parse("2026-11-25T08:00:00Z"));
  private final ManualTimer timer = new ManualTimer(clock);
  private final FakeGossip gossip = new FakeGossip();
  private final MemoryDatastore datastore = new MemoryDatastore();
  private final Recorder recorder = new Recorder();

  /** 10 s per check, 10 minutes of probation. */
  private static OrbitDbTopics.Limits limits(final int maxPending, final int maxPendingPerPeer) {
    return new OrbitDbTopics.Limits(maxPending, maxPendingPerPeer, Duration.ofSeconds(10),
        Duration.ofMinutes(10));
  }

  private static String address(final String seed) {
    return new OrbitDbAddress(DagCbor.cid(seed.getBytes(StandardCharsets.UTF_8))).toString();
  }

  /** The manifest of {@code address} in base32: a well-formed CID, not a database address. */
  private static String base32(final String address) {
    return OrbitDbAddress.PREFIX + OrbitDbAddress.parse(address).manifest();
  }

  private static PeerId peer() {
    return Keys.generate(KeyType.ED25519, new SecureRandom()).publicKey().peerId();
  }

  private OrbitDbTopics topics(final OrbitDbTopics.Limits limits) {
    return topics(TopicPolicy.OPEN, limits, datastore, Runnable::run);
  }

  private OrbitDbTopics topics(final TopicPolicy policy, final OrbitDbTopics.Limits limits,
      final Datastore store, final Executor storage) {
    final OrbitDbTopics topics = new OrbitDbTopics(gossip, store, storage, policy, limits, clock,
        timer);
    topics.start(recorder, recorder);
    return topics;
  }

  private OrbitDbTopics started() {
    return topics(LIMITS);
  }

  /** The pubsub calls the topics make, driven by the test. */
  private static final class FakeGossip implements OrbitDbTopics.Gossip {
    final List<PubSub.SubscriptionListener> listeners = new ArrayList<>();
    final List<PubSub.MessageHandler> handlers = new ArrayList<>();
    final Set<String> subscribed = new HashSet<>();
    final List<String> unsubscribed = new ArrayList<>();
    final Map<String, Set<PeerId>> peers = new HashMap<>();

    @Override
    public void addSubscriptionListener(final PubSub.SubscriptionListener listener) {
      listeners.add(listener);
    }

    @Override
    public void addMessageHandler(final PubSub.MessageHandler handler) {
      handlers.add(handler);
    }

    @Override
    public CompletableFuture<Void> subscribe(final String topic) {
      subscribed.add(topic);
      return CompletableFuture.completedFuture(null);
    }

    @Override
    public CompletableFuture<Void> unsubscribe(final String topic) {
      subscribed.remove(topic);
      unsubscribed.add(topic);
      return CompletableFuture.completedFuture(null);
    }

    @Override
    public Set<PeerId> peers(final String topic) {
      return Set.copyOf(peers.getOrDefault(topic, Set.of()));
    }

    void subscribe(final PeerId peer, final String topic) {
      peers.computeIfAbsent(topic, t -> new HashSet<>()).add(peer);
      List.copyOf(listeners).forEach(l -> l.onSubscriptionChange(peer, topic, true));
    }

    void unsubscribe(final PeerId peer, final String topic) {
      peers.getOrDefault(topic, new HashSet<>()).remove(peer);
      List.copyOf(listeners).forEach(l -> l.onSubscriptionChange(peer, topic, false));
    }

    void message(final String topic, final PeerId from) {
      final ReceivedMessage message = new ReceivedMessage(topic, from, from,
          topic.getBytes(StandardCharsets.UTF_8), null);
      List.copyOf(handlers).forEach(h -> h.onMessage(message));
    }
  }

  /** What the topics report, and admissions the test answers one by one. */
  private static final class Recorder implements OrbitDbTopics.Listener,
      OrbitDbTopics.Admission {
    final List<String> follows = new ArrayList<>();
    final List<String> unfollows = new ArrayList<>();
    final List<String> messages = new ArrayList<>();
    final List<String> subscribers = new ArrayList<>();
    /** Every check asked for, in order, with its answer to complete. */
    final List<Map.Entry<String, CompletableFuture<Boolean>>> checks = new ArrayList<>();
    final Set<String> withEntries = new HashSet<>();
    /** When set, {@link #hasEntries} waits for it (a datastore read that blocks). */
    volatile java.util.concurrent.CountDownLatch entriesGate;
    /** The threads {@link #hasEntries} ran on. */
    final List<Thread> entryCheckThreads = new java.util.concurrent.CopyOnWriteArrayList<>();

    @Override
    public void onFollow(final String topic) {
      follows.add(topic);
    }

    @Override
    public void onUnfollow(final String topic) {
      unfollows.add(topic);
    }

    @Override
    public void onMessage(final String topic, final byte[] data, final PeerId from) {
      messages.add(topic);
    }

    @Override
    public void onPeerSubscribed(final String topic, final PeerId peer) {
      subscribers.add(topic + " " + peer);
    }

    @Override
    public CompletableFuture<Boolean> admit(final String topic) {
      final CompletableFuture<Boolean> answer = new CompletableFuture<>();
      checks.add(Map.entry(topic, answer));
      return answer;
    }

    @Override
    public boolean hasEntries(final String topic) {
      entryCheckThreads.add(Thread.currentThread());
      final java.util.concurrent.CountDownLatch gate = entriesGate;
      if (gate != null) {
        try {
          gate.await();
        } catch (final InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      return withEntries.contains(topic);
    }

    List<String> checked() {
      return checks.stream().map(Map.Entry::getKey).toList();
    }

    /** Answers the oldest open check of {@code topic}. */
    void answer(final String topic, final boolean exists) {
      checks.stream().filter(c -> c.getKey().equals(topic) && !c.getValue().isDone())
          .findFirst().orElseThrow(() -> new AssertionError("no open check of " + topic))
          .getValue().complete(exists);
    }
  }

  private static Optional<byte[]> persisted(final Datastore store, final String topic) {
    return store.get(OrbitDbTopics.KEY_PREFIX + topic);
  }

  @Test
  void subscription_shouldFollowPersistedAndSubscribed_whenTheDatabaseResolves() {
    final OrbitDbTopics topics = started();

    gossip.subscribe(ALICE, DB);
    assertThat(recorder.checked()).containsExactly(DB);
    assertThat(topics.pendingAdmissions()).isEqualTo(1);
    // Not followed while the check runs.
    assertThat(topics.followed()).isEmpty();
    assertThat(gossip.subscribed).isEmpty();

    recorder.answer(DB, true);

    assertThat(topics.followed()).containsExactly(DB);
    assertThat(persisted(datastore, DB)).isPresent();
    assertThat(gossip.subscribed).containsExactly(DB);
    assertThat(recorder.follows).containsExactly(DB);
    assertThat(recorder.subscribers).containsExactly(DB + " " + ALICE);
    assertThat(topics.pendingAdmissions()).isZero();
    assertThat(topics.counters()).containsEntry("admitted", 1L);

    // A followed topic: the next subscriber is reported, and not checked again.
    gossip.subscribe(BOB, DB);
    assertThat(recorder.checked()).containsExactly(DB);
    assertThat(recorder.subscribers).containsExactly(DB + " " + ALICE, DB + " " + BOB);
    // Messages of followed topics reach replication; others do not.
    gossip.message(DB, BOB);
    gossip.message(OTHER, BOB);
    assertThat(recorder.messages).containsExactly(DB);
  }

  @Test
  void subscription_shouldNotBeChecked_whenTheTopicIsNotADatabaseAddress() {
    final OrbitDbTopics topics = started();

    // The base32 text of a real manifest (JS OrbitDB opens none), garbage, a path below one.
    for (final String topic : List.of(base32(DB), "/orbitdb/not-a-cid", "/orbitdb/zzz",
        DB + "/extra", "/orbitdb/")) {
      gossip.subscribe(ALICE, topic);
    }
    gossip.subscribe(ALICE, "todo._peer-discovery._p2p._pubsub");
    gossip.unsubscribe(ALICE, DB);

    assertThat(recorder.checks).isEmpty();
    assertThat(topics.counters()).containsExactly(Map.entry("not-an-address", 5L));
    assertThat(topics.ignoredTopics()).isEqualTo(5);
    assertThat(topics.followAdmitted(base32(DB))).isCompletedWithValue(false);
    assertThat(topics.followed()).isEmpty();
    assertThat(datastore.scan(OrbitDbTopics.KEY_PREFIX)).isEmpty();
  }

  @Test
  void subscription_shouldNotBeChecked_whenThePolicyDeniesTheDatabase() {
    final OrbitDbTopics topics = topics(TopicPolicy.of(List.of(), List.of(DB)), LIMITS,
        datastore, Runnable::run);

    gossip.subscribe(ALICE, DB);
    gossip.subscribe(ALICE, OTHER);

    assertThat(recorder.checked()).containsExactly(OTHER);
    assertThat(topics.counters()).containsEntry("denied", 1L);
    assertThat(topics.permits(DB)).isFalse();
    assertThat(topics.followAdmitted(DB)).isCompletedWithValue(false);
    assertThat(persisted(datastore, DB)).isEmpty();
  }

  @Test
  void admission_shouldBeCheckedThreeTimes_whileThePeerStaysSubscribed() {
    final OrbitDbTopics topics = started();
    gossip.subscribe(ALICE, DB);
    recorder.answer(DB, false);
    assertThat(topics.counters()).containsEntry("not-admitted", 1L);

    // The second check after 2 s, the third 4 s after that: a peer subscribes only once.
    timer.advance(OrbitDbTopics.ADMISSION_RETRY_DELAY.minusMillis(1));
    assertThat(recorder.checks).hasSize(1);
    timer.advance(Duration.ofMillis(1));
    assertThat(recorder.checks).hasSize(2);
    recorder.answer(DB, false);
    timer.advance(OrbitDbTopics.ADMISSION_RETRY_DELAY.multipliedBy(2));
    assertThat(recorder.checks).hasSize(3);
    recorder.answer(DB, false);

    timer.advance(Duration.ofMinutes(5));
    assertThat(recorder.checks).hasSize(OrbitDbTopics.ADMISSION_ATTEMPTS);
    assertThat(topics.counters()).containsEntry("not-admitted", 3L);
    assertThat(topics.followed()).isEmpty();

    // A retry that finds the database follows it.
    gossip.subscribe(BOB, OTHER);
    recorder.answer(OTHER, false);
    timer.advance(OrbitDbTopics.ADMISSION_RETRY_DELAY);
    recorder.answer(OTHER, true);
    assertThat(topics.followed()).containsExactly(OTHER);
  }

  @Test
  void admission_shouldNotBeRetried_whenThePeerLeftTheTopic() {
    final OrbitDbTopics topics = started();
    gossip.subscribe(ALICE, DB);
    recorder.answer(DB, false);
    gossip.unsubscribe(ALICE, DB);

    timer.advance(Duration.ofMinutes(1));

    assertThat(recorder.checks).hasSize(1);
    assertThat(topics.pendingAdmissions()).isZero();
  }

  @Test
  void admission_shouldFail_whenTheCheckOutlastsTheAdmissionTimeout() {
    final OrbitDbTopics topics = started();
    gossip.subscribe(ALICE, DB);
    gossip.unsubscribe(ALICE, DB);

    timer.advance(LIMITS.admissionTimeout().minusMillis(1));
    assertThat(topics.pendingAdmissions()).isEqualTo(1);
    timer.advance(Duration.ofMillis(1));

    assertThat(topics.pendingAdmissions()).isZero();
    assertThat(topics.counters()).containsEntry("not-admitted", 1L);
    // An answer after the timeout changes nothing.
    recorder.answer(DB, true);
    assertThat(topics.followed()).isEmpty();
  }

  @Test
  void admission_shouldQueueAPeersSubscriptions_beyondItsPendingChecks_andRefuseBeyondItsQueue() {
    final OrbitDbTopics topics = topics(limits(8, 2));

    gossip.subscribe(ALICE, address("a1"));
    gossip.subscribe(ALICE, address("a2"));
    gossip.subscribe(ALICE, address("a3"));
    gossip.subscribe(BOB, address("b1"));

    assertThat(recorder.checked()).containsExactly(address("a1"), address("a2"),
        address("b1"));
    assertThat(topics.deferredAdmissions()).isEqualTo(1);
    // A check that ends frees the peer's slot: its queued subscription starts.
    recorder.answer(address("a1"), true);
    assertThat(recorder.checked()).endsWith(address("a3"));
    // Beyond its queue, a peer's subscriptions are refused (counted).
    for (int i = 0; i < OrbitDbTopics.MAX_QUEUED_PER_PEER + 1; i++) {
      gossip.subscribe(ALICE, address("more-" + i));
    }
    assertThat(topics.deferredAdmissions()).isEqualTo(OrbitDbTopics.MAX_QUEUED_PER_PEER);
    assertThat(topics.counters()).containsEntry("peer-pending-full", 1L);
  }

  @Test
  void admission_shouldWaitForASlot_whenEveryCheckRuns_andStartOnceOneEnds() {
    final OrbitDbTopics topics = topics(limits(1, 1));
    final PeerId carol = peer();

    gossip.subscribe(ALICE, DB);
    gossip.subscribe(BOB, OTHER);
    gossip.subscribe(carol, address("c1"));
    gossip.subscribe(BOB, address("b2"));
    assertThat(recorder.checked()).containsExactly(DB);
    assertThat(topics.deferredAdmissions()).isEqualTo(3);
    assertThat(topics.counters()).containsEntry("deferred", 3L);
    // Carol leaves: her subscription is dropped when its turn comes.
    gossip.unsubscribe(carol, address("c1"));

    recorder.answer(DB, true);
    assertThat(recorder.checked()).containsExactly(DB, OTHER);
    recorder.answer(OTHER, true);
    // Bob's turn came after Carol's (round-robin), which was dropped.
    assertThat(recorder.checked()).containsExactly(DB, OTHER, address("b2"));
    recorder.answer(address("b2"), true);

    assertThat(topics.deferredAdmissions()).isZero();
    assertThat(topics.followed()).containsExactlyInAnyOrder(DB, OTHER, address("b2"));
  }

  /**
   * Issue 36, squatting: 12 peers hold 1,000 made-up addresses each, with the relay's limits;
   * their checks never resolve. A peer that subscribes to a real database while their retries
   * wait gets its check at once, not after theirs (before the per-peer queues it waited a
   * whole round of 10 s checks behind their retries).
   */
  @Test
  void squatters_shouldNotDelayAnotherPeersDatabase_byMoreThanARound() {
    final OrbitDbTopics topics = topics(OrbitDbTopics.Limits.DEFAULT);
    for (int p = 0; p < 12; p++) {
      final PeerId squatter = peer();
      for (int i = 0; i < 1_000; i++) {
        gossip.subscribe(squatter, address("made-up-" + p + "-" + i));
      }
    }
    // At most one queue per peer is kept: 12 x 1,000 cost counters, not work.
    assertThat(topics.deferredAdmissions())
        .isLessThanOrEqualTo(12 * OrbitDbTopics.MAX_QUEUED_PER_PEER);
    assertThat(topics.pendingAdmissions())
        .isLessThan(OrbitDbTopics.Limits.DEFAULT.maxPending());
    // The first round times out, its retries come back and wait.
    timer.advance(OrbitDbTopics.Limits.DEFAULT.admissionTimeout());
    timer.advance(OrbitDbTopics.ADMISSION_RETRY_DELAY);
    assertThat(topics.counters().get("not-admitted")).isPositive();

    final PeerId writer = peer();
    gossip.subscribe(writer, DB);
    assertThat(recorder.checked()).endsWith(DB);
    recorder.answer(DB, true);
    assertThat(topics.followed()).containsExactly(DB);
  }

  /** More squatting peers than slots: a newcomer waits one round at most, then goes first. */
  @Test
  void squatters_withMorePeersThanSlots_shouldLetANewcomerFirst_whenTheRoundEnds() {
    final OrbitDbTopics topics = topics(OrbitDbTopics.Limits.DEFAULT);
    final int peers = OrbitDbTopics.Limits.DEFAULT.maxPending() + 8;
    for (int p = 0; p < peers; p++) {
      final PeerId squatter = peer();
      for (int i = 0; i < 50; i++) {
        gossip.subscribe(squatter, address("squat-" + p + "-" + i));
      }
    }
    assertThat(topics.pendingAdmissions()).isEqualTo(OrbitDbTopics.Limits.DEFAULT.maxPending());
    final PeerId writer = peer();
    gossip.subscribe(writer, DB);
    assertThat(recorder.checked()).doesNotContain(DB);

    timer.advance(OrbitDbTopics.Limits.DEFAULT.admissionTimeout());

    // When the round ends, peers with no failed check go first (those that never ran, and the
    // newcomer): its check is in the next round's batch.
    assertThat(recorder.checked()).contains(DB);
    assertThat(recorder.checked().indexOf(DB))
        .isLessThan(2 * OrbitDbTopics.Limits.DEFAULT.maxPending());
  }

  @Test
  void peer_shouldGetNoMoreChecks_afterSixteenMadeUpDatabases_untilOneOfItsOwnIsAdmitted() {
    final OrbitDbTopics topics = topics(limits(64, 4));
    for (int i = 0; i < OrbitDbTopics.MAX_FAILED_PER_PEER - 1; i++) {
      final String madeUp = address("made-up-" + i);
      gossip.subscribe(ALICE, madeUp);
      gossip.unsubscribe(ALICE, madeUp);
      recorder.answer(madeUp, false);
    }
    // Two more in flight: one fails (the sixteenth), one is a real database.
    gossip.subscribe(ALICE, address("made-up-last"));
    gossip.subscribe(ALICE, DB);
    gossip.unsubscribe(ALICE, address("made-up-last"));
    recorder.answer(address("made-up-last"), false);

    gossip.subscribe(ALICE, address("refused"));
    assertThat(topics.counters()).containsEntry("peer-failed-full", 1L);
    assertThat(recorder.checked()).doesNotContain(address("refused"));
    // Other peers are still checked.
    gossip.subscribe(BOB, OTHER);
    assertThat(recorder.checked()).endsWith(OTHER);

    // The real one resolves: the peer's budget is back.
    recorder.answer(DB, true);
    gossip.subscribe(ALICE, address("checked-again"));
    assertThat(recorder.checked()).endsWith(address("checked-again"));
  }

  /** 3 databases at most, 2 unrequested per peer. */
  private static OrbitDbTopics.Limits smallCap() {
    return new OrbitDbTopics.Limits(8, 4, Duration.ofSeconds(10), Duration.ofMinutes(10), 3, 2);
  }

  /** {@code peer} subscribes to {@code topic}, a real database with an entry: followed. */
  private void real(final PeerId peer, final String topic) {
    recorder.withEntries.add(topic);
    gossip.subscribe(peer, topic);
    recorder.answer(topic, true);
  }

  /**
   * Issue 36: cheap real one-entry databases filled the followed-database cap for good. At the
   * cap, a new database takes the place of the least recently active unrequested one once that
   * has been idle for the probation time; requested ones (sync, import) stay.
   */
  @Test
  void cap_shouldEvictTheLeastRecentlyActiveIdleUnrequestedDatabase_andNeverARequestedOne() {
    final OrbitDbTopics topics = topics(smallCap());
    final PeerId carol = peer();
    assertThat(topics.followAdmitted(address("asked"))).isCompletedWithValue(true);
    recorder.withEntries.add(address("asked"));
    real(ALICE, address("cheap-1"));
    real(BOB, address("cheap-2"));
    assertThat(topics.followed()).hasSize(3);

    // Full, and nothing idle long enough: refused, not checked.
    timer.advance(Duration.ofMinutes(5));
    gossip.subscribe(carol, address("new-1"));
    assertThat(recorder.checked()).doesNotContain(address("new-1"));
    assertThat(topics.counters()).containsEntry("full", 1L);

    // cheap-1 is active (a message), cheap-2 idle: 11 minutes on, cheap-2 makes room.
    timer.advance(Duration.ofMinutes(4));
    gossip.message(address("cheap-1"), ALICE);
    timer.advance(Duration.ofMinutes(2));
    gossip.subscribe(carol, address("new-2"));
    recorder.withEntries.add(address("new-2"));
    recorder.answer(address("new-2"), true);

    assertThat(topics.followed()).containsExactlyInAnyOrder(address("asked"),
        address("cheap-1"), address("new-2"));
    assertThat(topics.counters()).containsEntry("evicted-idle", 1L);
    assertThat(gossip.unsubscribed).containsExactly(address("cheap-2"));
    assertThat(recorder.unfollows).containsExactly(address("cheap-2"));
    assertThat(persisted(datastore, address("cheap-2"))).isEmpty();
    // The requested one is persisted as such: still requested after a restart.
    assertThat(persisted(datastore, address("asked"))).hasValueSatisfying(v ->
        assertThat(v).isNotEmpty());

    // Much later, everything idle: the unrequested go first, the requested one never.
    timer.advance(Duration.ofHours(2));
    real(carol, address("new-3"));
    real(BOB, address("new-4"));
    assertThat(topics.followed()).containsExactlyInAnyOrder(address("asked"),
        address("new-3"), address("new-4"));
    assertThat(topics.counters()).containsEntry("evicted-idle", 3L);
  }

  /** Topics whose followed databases hold {@code scope}'s memory. */
  private OrbitDbTopics topics(final OrbitDbTopics.Limits limits, final Scope memory,
      final Datastore store) {
    final OrbitDbTopics topics = new OrbitDbTopics(gossip, store, Runnable::run,
        TopicPolicy.OPEN, limits, clock, memory, timer);
    topics.start(recorder, recorder);
    return topics;
  }

  /** Replication memory with room for {@code databases} followed databases. */
  private static Scope memoryFor(final int databases, final List<String> hits) {
    return Scope.root("replication", Limits.NONE.with(Resource.MEMORY,
        databases * OrbitDbTopics.FOLLOWED_DATABASE_BYTES),
        (scope, resource) -> hits.add(scope.kind() + "/" + resource.label()));
  }

  /**
   * Issue 36 (the soak): every followed database kept its replica in the heap, 10,000 of them
   * allowed whatever the heap, so a public relay on the launcher's heap grew until it ran out.
   * Each followed database now holds its share of the replication memory: at a full budget the
   * cap rule applies (an idle unrequested one makes room, else refused and counted).
   */
  @Test
  void memory_shouldBoundFollowedDatabases_evictingIdleOnes_andGiveItBackOnUnfollow() {
    final List<String> hits = new ArrayList<>();
    final Scope memory = memoryFor(2, hits);
    final OrbitDbTopics topics = topics(limits(8, 4), memory, datastore);
    real(ALICE, address("m-1"));
    real(BOB, address("m-2"));
    assertThat(topics.followed()).hasSize(2);
    assertThat(memory.used(Resource.MEMORY)).isEqualTo(2 * OrbitDbTopics.FOLLOWED_DATABASE_BYTES);

    // No room and nothing idle: not even checked (the cheap check before the admission).
    gossip.subscribe(peer(), address("m-3"));
    assertThat(recorder.checked()).doesNotContain(address("m-3"));
    assertThat(topics.counters()).containsEntry("full", 1L);
    // An explicit sync reserves and is refused by the budget, which counts it.
    assertThat(topics.followAdmitted(address("asked"))).isCompletedWithValue(false);
    assertThat(hits).containsExactly("replication/memory");

    // Idle long enough: m-1 makes room, and its memory goes to the newcomer.
    timer.advance(Duration.ofMinutes(11));
    real(peer(), address("m-4"));
    assertThat(topics.followed()).containsExactlyInAnyOrder(address("m-2"), address("m-4"));
    assertThat(topics.counters()).containsEntry("evicted-idle", 1L);
    assertThat(memory.used(Resource.MEMORY)).isEqualTo(2 * OrbitDbTopics.FOLLOWED_DATABASE_BYTES);

    // Probation drops a database without entries: its memory is given back.
    recorder.withEntries.remove(address("m-4"));
    timer.advance(Duration.ofMinutes(11));
    gossip.subscribe(ALICE, address("trigger"));
    assertThat(topics.followed()).doesNotContain(address("m-4"));
    assertThat(memory.used(Resource.MEMORY))
        .isEqualTo(topics.followed().size() * OrbitDbTopics.FOLLOWED_DATABASE_BYTES);
  }

  /** A smaller heap than the last run's: the requested databases are the ones restored. */
  @Test
  void start_shouldRestoreRequestedDatabasesFirst_whenTheMemoryHoldsFewerThanPersisted() {
    datastore.put(OrbitDbTopics.KEY_PREFIX + address("a-subscribed"), new byte[0]);
    datastore.put(OrbitDbTopics.KEY_PREFIX + address("b-subscribed"), new byte[0]);
    datastore.put(OrbitDbTopics.KEY_PREFIX + address("z-asked"), new byte[] {'r'});
    final OrbitDbTopics topics = topics(limits(8, 4), memoryFor(2, new ArrayList<>()),
        datastore);

    assertThat(topics.followed()).hasSize(2).contains(address("z-asked"));
    assertThat(topics.counters()).containsEntry("full", 1L);
    // Not followed now, still persisted for a later start with more memory.
    assertThat(datastore.scan(OrbitDbTopics.KEY_PREFIX + OrbitDbTopics.PREFIX)).hasSize(3);
  }

  /**
   * Issue 36: subscriptions waiting for an admission slot were bounded by counts only. Each now
   * holds its bytes of the replication memory while it waits (and its peer's queue while it has
   * one), given back when it is taken from the queue; with no room it is refused as the bound of
   * waiting subscriptions refuses ({@code pending-full}), and the budget counts the refusal.
   */
  @Test
  void queuedSubscriptions_shouldHoldReplicationMemory_untilTaken_andBeRefusedWithoutRoom() {
    final List<String> hits = new ArrayList<>();
    // The replication surface has room (the cheap check before an admission passes); the
    // node's memory, which every surface shares, has room for two waiting subscriptions.
    final Scope system = Scope.root("system", Limits.NONE.with(Resource.MEMORY,
        OrbitDbTopics.PEER_QUEUE_BYTES + 2 * OrbitDbTopics.QUEUED_SUBSCRIPTION_BYTES),
        (scope, resource) -> hits.add(scope.kind() + "/" + resource.label()));
    final Scope memory = system.child("replication", "replication",
        Limits.NONE.with(Resource.MEMORY, 1 << 20));
    final OrbitDbTopics topics = topics(limits(1, 1), memory, datastore);

    gossip.subscribe(ALICE, address("q-1"));
    assertThat(memory.used(Resource.MEMORY)).isZero();
    gossip.subscribe(ALICE, address("q-2"));
    gossip.subscribe(ALICE, address("q-3"));
    assertThat(topics.deferredAdmissions()).isEqualTo(2);
    assertThat(memory.used(Resource.MEMORY)).isEqualTo(OrbitDbTopics.PEER_QUEUE_BYTES
        + 2 * OrbitDbTopics.QUEUED_SUBSCRIPTION_BYTES);

    // No room for a third: refused like a full queue, counted by the budget.
    gossip.subscribe(ALICE, address("q-4"));
    assertThat(topics.deferredAdmissions()).isEqualTo(2);
    assertThat(topics.counters()).containsEntry("pending-full", 1L);
    assertThat(hits).containsExactly("system/memory");

    // Taken from the queue: its memory is given back, the queue's with its last subscription.
    recorder.answer(address("q-1"), false);
    assertThat(recorder.checked()).endsWith(address("q-2"));
    assertThat(memory.used(Resource.MEMORY)).isEqualTo(OrbitDbTopics.PEER_QUEUE_BYTES
        + OrbitDbTopics.QUEUED_SUBSCRIPTION_BYTES);
    // A subscription whose peer left gives its memory back when its turn comes too.
    gossip.unsubscribe(ALICE, address("q-3"));
    recorder.answer(address("q-2"), false);
    assertThat(topics.deferredAdmissions()).isZero();
    assertThat(memory.used(Resource.MEMORY)).isZero();
    assertThat(system.used(Resource.MEMORY)).isZero();
    assertThat(recorder.checked()).doesNotContain(address("q-3"));
  }

  /**
   * Issue 36: a database refused at the bound of followed databases was counted ({@code full})
   * but never logged when a subscription brought it (and logged once each when a sync did).
   * Now one INFO line a minute at most, saying how many were refused since the last, no trace.
   */
  @Test
  void full_shouldBeLoggedOnceAMinute_sayingHowManyWereRefusedSinceTheLastLine() {
    final OrbitDbTopics topics = topics(smallCap());
    for (int i = 0; i < 3; i++) {
      assertThat(topics.followAdmitted(address("asked-" + i))).isCompletedWithValue(true);
    }
    final ListAppender<ILoggingEvent> logs = new ListAppender<>();
    final Logger logger = (Logger) LoggerFactory.getLogger(OrbitDbTopics.class);
    logs.start();
    logger.addAppender(logs);
    try {
      gossip.subscribe(ALICE, address("refused-0"));
      for (int i = 1; i < 5; i++) {
        timer.advance(Duration.ofSeconds(10));
        gossip.subscribe(BOB, address("refused-" + i));
      }
      assertThat(topics.followAdmitted(address("refused-5"))).isCompletedWithValue(false);
      assertThat(topics.counters()).containsEntry("full", 6L);
      assertThat(fullLines(logs)).hasSize(1);

      timer.advance(Duration.ofSeconds(20));
      gossip.subscribe(ALICE, address("refused-6"));
      assertThat(topics.counters()).containsEntry("full", 7L);
    } finally {
      logger.detachAppender(logs);
    }
    final List<ILoggingEvent> lines = fullLines(logs);
    assertThat(lines).hasSize(2);
    assertThat(lines).allSatisfy(line -> {
      assertThat(line.getLevel()).isEqualTo(Level.INFO);
      assertThat(line.getThrowableProxy()).isNull();
    });
    assertThat(lines.get(0).getFormattedMessage()).startsWith("not following 1 databases")
        .contains(address("refused-0"));
    // The five refused after the first line, the sixth one's included.
    assertThat(lines.get(1).getFormattedMessage()).startsWith("not following 6 databases")
        .contains(address("refused-6"));
  }

  private static List<ILoggingEvent> fullLines(final ListAppender<ILoggingEvent> logs) {
    return logs.list.stream()
        .filter(e -> e.getFormattedMessage().contains("followed databases is reached")).toList();
  }

  @Test
  void cap_shouldKeepARequestedDatabase_whenASubscribedOneIsAskedForLater() {
    final OrbitDbTopics topics = topics(smallCap());
    real(ALICE, address("a"));
    real(ALICE, address("b"));
    real(BOB, address("c"));
    // An explicit sync of a followed database makes it requested.
    assertThat(topics.followAdmitted(address("a"))).isCompletedWithValue(true);
    assertThat(persisted(datastore, address("a"))).hasValueSatisfying(v ->
        assertThat(v).isNotEmpty());

    timer.advance(Duration.ofHours(1));
    real(BOB, address("d"));
    real(peer(), address("e"));

    assertThat(topics.followed()).containsExactlyInAnyOrder(address("a"), address("d"),
        address("e"));
  }

  @Test
  void peerShare_shouldStopOnePeersSubscriptions_atItsShareOfUnrequestedDatabases() {
    final OrbitDbTopics topics = topics(new OrbitDbTopics.Limits(8, 4, Duration.ofSeconds(10),
        Duration.ofMinutes(10), 100, 2));
    real(ALICE, address("a1"));
    real(ALICE, address("a2"));

    gossip.subscribe(ALICE, address("a3"));
    assertThat(recorder.checked()).doesNotContain(address("a3"));
    assertThat(topics.counters()).containsEntry("peer-share-full", 1L);
    // Another peer is not affected; a database ALICE brought that is unfollowed frees a share.
    real(BOB, address("b1"));
    assertThat(topics.followed()).contains(address("b1"));
    timer.advance(Duration.ofMinutes(11));
    recorder.withEntries.remove(address("a1"));
    gossip.subscribe(BOB, address("trigger"));
    assertThat(topics.followed()).doesNotContain(address("a1"));
    gossip.subscribe(ALICE, address("a4"));
    assertThat(recorder.checked()).endsWith(address("a4"));
  }

  @Test
  void start_shouldRestoreRequestedDatabasesAsRequested() {
    datastore.put(OrbitDbTopics.KEY_PREFIX + address("asked"), new byte[] {'r'});
    datastore.put(OrbitDbTopics.KEY_PREFIX + address("subscribed"), new byte[0]);
    datastore.put(OrbitDbTopics.KEY_PREFIX + address("other"), new byte[0]);
    final OrbitDbTopics topics = topics(smallCap());
    recorder.withEntries.addAll(List.of(address("asked"), address("subscribed"),
        address("other")));

    timer.advance(Duration.ofHours(1));
    real(ALICE, address("new-1"));
    real(ALICE, address("new-2"));

    assertThat(topics.followed()).containsExactlyInAnyOrder(address("asked"),
        address("new-1"), address("new-2"));
  }

  @Test
  void probation_shouldDropAFollowedDatabaseWithoutAnEntry_once() {
    final OrbitDbTopics topics = started();
    gossip.subscribe(ALICE, DB);
    recorder.answer(DB, true);
    assertThat(topics.followAdmitted(OTHER)).isCompletedWithValue(true);
    recorder.withEntries.add(OTHER);

    // Checked as subscriptions arrive: not before the probation ends.
    clock.advance(LIMITS.probation().minusSeconds(1));
    gossip.subscribe(BOB, address("trigger-1"));
    assertThat(topics.followed()).containsExactlyInAnyOrder(DB, OTHER);

    clock.advance(Duration.ofSeconds(1));
    gossip.subscribe(BOB, address("trigger-2"));

    assertThat(topics.followed()).containsExactly(OTHER);
    assertThat(gossip.unsubscribed).containsExactly(DB);
    assertThat(persisted(datastore, DB)).isEmpty();
    assertThat(persisted(datastore, OTHER)).isPresent();
    assertThat(recorder.unfollows).containsExactly(DB);
    assertThat(topics.counters()).containsEntry("dropped-empty", 1L);
    // A database that passed its probation is not checked again.
    recorder.withEntries.remove(OTHER);
    clock.advance(LIMITS.probation().multipliedBy(2));
    gossip.subscribe(BOB, address("trigger-3"));
    assertThat(topics.followed()).containsExactly(OTHER);
  }

  /**
   * Issue 36: whether a database on probation has an entry may read the datastore (a PostgreSQL
   * round trip on shared stores); a subscription arriving on the gossipsub event loop must not
   * wait for it. With the read blocked, the subscription returns at once; the check runs on
   * the storage executor, and the database is dropped once it answers.
   */
  @Test
  void probation_shouldCheckOnTheStorageExecutor_soABlockedReadNeverStallsTheEventLoop()
      throws Exception {
    final java.util.concurrent.ExecutorService storage =
        java.util.concurrent.Executors.newSingleThreadExecutor();
    try {
      final OrbitDbTopics topics = topics(TopicPolicy.OPEN, LIMITS, datastore, storage);
      assertThat(topics.followAdmitted(DB).get(10, java.util.concurrent.TimeUnit.SECONDS))
          .isTrue();
      recorder.entriesGate = new java.util.concurrent.CountDownLatch(1);
      clock.advance(LIMITS.probation());

      final Thread loop = Thread.currentThread();
      gossip.subscribe(BOB, address("trigger-1"));
      gossip.subscribe(BOB, address("trigger-2"));

      // Returned while the read is blocked; the check is queued once, not per subscription.
      org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(10))
          .until(() -> !recorder.entryCheckThreads.isEmpty());
      assertThat(recorder.entryCheckThreads).hasSize(1).doesNotContain(loop);
      assertThat(topics.followed()).contains(DB);
      recorder.entriesGate.countDown();
      org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(10))
          .until(() -> !topics.followed().contains(DB));
      assertThat(topics.counters()).containsEntry("dropped-empty", 1L);
      org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(10))
          .until(() -> persisted(datastore, DB).isEmpty());
    } finally {
      storage.shutdownNow();
    }
  }

  /** A probation check the storage queue refuses is not lost: the next sweep picks it again. */
  @Test
  void probation_shouldCheckAgainAtTheNextSweep_whenTheStorageQueueRefused() {
    final java.util.concurrent.atomic.AtomicBoolean refuse =
        new java.util.concurrent.atomic.AtomicBoolean();
    final Executor storage = task -> {
      if (refuse.get()) {
        throw new RejectedExecutionException("full");
      }
      task.run();
    };
    final OrbitDbTopics topics = topics(TopicPolicy.OPEN, LIMITS, datastore, storage);
    assertThat(topics.followAdmitted(DB)).isCompletedWithValue(true);
    clock.advance(LIMITS.probation());
    refuse.set(true);
    gossip.subscribe(BOB, address("trigger-1"));
    assertThat(topics.followed()).contains(DB);
    assertThat(topics.counters()).containsEntry("probation-deferred", 1L);

    refuse.set(false);
    gossip.subscribe(BOB, address("trigger-2"));
    assertThat(topics.followed()).doesNotContain(DB);
    assertThat(topics.counters()).containsEntry("dropped-empty", 1L);
  }

  @Test
  void start_shouldResubscribeThePersistedDatabases_skippingDeniedOnesAndNonAddresses() {
    final Datastore store = new MemoryDatastore();
    for (final String topic : List.of(DB, OTHER, base32(DB), "/orbitdb/not-a-cid")) {
      store.put(OrbitDbTopics.KEY_PREFIX + topic, new byte[0]);
    }
    final List<String> writes = new ArrayList<>();
    final Executor storage = task -> {
      writes.add("write");
      task.run();
    };

    final OrbitDbTopics topics = topics(TopicPolicy.of(List.of(), List.of(OTHER)), LIMITS,
        store, storage);

    assertThat(topics.followed()).containsExactly(DB);
    assertThat(gossip.subscribed).containsExactly(DB);
    assertThat(recorder.follows).containsExactly(DB);
    assertThat(topics.counters()).containsExactly(Map.entry("denied", 1L));
    // Restored, not admitted: no check, no write.
    assertThat(recorder.checks).isEmpty();
    assertThat(writes).isEmpty();
    // Restored databases are on probation too.
    clock.advance(LIMITS.probation());
    gossip.subscribe(ALICE, address("trigger"));
    assertThat(topics.followed()).isEmpty();
  }

  @Test
  void followAdmitted_shouldPersistBeforeFollowing_andFollowOnce() {
    final OrbitDbTopics topics = started();

    assertThat(topics.followAdmitted(DB)).isCompletedWithValue(true);
    assertThat(topics.followAdmitted(DB)).isCompletedWithValue(true);

    assertThat(persisted(datastore, DB)).isPresent();
    assertThat(recorder.follows).containsExactly(DB);
    assertThat(recorder.checks).isEmpty();
  }

  @Test
  void follow_shouldLeaveTheTopicUnfollowed_whenItCannotBePersisted() {
    final Executor rejecting = task -> {
      throw new RejectedExecutionException("full");
    };
    final OrbitDbTopics refused = topics(TopicPolicy.OPEN, LIMITS, datastore, rejecting);
    assertThat(refused.followAdmitted(DB)).isCompletedWithValue(false);
    assertThat(refused.followed()).isEmpty();
    assertThat(refused.counters()).containsEntry("persist-rejected", 1L);

    final OrbitDbTopics failing = topics(TopicPolicy.OPEN, LIMITS, new FailingDatastore(),
        Runnable::run);
    assertThat(failing.followAdmitted(OTHER)).isCompletedWithValue(false);
    assertThat(failing.followed()).isEmpty();
    assertThat(failing.counters()).containsEntry("persist-failed", 1L);
    assertThat(recorder.follows).isEmpty();
    assertThat(gossip.subscribed).isEmpty();
  }

  @Test
  void follow_shouldStopAtMaxTopics() {
    for (int i = 0; i < OrbitDbTopics.MAX_TOPICS; i++) {
      datastore.put(OrbitDbTopics.KEY_PREFIX + address("db-" + i), new byte[0]);
    }
    final OrbitDbTopics topics = started();
    assertThat(topics.followed()).hasSize(OrbitDbTopics.MAX_TOPICS);

    assertThat(topics.followAdmitted(DB)).isCompletedWithValue(false);
    gossip.subscribe(ALICE, OTHER);

    assertThat(recorder.checks).isEmpty();
    assertThat(topics.counters()).containsEntry("full", 2L);
    assertThat(persisted(datastore, DB)).isEmpty();
  }

  /** A datastore whose writes fail (a full disk). */
  private static final class FailingDatastore implements Datastore {
    @Override
    public Optional<byte[]> get(final String key) {
      return Optional.empty();
    }

    @Override
    public void put(final String key, final byte[] value) {
      throw new IllegalStateException("disk full");
    }

    @Override
    public boolean delete(final String key) {
      return false;
    }

    @Override
    public List<Entry> scan(final String prefix) {
      return List.of();
    }

    @Override
    public void close() {}
  }
}
