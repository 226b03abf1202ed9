package io.relaypinner.relay.replication;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.relaypinner.ipfs.blockstore.MemoryBlockstore;
import io.relaypinner.ipfs.blockstore.StoreUnavailableException;
import io.relaypinner.ipfs.datastore.Fence;
import io.relaypinner.ipfs.datastore.MemoryDatastore;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.orbitdb.BlockFetcher;
import io.relaypinner.orbitdb.JavaWriter;
import io.relaypinner.orbitdb.OrbitDbAddress;
import io.relaypinner.orbitdb.OrbitDbReplica;
import io.relaypinner.orbitdb.OrbitDbReplicas;
import io.relaypinner.orbitdb.ReplicaContext;
import io.relaypinner.orbitdb.identity.Identities;
import io.relaypinner.orbitdb.identity.IdentityVerifiers;
import io.relaypinner.orbitdb.log.Entry;
import io.relaypinner.orbitdb.log.JoinResult;
import io.relaypinner.orbitdb.log.LogConfig;
import io.relaypinner.relay.coordination.Coordination;
import io.relaypinner.relay.coordination.DatabaseOwnership;
import io.relaypinner.relay.coordination.HeadsAnnouncer;
import io.relaypinner.relay.storage.GcPolicy;
import io.relaypinner.relay.sync.SyncContext;
import io.relaypinner.relay.sync.SyncResult;
import io.relaypinner.relay.sync.SyncTrigger;
import io.relaypinner.testkit.MutableClock;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@link ReplicationCoordinator} between relays on shared stores, without PostgreSQL or a
 * network: a fake ownership and heads announcer stand for the coordination, two
 * {@link OrbitDbReplicas} with their own log state on one memory blockstore and datastore stand
 * for the owner relay and this (follower) relay, and peers' blocks come from a map. The clock is
 * a {@link MutableClock} that does not move.
 */
class ReplicationCoordinatorTest {
  private final MutableClock clock = new MutableClock(Instant.parse("2026-11-25T10:00:00Z"));
  /** Blocks this relay's peers hold. */
  private final MemoryBlockstore remote = new MemoryBlockstore();
  /** The shared stores. */
  private final MemoryBlockstore shared = new MemoryBlockstore();
  private final MemoryDatastore datastore = new MemoryDatastore();
  /** Peer fetches of these wait for {@link #gate}. */
  private final Set<Cid> gated = ConcurrentHashMap.newKeySet();
  private final CountDownLatch gate = new CountDownLatch(1);
  private final ThreadPoolExecutor executor = new ThreadPoolExecutor(4, 4, 0,
      TimeUnit.MILLISECONDS, new LinkedBlockingQueue<>());
  private final JavaWriter writer = new JavaWriter();
  private final OrbitDbReplicas replicas = replicas("follower");
  private final FakeOwnership ownership = new FakeOwnership();
  private final FakeHeads heads = new FakeHeads();
  private final Map<String, Integer> counters = new ConcurrentHashMap<>();
  private final List<JoinResult> peerJoins = new CopyOnWriteArrayList<>();
  private final List<String> takeovers = new CopyOnWriteArrayList<>();
  private final List<String> syncs = new CopyOnWriteArrayList<>();
  private final List<String> follows = new CopyOnWriteArrayList<>();
  private final List<String> caughtUp = new CopyOnWriteArrayList<>();

  @AfterEach
  void close() {
    gate.countDown();
    executor.shutdownNow();
  }

  /** A relay's replicas on the shared stores, its log state under {@code scope}. */
  private OrbitDbReplicas replicas(final String scope) {
    final BlockFetcher fetcher = cid -> {
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
    return new OrbitDbReplicas(new ReplicaContext(shared, datastore, fetcher,
        new Identities(shared, fetcher, IdentityVerifiers.defaults(), executor, 100), executor,
        LogConfig.DEFAULT.withStateScope(scope), clock));
  }

  private ReplicationCoordinator coordinator(final Executor coordinatorExecutor) {
    final ReplicationCoordinator coordinator = new ReplicationCoordinator(replicas,
        coordinatorExecutor, clock, name -> counters.merge(name, 1, Integer::sum),
        (session, replica, result) -> peerJoins.add(result));
    coordinator.use(new Coordination(ownership, heads, Coordination.local().media(),
        GcPolicy.ALWAYS, () -> { }));
    coordinator.start(takeovers::add, syncs::add, follows::add, caughtUp::add);
    return coordinator;
  }

  private ReplicationCoordinator coordinator() {
    return coordinator(Runnable::run);
  }

  private int count(final String name) {
    return counters.getOrDefault(name, 0);
  }

  /** A database {@link #writer} may write; its manifest and controller are with the peers. */
  private OrbitDbAddress database(final String name) {
    remote.put(writer.identityCid(), writer.identityBlock());
    return JavaWriter.database(remote, name, List.of(writer.id()));
  }

  private OrbitDbReplica follow(final OrbitDbReplicas of, final OrbitDbAddress address)
      throws Exception {
    return of.follow(address).get(10, TimeUnit.SECONDS);
  }

  /** Who owns what, as the test says. */
  private static final class FakeOwnership implements DatabaseOwnership {
    final Set<String> wanted = ConcurrentHashMap.newKeySet();
    final Set<String> standingBy = ConcurrentHashMap.newKeySet();
    final Set<String> owned = ConcurrentHashMap.newKeySet();
    final List<String> dropped = new CopyOnWriteArrayList<>();
    volatile Consumer<String> listener;

    @Override
    public void want(final String name) {
      wanted.add(name);
    }

    @Override
    public void standBy(final String name) {
      standingBy.add(name);
    }

    @Override
    public boolean wants(final String name) {
      return wanted.contains(name) || standingBy.contains(name);
    }

    @Override
    public void drop(final String name) {
      dropped.add(name);
      wanted.remove(name);
      owned.remove(name);
    }

    @Override
    public boolean owns(final String name) {
      return owned.contains(name);
    }

    @Override
    public Optional<Fence> fence(final String name) {
      return owns(name) ? Optional.of(new Fence(name, "this", 1)) : Optional.empty();
    }

    @Override
    public void onAcquired(final Consumer<String> acquired) {
      this.listener = acquired;
    }

    void acquire(final String name) {
      owned.add(name);
      listener.accept(name);
    }
  }

  /** Announcements made, and what the other relays announce when the test says so. */
  private static final class FakeHeads implements HeadsAnnouncer {
    final List<Map.Entry<String, List<String>>> announced = new CopyOnWriteArrayList<>();
    volatile BiConsumer<String, List<String>> listener;
    volatile boolean down;

    @Override
    public void announce(final String address, final List<String> cids, final long epoch) {
      if (down) {
        throw new StoreUnavailableException("postgres", "unreachable", null);
      }
      announced.add(Map.entry(address, List.copyOf(cids)));
    }

    @Override
    public void onAnnounced(final BiConsumer<String, List<String>> heard) {
      this.listener = heard;
    }

    void hear(final String address, final List<String> cids) {
      listener.accept(address, cids);
    }
  }

  private static SyncContext context(final OrbitDbAddress address, final Duration timeout) {
    return new SyncContext() {
      @Override
      public String address() {
        return address.toString();
      }

      @Override
      public SyncTrigger trigger() {
        return SyncTrigger.MESSAGE;
      }

      @Override
      public Duration timeout() {
        return timeout;
      }

      @Override
      public void countOperation() {}

      @Override
      public boolean cancelled() {
        return false;
      }
    };
  }

  @Test
  void leaseAcquired_shouldSyncTheDatabaseAsItsOwner_onlyForDatabaseAddresses() {
    coordinator();
    final OrbitDbAddress address = database("acquired");

    ownership.acquire(address.toString());
    // Leases that are not databases (the GC leader's), and no address by the one rule.
    ownership.acquire("gc-leader");
    ownership.acquire(OrbitDbAddress.PREFIX + address.manifest());

    assertThat(takeovers).containsExactly(address.toString());
    assertThat(count("ownership-acquired")).isEqualTo(1);
  }

  @Test
  void announcementOfAnUnfollowedDatabase_shouldStandByFollowAndSyncIt() {
    coordinator();
    final OrbitDbAddress address = database("unfollowed");

    heads.hear(address.toString(), List.of());
    heads.hear(OrbitDbAddress.PREFIX + address.manifest(), List.of());
    heads.hear("/orbitdb/not-a-cid", List.of());

    assertThat(ownership.standingBy).containsExactly(address.toString());
    assertThat(ownership.wanted).isEmpty();
    assertThat(follows).containsExactly(address.toString());
    assertThat(syncs).containsExactly(address.toString());
    assertThat(count("heads-announced-heard")).isEqualTo(1);
  }

  @Test
  void announcedHeads_shouldBeJoinedFromTheSharedStores_andRecordedOnceComplete()
      throws Exception {
    coordinator();
    final OrbitDbAddress address = database("shared");
    final OrbitDbReplica replica = follow(replicas, address);
    // The owner wrote them: on the shared stores, not with any of this relay's peers.
    final List<Entry> chain = writer.chain(shared, address, 3);

    heads.hear(address.toString(), List.of(chain.get(2).cid().toString()));

    await().atMost(Duration.ofSeconds(10)).until(() -> !caughtUp.isEmpty());
    assertThat(replica.log().size()).isEqualTo(3);
    assertThat(replica.log().isComplete()).isTrue();
    assertThat(caughtUp).containsExactly(address.toString());
    assertThat(heads.announced).isEmpty();
    // A head joined already is not joined again.
    heads.hear(address.toString(), List.of(chain.get(2).cid().toString()));
    await().during(Duration.ofMillis(200)).atMost(Duration.ofSeconds(2))
        .until(() -> caughtUp.size() == 1);
  }

  @Test
  void announcedHeads_shouldNotBeRecordedAsCaughtUp_onTheOwner() throws Exception {
    coordinator();
    final OrbitDbAddress address = database("owned");
    ownership.owned.add(address.toString());
    final OrbitDbReplica replica = follow(replicas, address);
    final List<Entry> chain = writer.chain(shared, address, 2);

    heads.hear(address.toString(), List.of(chain.get(1).cid().toString()));

    await().atMost(Duration.ofSeconds(10)).until(() -> replica.log().size() == 2);
    // The owner's own syncs record its history.
    await().during(Duration.ofMillis(200)).atMost(Duration.ofSeconds(2))
        .until(caughtUp::isEmpty);
  }

  @Test
  void announcementWithoutHeads_shouldJoinTheHeadsTheOwnerStored() throws Exception {
    coordinator();
    final OrbitDbAddress address = database("stored");
    final List<Entry> chain = writer.chain(shared, address, 4);
    final OrbitDbReplica owners = follow(replicas("owner"), address);
    owners.join(chain.get(3).cid()).get(10, TimeUnit.SECONDS);
    final OrbitDbReplica replica = follow(replicas, address);
    // Each relay keeps its own log state; the owner's heads are where every relay reads them.
    assertThat(replica.log().size()).isZero();
    assertThat(replica.log().storedHeads()).containsExactly(chain.get(3).cid());

    heads.hear(address.toString(), List.of());

    await().atMost(Duration.ofSeconds(10)).until(() -> replica.log().size() == 4);
    await().atMost(Duration.ofSeconds(10)).until(() -> !caughtUp.isEmpty());
  }

  @Test
  void announcementWithAMalformedHead_shouldJoinNothing() throws Exception {
    coordinator();
    final OrbitDbAddress address = database("malformed");
    final OrbitDbReplica replica = follow(replicas, address);
    final List<Entry> chain = writer.chain(shared, address, 2);

    heads.hear(address.toString(), List.of(chain.get(1).cid().toString(), "not-a-cid"));

    assertThat(count("heads-announced-malformed")).isEqualTo(1);
    assertThat(replica.log().size()).isZero();
    assertThat(caughtUp).isEmpty();
  }

  @Test
  void followed_shouldWantTheDatabase_andTellTheOthers_withoutHeads() {
    final ReplicationCoordinator coordinator = coordinator();
    final OrbitDbAddress address = database("followed");

    coordinator.followed(address);

    assertThat(ownership.wanted).containsExactly(address.toString());
    assertThat(heads.announced).containsExactly(Map.entry(address.toString(), List.of()));

    heads.down = true;
    coordinator.followed(database("while-down"));
    assertThat(count("heads-announce-failed")).isEqualTo(1);

    coordinator.unfollowed(address);
    assertThat(ownership.dropped).containsExactly(address.toString());
    assertThat(ownership.wants(address.toString())).isFalse();
  }

  @Test
  void followed_shouldCountTheAnnouncement_whenTheExecutorRefusesIt() {
    final ReplicationCoordinator coordinator = coordinator(task -> {
      throw new RejectedExecutionException("closed");
    });
    final OrbitDbAddress address = database("refused");

    coordinator.followed(address);

    assertThat(ownership.wanted).containsExactly(address.toString());
    assertThat(heads.announced).isEmpty();
    assertThat(count("executor-rejected")).isEqualTo(1);
  }

  @Test
  void pinsJoins_shouldHoldOnTheOwner_andForADatabaseNobodyLeases() {
    final ReplicationCoordinator coordinator = coordinator();
    final OrbitDbAddress address = database("pins");

    // Not followed by any relay (an access controller's database): pinned with its user.
    assertThat(coordinator.pinsJoins(address)).isTrue();
    ownership.want(address.toString());
    assertThat(coordinator.owns(address)).isFalse();
    assertThat(coordinator.pinsJoins(address)).isFalse();
    ownership.owned.add(address.toString());
    assertThat(coordinator.owns(address)).isTrue();
    assertThat(coordinator.pinsJoins(address)).isTrue();
  }

  @Test
  void joined_shouldAnnounceTheNewHeads_onlyOnTheOwner_andOnlyWhenEntriesWereAdded()
      throws Exception {
    final ReplicationCoordinator coordinator = coordinator();
    final OrbitDbAddress address = database("joined");
    final List<Entry> chain = writer.chain(remote, address, 3);
    final OrbitDbReplica replica = follow(replicas, address);
    final JoinResult first = replica.join(chain.get(1).cid()).get(10, TimeUnit.SECONDS);
    assertThat(first.added()).hasSize(2);

    coordinator.joined(replica, first);
    assertThat(heads.announced).isEmpty();

    ownership.owned.add(address.toString());
    coordinator.joined(replica, first);
    assertThat(heads.announced).containsExactly(Map.entry(address.toString(),
        List.of(chain.get(1).cid().toString())));
    assertThat(count("heads-announced")).isEqualTo(1);

    final JoinResult nothing = replica.join(chain.get(1).cid()).get(10, TimeUnit.SECONDS);
    assertThat(nothing.added()).isEmpty();
    coordinator.joined(replica, nothing);
    assertThat(heads.announced).hasSize(1);

    heads.down = true;
    coordinator.joined(replica, replica.join(chain.get(2).cid()).get(10, TimeUnit.SECONDS));
    assertThat(count("heads-announce-failed")).isEqualTo(1);
  }

  @Test
  void followerSync_shouldJoinWhatPeersSentAndWhatTheOwnerStored_andAnnounceIt()
      throws Exception {
    final ReplicationCoordinator coordinator = coordinator();
    final OrbitDbAddress address = database("follower-sync");
    // Peers hold five entries; the owner replicated three of them onto the shared stores.
    final List<Entry> chain = writer.chain(remote, address, 5);
    for (int i = 0; i < 3; i++) {
      shared.put(chain.get(i).cid(), chain.get(i).block());
    }
    follow(replicas("owner"), address).join(chain.get(2).cid()).get(10, TimeUnit.SECONDS);
    final OrbitDbReplica replica = follow(replicas, address);
    final DatabaseSession session = new DatabaseSession(address, InboxBudget.defaults());
    session.offer(chain.get(4).block());

    final SyncResult result = coordinator.followerSync(context(address, Duration.ofSeconds(30)),
        session, replica);

    assertThat(result.dbAddress()).isEqualTo(address.toString());
    assertThat(result.entries()).isEqualTo(5);
    assertThat(result.newEntries()).isEqualTo(5);
    assertThat(result.heads()).isEqualTo(1);
    assertThat(result.receivedUpdate()).isTrue();
    assertThat(result.fallbackScanUsed()).isFalse();
    assertThat(result.extractedMediaCids()).isEmpty();
    assertThat(count("syncs-follower")).isEqualTo(1);
    // What its own peers sent is this relay's to pin; the inbox is taken.
    assertThat(peerJoins).hasSize(1);
    assertThat(session.hasHeads()).isFalse();
    assertThat(heads.announced).containsExactly(Map.entry(address.toString(),
        List.of(chain.get(4).cid().toString())));
  }

  @Test
  void followerSync_shouldNotWaitForASlowJoin_andAnnounceItWhenItEnds() throws Exception {
    final ReplicationCoordinator coordinator = coordinator();
    final OrbitDbAddress address = database("slow");
    final List<Entry> chain = writer.chain(remote, address, 2);
    gated.add(chain.get(0).cid());
    final OrbitDbReplica replica = follow(replicas, address);
    final DatabaseSession session = new DatabaseSession(address, InboxBudget.defaults());
    session.offer(chain.get(1).block());

    // Waits for its joins at most as long as the sync may run (here 50 ms of the clock).
    final SyncResult result = coordinator.followerSync(context(address, Duration.ofMillis(50)),
        session, replica);

    assertThat(count("follower-joins-pending")).isEqualTo(1);
    assertThat(result.newEntries()).isZero();
    assertThat(result.receivedUpdate()).isFalse();
    assertThat(heads.announced).isEmpty();

    gate.countDown();
    await().atMost(Duration.ofSeconds(10)).until(() -> !heads.announced.isEmpty());
    assertThat(heads.announced).containsExactly(Map.entry(address.toString(),
        List.of(chain.get(1).cid().toString())));
    await().atMost(Duration.ofSeconds(10)).until(() -> !caughtUp.isEmpty());
    assertThat(replica.log().size()).isEqualTo(2);
  }
}
