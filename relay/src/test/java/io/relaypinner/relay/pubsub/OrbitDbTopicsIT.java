package io.relaypinner.relay.pubsub;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.relaypinner.ipfs.datastore.MemoryDatastore;
import io.relaypinner.libp2p.crypto.KeyType;
import io.relaypinner.libp2p.crypto.Keys;
import io.relaypinner.libp2p.host.Host;
import io.relaypinner.libp2p.host.HostConfig;
import io.relaypinner.libp2p.netty.EventLoops;
import io.relaypinner.libp2p.pubsub.GossipsubConfig;
import io.relaypinner.libp2p.pubsub.PubSub;
import io.relaypinner.multiformats.Multiaddr;
import io.relaypinner.multiformats.PeerId;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The relay follows the OrbitDB topics its peers subscribe to, and remembers them. */
class OrbitDbTopicsIT {
  private static final String DATABASE =
      "/orbitdb/zdpuAkstgbTVGHQmMi5TC84auhJ8rL5qoaNEtXo2d5PHXs2To";
  private final EventLoops loops = EventLoops.create(2, "topics-it");
  private final ExecutorService storage = Executors.newSingleThreadExecutor();
  private final List<AutoCloseable> toClose = new CopyOnWriteArrayList<>();

  @AfterEach
  void close() throws Exception {
    for (int i = toClose.size() - 1; i >= 0; i--) {
      toClose.get(i).close();
    }
    storage.shutdownNow();
    loops.shutdownGracefully(Duration.ofSeconds(3));
  }

  private Host host(final boolean listen) throws Exception {
    final Host host = new Host(Keys.generate(KeyType.ED25519, new SecureRandom()),
        HostConfig.builder().listenAddresses(listen
            ? List.of(Multiaddr.parse("/ip4/127.0.0.1/tcp/0")) : List.of()).build(), loops,
        Clock.systemUTC());
    host.start().get(5, TimeUnit.SECONDS);
    toClose.add(host);
    return host;
  }

  private PubSub pubsub(final Host host) {
    final PubSub pubsub = PubSub.start(host, GossipsubConfig.DEFAULT, Clock.systemUTC(),
        new Random());
    toClose.add(pubsub::close);
    return pubsub;
  }

  /** Records what the topics report; admits every database address. */
  private static final class Recorder implements OrbitDbTopics.Listener, OrbitDbTopics.Admission {
    final List<String> followed = new CopyOnWriteArrayList<>();
    final List<String> messages = new CopyOnWriteArrayList<>();
    final java.util.Set<String> exists = java.util.concurrent.ConcurrentHashMap.newKeySet();
    volatile boolean admitAll = true;

    @Override
    public void onFollow(final String topic) {
      followed.add(topic);
    }

    @Override
    public void onUnfollow(final String topic) {
      followed.remove(topic);
    }

    @Override
    public void onMessage(final String topic, final byte[] data, final PeerId from) {
      messages.add(topic);
    }

    @Override
    public void onPeerSubscribed(final String topic, final PeerId peer) {}

    @Override
    public CompletableFuture<Boolean> admit(final String topic) {
      if (admitAll || exists.contains(topic)) {
        return CompletableFuture.completedFuture(true);
      }
      // Like a manifest no peer has: never resolves (the admission times out).
      return new CompletableFuture<>();
    }

    @Override
    public boolean hasEntries(final String topic) {
      return false;
    }
  }

  private OrbitDbTopics topics(final PubSub pubsub, final MemoryDatastore datastore,
      final OrbitDbTopics.Limits limits) {
    return new OrbitDbTopics(pubsub, datastore, storage, TopicPolicy.OPEN, limits,
        Clock.systemUTC());
  }

  @Test
  void relay_shouldFollowOnlyDatabaseTopics_andResubscribeThemAfterARestart() throws Exception {
    final MemoryDatastore datastore = new MemoryDatastore();
    final Host relayHost = host(true);
    final PubSub relayPubSub = pubsub(relayHost);
    final OrbitDbTopics topics = topics(relayPubSub, datastore, OrbitDbTopics.Limits.DEFAULT);
    final Recorder recorder = new Recorder();
    final List<String> reported = recorder.followed;
    topics.start(recorder, recorder);

    final Host peer = host(false);
    final PubSub peerPubSub = pubsub(peer);
    peer.dial(relayHost.listenAddresses().get(0).withPeerId(relayHost.peerId()))
        .get(10, TimeUnit.SECONDS);
    peerPubSub.subscribe(DATABASE).get(5, TimeUnit.SECONDS);
    peerPubSub.subscribe("/orbitdb/not-a-cid").get(5, TimeUnit.SECONDS);
    peerPubSub.subscribe("todo._peer-discovery._p2p._pubsub").get(5, TimeUnit.SECONDS);

    await().atMost(Duration.ofSeconds(10)).until(() -> relayPubSub.topics().contains(DATABASE)
        && topics.ignoredTopics() == 1);
    assertThat(topics.followed()).containsExactly(DATABASE);
    assertThat(relayPubSub.topics()).containsExactly(DATABASE);
    assertThat(reported).containsExactly(DATABASE);
    await().atMost(Duration.ofSeconds(5))
        .until(() -> datastore.get("/relay/topics" + DATABASE).isPresent());

    // A restarted relay (new host and pubsub, same datastore) resubscribes without any peer.
    final PubSub restarted = pubsub(host(true));
    final OrbitDbTopics again = topics(restarted, datastore, OrbitDbTopics.Limits.DEFAULT);
    final Recorder recorderAgain = new Recorder();
    recorderAgain.admitAll = false;
    final List<String> reportedAgain = recorderAgain.followed;
    again.start(recorderAgain, recorderAgain);
    assertThat(again.followed()).containsExactly(DATABASE);
    assertThat(reportedAgain).containsExactly(DATABASE);
    await().atMost(Duration.ofSeconds(5)).until(() -> restarted.topics().contains(DATABASE));
  }

  @Test
  void onMessage_shouldReportTopic_whenMessageArrivesOnFollowedDatabase() throws Exception {
    final Host relayHost = host(true);
    final PubSub relayPubSub = pubsub(relayHost);
    final OrbitDbTopics topics = topics(relayPubSub, new MemoryDatastore(),
        OrbitDbTopics.Limits.DEFAULT);
    final Recorder recorder = new Recorder();
    final List<String> messages = recorder.messages;
    topics.start(recorder, recorder);
    final Host peer = host(false);
    final PubSub peerPubSub = pubsub(peer);
    peer.dial(relayHost.listenAddresses().get(0).withPeerId(relayHost.peerId()))
        .get(10, TimeUnit.SECONDS);
    peerPubSub.subscribe(DATABASE).get(5, TimeUnit.SECONDS);
    await().atMost(Duration.ofSeconds(10)).until(() -> relayPubSub.topics().contains(DATABASE));

    // Until the mesh forms, a publish may reach nobody: publish again until one arrives.
    await().atMost(Duration.ofSeconds(20)).until(() -> {
      peerPubSub.publish(DATABASE, "head".getBytes(StandardCharsets.UTF_8));
      return !messages.isEmpty();
    });
    assertThat(messages).containsOnly(DATABASE);
  }

  @Test
  void subscriptions_shouldBeAdmittedWithinBounds_andOnlyWhenTheDatabaseResolves()
      throws Exception {
    final Host relayHost = host(true);
    final PubSub relayPubSub = pubsub(relayHost);
    final OrbitDbTopics topics = topics(relayPubSub, new MemoryDatastore(),
        new OrbitDbTopics.Limits(8, 2, Duration.ofMillis(500), Duration.ofMinutes(10)));
    final Recorder recorder = new Recorder();
    recorder.admitAll = false;
    topics.start(recorder, recorder);
    final Host peer = host(false);
    final PubSub peerPubSub = pubsub(peer);
    peer.dial(relayHost.listenAddresses().get(0).withPeerId(relayHost.peerId()))
        .get(10, TimeUnit.SECONDS);

    // One peer subscribes to many database topics no one has: at most 2 are checked at once,
    // 16 wait in its queue, the rest are refused; none is followed, and none is subscribed by
    // the relay.
    for (int i = 0; i < 50; i++) {
      peerPubSub.subscribe("/orbitdb/" + randomCid()).get(5, TimeUnit.SECONDS);
    }
    await().atMost(Duration.ofSeconds(10)).until(() ->
        topics.counters().getOrDefault("peer-pending-full", 0L)
            >= 50 - 2 - OrbitDbTopics.MAX_QUEUED_PER_PEER);
    assertThat(topics.pendingAdmissions()).isLessThanOrEqualTo(2);
    await().atMost(Duration.ofSeconds(20)).until(() -> topics.pendingAdmissions() == 0
        && topics.deferredAdmissions() == 0);
    assertThat(topics.followed()).isEmpty();
    assertThat(relayPubSub.topics()).isEmpty();

    // A database that exists is followed once checked (from another peer: this one spent its
    // failure budget on the made-up ones).
    recorder.exists.add(DATABASE);
    final Host other = host(false);
    final PubSub otherPubSub = pubsub(other);
    other.dial(relayHost.listenAddresses().get(0).withPeerId(relayHost.peerId()))
        .get(10, TimeUnit.SECONDS);
    otherPubSub.subscribe(DATABASE).get(5, TimeUnit.SECONDS);
    await().atMost(Duration.ofSeconds(10)).until(() -> topics.followed().contains(DATABASE));
    assertThat(recorder.followed).containsExactly(DATABASE);
  }

  @Test
  void subscriptions_beyondTheAdmissionSlots_waitForOne_ratherThanBeingIgnored()
      throws Exception {
    final Host relayHost = host(true);
    final PubSub relayPubSub = pubsub(relayHost);
    final OrbitDbTopics topics = topics(relayPubSub, new MemoryDatastore(),
        new OrbitDbTopics.Limits(2, 2, Duration.ofSeconds(1), Duration.ofMinutes(10)));
    final Recorder recorder = new Recorder();
    recorder.admitAll = false;
    topics.start(recorder, recorder);
    final Multiaddr relay = relayHost.listenAddresses().get(0).withPeerId(relayHost.peerId());
    // Two peers take both slots with databases no one has (each check runs to its timeout)...
    for (int i = 0; i < 2; i++) {
      final Host hogHost = host(false);
      final PubSub hog = pubsub(hogHost);
      hogHost.dial(relay).get(10, TimeUnit.SECONDS);
      hog.subscribe("/orbitdb/" + randomCid()).get(5, TimeUnit.SECONDS);
    }
    await().atMost(Duration.ofSeconds(10)).until(() -> topics.pendingAdmissions() == 2);
    // ...while three peers subscribe to databases that exist: they wait, then are followed.
    final List<String> real = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      final String database = "/orbitdb/" + randomCid();
      recorder.exists.add(database);
      real.add(database);
      final Host peerHost = host(false);
      final PubSub peer = pubsub(peerHost);
      peerHost.dial(relay).get(10, TimeUnit.SECONDS);
      peer.subscribe(database).get(5, TimeUnit.SECONDS);
    }
    await().atMost(Duration.ofSeconds(20)).until(() -> topics.followed().containsAll(real));
    assertThat(topics.counters().getOrDefault("deferred", 0L)).isPositive();
    assertThat(topics.counters()).doesNotContainKey("pending-full");
    assertThat(topics.deferredAdmissions()).isZero();
  }

  @Test
  void policy_shouldRefuseDeniedDatabases() throws Exception {
    final TopicPolicy deny = TopicPolicy.of(List.of(), List.of(DATABASE));
    assertThat(deny.permits(DATABASE)).isFalse();
    assertThat(deny.permits("/orbitdb/" + randomCid())).isTrue();
    final TopicPolicy allow = TopicPolicy.of(List.of(DATABASE.substring("/orbitdb/".length())),
        List.of());
    assertThat(allow.permits(DATABASE)).isTrue();
    assertThat(allow.permits("/orbitdb/" + randomCid())).isFalse();
  }

  private static String randomCid() {
    final byte[] bytes = new byte[16];
    new SecureRandom().nextBytes(bytes);
    return io.relaypinner.ipfs.dagcbor.DagCbor.cid(bytes)
        .toString(io.relaypinner.multiformats.Multibase.Base.BASE58BTC);
  }

  @Test
  void follow_shouldHappenOnlyOncePersisted_whenTheStorageRejectsOrFails() throws Exception {
    final PubSub relayPubSub = pubsub(host(false));
    final MemoryDatastore datastore = new MemoryDatastore();
    final OrbitDbTopics rejecting = new OrbitDbTopics(relayPubSub, datastore, task -> {
      throw new java.util.concurrent.RejectedExecutionException("storage queue full");
    }, TopicPolicy.OPEN, OrbitDbTopics.Limits.DEFAULT, Clock.systemUTC());
    final Recorder recorder = new Recorder();
    rejecting.start(recorder, recorder);

    assertThat(rejecting.followAdmitted(DATABASE).get(5, TimeUnit.SECONDS)).isFalse();
    assertThat(rejecting.followed()).isEmpty();
    assertThat(recorder.followed).isEmpty();
    assertThat(relayPubSub.topics()).doesNotContain(DATABASE);
    assertThat(rejecting.counters()).containsEntry("persist-rejected", 1L);

    final io.relaypinner.ipfs.datastore.Datastore broken =
        new io.relaypinner.ipfs.datastore.Datastore() {
          @Override
          public java.util.Optional<byte[]> get(final String key) {
            return datastore.get(key);
          }

          @Override
          public void put(final String key, final byte[] value) {
            throw new io.relaypinner.ipfs.datastore.DatastoreException("disk full", null);
          }

          @Override
          public boolean delete(final String key) {
            return datastore.delete(key);
          }

          @Override
          public List<Entry> scan(final String prefix) {
            return datastore.scan(prefix);
          }

          @Override
          public void close() {}
        };
    final OrbitDbTopics failing = new OrbitDbTopics(relayPubSub, broken, storage,
        TopicPolicy.OPEN, OrbitDbTopics.Limits.DEFAULT, Clock.systemUTC());
    failing.start(recorder, recorder);
    assertThat(failing.followAdmitted(DATABASE).get(5, TimeUnit.SECONDS)).isFalse();
    assertThat(failing.followed()).isEmpty();
    assertThat(recorder.followed).isEmpty();
    assertThat(failing.counters()).containsEntry("persist-failed", 1L);

    final OrbitDbTopics working = topics(relayPubSub, datastore, OrbitDbTopics.Limits.DEFAULT);
    working.start(recorder, recorder);
    assertThat(working.followAdmitted(DATABASE).get(5, TimeUnit.SECONDS)).isTrue();
    assertThat(datastore.get(OrbitDbTopics.KEY_PREFIX + DATABASE)).isPresent();
    assertThat(recorder.followed).containsExactly(DATABASE);
    assertThat(working.followed()).containsExactly(DATABASE);
  }
}
