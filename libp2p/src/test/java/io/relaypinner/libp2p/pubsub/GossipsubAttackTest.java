package io.relaypinner.libp2p.pubsub;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import io.relaypinner.libp2p.crypto.KeyType;
import io.relaypinner.libp2p.crypto.Keys;
import io.relaypinner.libp2p.crypto.PrivateKey;
import io.relaypinner.libp2p.pubsub.pb.PubsubProtos.ControlGraft;
import io.relaypinner.libp2p.pubsub.pb.PubsubProtos.ControlIDontWant;
import io.relaypinner.libp2p.pubsub.pb.PubsubProtos.ControlIHave;
import io.relaypinner.libp2p.pubsub.pb.PubsubProtos.ControlIWant;
import io.relaypinner.libp2p.pubsub.pb.PubsubProtos.ControlMessage;
import io.relaypinner.libp2p.pubsub.pb.PubsubProtos.ControlPrune;
import io.relaypinner.libp2p.pubsub.pb.PubsubProtos.Message;
import io.relaypinner.libp2p.pubsub.pb.PubsubProtos.RPC;
import io.relaypinner.multiformats.PeerId;
import io.relaypinner.testkit.MutableClock;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * One hostile peer against the gossipsub engine, each attack of issue 18: the engine's maps stay
 * bounded (asserted by size) and the costly step, the signature check, is reached only by
 * messages that passed every cheap check.
 */
class GossipsubAttackTest {
  private static final String TOPIC = "/orbitdb/zdpuAttack";
  private final SecureRandom keyRandom = new SecureRandom();
  private final Random random = new Random(7);
  private final MutableClock clock = new MutableClock(Instant.parse("2026-01-01T00:00:00Z"));
  private final List<ReceivedMessage> delivered = new ArrayList<>();
  private final List<GossipsubEngine.PendingValidation> offered = new ArrayList<>();
  private final List<RPC> sent = new ArrayList<>();
  private final PrivateKey identity = Keys.generate(KeyType.ED25519, keyRandom);
  private boolean async;
  private GossipsubEngine engine = newEngine(GossipsubConfig.DEFAULT);

  private GossipsubEngine newEngine(final GossipsubConfig config) {
    return newEngine(config, null);
  }

  private GossipsubEngine newEngine(final GossipsubConfig config,
      final io.relaypinner.common.budget.Scope sharedPool) {
    return new GossipsubEngine(identity, config, clock, new Random(42),
        new GossipsubEngine.Output() {
          @Override
          public void send(final PeerId peer, final RPC rpc) {
            sent.add(rpc);
          }

          @Override
          public void deliver(final ReceivedMessage message) {
            delivered.add(message);
          }

          @Override
          public boolean validateLater(final GossipsubEngine.PendingValidation pending) {
            if (!async) {
              return false;
            }
            offered.add(pending);
            return true;
          }
        }, sharedPool);
  }

  private PrivateKey key() {
    return Keys.generate(KeyType.ED25519, keyRandom);
  }

  private PeerId connect(final PrivateKey key, final String... topics) {
    final PeerId peer = key.publicKey().peerId();
    engine.outboundOpened(peer, true);
    final RPC.Builder rpc = RPC.newBuilder();
    for (final String topic : topics) {
      rpc.addSubscriptions(RPC.SubOpts.newBuilder().setSubscribe(true).setTopic(topic));
    }
    engine.handleRpc(peer, rpc.build());
    return peer;
  }

  private void heartbeat() {
    clock.advance(Duration.ofSeconds(1));
    engine.heartbeat();
  }

  private String randomTopic(final int length) {
    final StringBuilder sb = new StringBuilder(length);
    for (int i = 0; i < length; i++) {
      sb.append((char) ('a' + random.nextInt(26)));
    }
    return sb.toString();
  }

  private static RPC prune(final String topic, final long backoffSeconds) {
    return RPC.newBuilder().setControl(ControlMessage.newBuilder().addPrune(
        ControlPrune.newBuilder().setTopicID(topic).setBackoff(backoffSeconds))).build();
  }

  private static RPC publish(final Message message) {
    return RPC.newBuilder().addPublish(message).build();
  }

  @Test
  void handleRpc_reportsRpcsThatBreakABound_asTheSendersFault_andHonestOnesNot() {
    engine.subscribe(TOPIC);
    final PeerId peer = connect(key(), TOPIC);
    // Honest: a subscription, a GRAFT and a PRUNE for a topic we are in.
    assertThat(engine.handleRpc(peer, RPC.newBuilder().addSubscriptions(RPC.SubOpts.newBuilder()
        .setSubscribe(true).setTopic("/orbitdb/zdpuOther")).build())).isTrue();
    assertThat(engine.handleRpc(peer, RPC.newBuilder().setControl(ControlMessage.newBuilder()
        .addGraft(ControlGraft.newBuilder().setTopicID(TOPIC))).build())).isTrue();
    assertThat(engine.handleRpc(peer, prune(TOPIC, 60))).isTrue();
    // Each of these breaks a bound: a PRUNE for a topic we never joined, a backoff beyond the
    // cap, a topic name over 1 KiB, more subscriptions in one RPC than allowed.
    assertThat(engine.handleRpc(peer, prune("/orbitdb/zdpuNeverJoined", 60))).isFalse();
    assertThat(engine.handleRpc(peer, prune(TOPIC, Long.MAX_VALUE))).isFalse();
    assertThat(engine.handleRpc(peer, RPC.newBuilder().addSubscriptions(RPC.SubOpts.newBuilder()
        .setSubscribe(true).setTopic(randomTopic(2_000))).build())).isFalse();
    final RPC.Builder many = RPC.newBuilder();
    for (int i = 0; i <= GossipsubConfig.DEFAULT.maxSubscriptionsPerRpc(); i++) {
      many.addSubscriptions(RPC.SubOpts.newBuilder().setSubscribe(true).setTopic("t" + i));
    }
    assertThat(engine.handleRpc(peer, many.build())).isFalse();
    // The flag is per RPC: the next honest one is not blamed.
    assertThat(engine.handleRpc(peer, RPC.newBuilder().build())).isTrue();
  }

  @Test
  void pruneFlood_withRandomTopicsAndHugeBackoffs_keepsNoBackoff() {
    engine.subscribe(TOPIC);
    final PeerId attacker = connect(key(), TOPIC);
    for (int i = 0; i < 20_000; i++) {
      engine.handleRpc(attacker, prune(randomTopic(64), i % 2 == 0 ? Long.MAX_VALUE : -1L));
    }
    assertThat(engine.backoffEntries()).isZero();
    assertThat(engine.counter("prune-unknown-topic")).isEqualTo(20_000);
  }

  @Test
  void prune_withHugeBackoff_isClampedToMaxPruneBackoff() {
    engine.subscribe(TOPIC);
    final PeerId peer = connect(key(), TOPIC);
    heartbeat();
    assertThat(engine.meshPeers(TOPIC)).containsExactly(peer);
    // 2^64 - 1 seconds on the wire: a long overflow if multiplied unclamped.
    engine.handleRpc(peer, prune(TOPIC, -1L));
    assertThat(engine.counter("prune-backoff-clamped")).isEqualTo(1);
    assertThat(engine.inBackoff(peer, TOPIC)).isTrue();
    clock.advance(GossipsubConfig.DEFAULT.maxPruneBackoff());
    heartbeat();
    heartbeat();
    assertThat(engine.inBackoff(peer, TOPIC)).isFalse();
    assertThat(engine.meshPeers(TOPIC)).containsExactly(peer);
  }

  @Test
  void prunes_ofManyJoinedTopics_keepAtMostMaxBackoffsPerPeer_andNoneAfterDisconnect() {
    engine = newEngine(GossipsubConfig.builder().maxBackoffsPerPeer(10).build());
    final List<String> topics = new ArrayList<>();
    for (int i = 0; i < 50; i++) {
      topics.add(TOPIC + i);
    }
    final PeerId peer = connect(key(), topics.toArray(String[]::new));
    topics.forEach(engine::subscribe);
    for (final String topic : topics) {
      assertThat(engine.meshPeers(topic)).containsExactly(peer);
      engine.handleRpc(peer, prune(topic, 3_600));
    }
    assertThat(engine.backoffEntries()).isEqualTo(10);
    assertThat(engine.counter("backoff-evicted")).isEqualTo(40);
    engine.removePeer(peer);
    assertThat(engine.backoffEntries()).isZero();
  }

  @Test
  void longTopics_areNeitherTrackedNorAccepted() {
    engine.subscribe(TOPIC);
    final String[] topics = new String[100];
    for (int i = 0; i < topics.length; i++) {
      topics[i] = randomTopic(2_000);
    }
    final PrivateKey key = key();
    final PeerId attacker = connect(key, topics);
    assertThat(engine.knownTopics()).isZero();
    assertThat(engine.topicsOf(attacker)).isEmpty();
    assertThat(engine.counter("drop-topic-too-long")).isEqualTo(100);
    engine.handleRpc(attacker, publish(StrictSign.sign(key, "t".repeat(1025), new byte[1], 1)));
    assertThat(engine.counter("drop-topic-too-long")).isEqualTo(101);
    assertThat(engine.counter("signature-checked")).isZero();
    // 1 KiB exactly is still a topic.
    connect(key(), "t".repeat(1024));
    assertThat(engine.knownTopics()).isEqualTo(1);
  }

  @Test
  void duplicatesAndUnsubscribedTopics_neverReachTheSignatureCheck() {
    engine.subscribe(TOPIC);
    final PrivateKey key = key();
    final PeerId attacker = connect(key, TOPIC);
    final Message message = StrictSign.sign(key, TOPIC, "hello".getBytes(StandardCharsets.UTF_8),
        1);
    for (int i = 0; i < 100; i++) {
      engine.handleRpc(attacker, publish(message));
    }
    for (int i = 0; i < 100; i++) {
      engine.handleRpc(attacker, publish(StrictSign.sign(key, "/not/ours", new byte[] {1},
          1_000 + i)));
    }
    assertThat(delivered).hasSize(1);
    assertThat(engine.counter("signature-checked")).isEqualTo(1);
    assertThat(engine.counter("drop-duplicate")).isEqualTo(99);
    assertThat(engine.counter("drop-not-subscribed")).isEqualTo(100);
  }

  @Test
  void ourOwnMessageEchoed_isDroppedWithoutASignatureCheck() {
    engine.subscribe(TOPIC);
    final PeerId peer = connect(key(), TOPIC);
    final Message mine = StrictSign.sign(identity, TOPIC, new byte[] {1}, 5);
    engine.handleRpc(peer, publish(mine));
    assertThat(engine.counter("drop-self-origin")).isEqualTo(1);
    assertThat(engine.counter("signature-checked")).isZero();
  }

  @Test
  void asyncValidation_dropsCopiesInFlight_boundsTheBacklog_andDeliversOnCompletion() {
    async = true;
    engine = newEngine(GossipsubConfig.builder().maxPendingValidations(4).build());
    engine.subscribe(TOPIC);
    final PrivateKey key = key();
    final PeerId peer = connect(key, TOPIC);
    final List<Message> messages = new ArrayList<>();
    for (int i = 0; i < 6; i++) {
      messages.add(StrictSign.sign(key, TOPIC, new byte[] {(byte) i}, i));
      engine.handleRpc(peer, publish(messages.get(i)));
      engine.handleRpc(peer, publish(messages.get(i)));
    }
    assertThat(offered).hasSize(4);
    assertThat(engine.pendingValidations()).isEqualTo(4);
    assertThat(engine.counter("drop-duplicate")).isEqualTo(4);
    assertThat(engine.counter("drop-validation-backlog")).isEqualTo(4);
    assertThat(delivered).isEmpty();
    for (final GossipsubEngine.PendingValidation pending : offered.subList(0, 3)) {
      engine.completeValidation(pending, StrictSign.validate(pending.message()));
    }
    engine.abandonValidation(offered.get(3));
    assertThat(delivered).hasSize(3);
    assertThat(engine.pendingValidations()).isZero();
    assertThat(engine.counter("drop-validation-abandoned")).isEqualTo(1);
    // A forged copy in flight fails alone; the seen-cache is not poisoned by it.
    offered.clear();
    final Message real = messages.get(5);
    engine.handleRpc(peer, publish(real.toBuilder().setData(ByteString.copyFromUtf8("x"))
        .build()));
    engine.completeValidation(offered.get(0), StrictSign.validate(offered.get(0).message()));
    assertThat(engine.counter("drop-invalid-bad-signature")).isEqualTo(1);
    engine.handleRpc(peer, publish(real));
    engine.completeValidation(offered.get(1), StrictSign.validate(offered.get(1).message()));
    assertThat(delivered).hasSize(4);
  }

  @Test
  void subscriptionChurn_marksOnlyTheTopicsItTouched() {
    final PeerId quiet = connect(key(), "a", "b", "c");
    engine.takeChangedTopics();
    final PeerId churner = connect(key());
    engine.takeChangedTopics();
    for (int i = 0; i < 100; i++) {
      engine.handleRpc(churner, RPC.newBuilder().addSubscriptions(RPC.SubOpts.newBuilder()
          .setSubscribe(i % 2 == 0).setTopic("x")).build());
      assertThat(engine.takeChangedTopics()).containsExactly("x");
    }
    assertThat(engine.peers("a")).containsExactly(quiet);
  }

  private static RPC control(final ControlMessage.Builder control) {
    return RPC.newBuilder().setControl(control).build();
  }

  private ByteString randomId(final int length) {
    final byte[] id = new byte[length];
    random.nextBytes(id);
    return ByteString.copyFrom(id);
  }

  @Test
  void messageFlood_beyondThePeersRate_isDroppedBeforeTheSignatureCheck_andSeenExpires() {
    engine = newEngine(GossipsubConfig.builder().maxMessagesPerPeerPerHeartbeat(50)
        .seenTtl(Duration.ofSeconds(10)).build());
    engine.subscribe(TOPIC);
    final PrivateKey key = key();
    final PeerId attacker = connect(key, TOPIC);
    final List<Message> flood = new ArrayList<>();
    for (int i = 0; i < 400; i++) {
      flood.add(StrictSign.sign(key, TOPIC, new byte[] {(byte) i}, i));
    }
    for (int round = 0; round < 4; round++) {
      for (final Message message : flood.subList(round * 100, round * 100 + 100)) {
        engine.handleRpc(attacker, publish(message));
      }
      heartbeat();
    }
    // 50 a heartbeat reach the signature check; the other 200 cost a counter each.
    assertThat(engine.counter("signature-checked")).isEqualTo(200);
    assertThat(engine.counter("drop-rate-limited")).isEqualTo(200);
    assertThat(engine.seenEntries()).isEqualTo(200);
    clock.advance(Duration.ofSeconds(10));
    heartbeat();
    assertThat(engine.seenEntries()).isZero();
  }

  @Test
  void subscriptionFlood_keepsAtMostMaxTopicsPerPeer_andNothingAfterDisconnect() {
    engine = newEngine(GossipsubConfig.builder().maxTopicsPerPeer(100)
        .maxSubscriptionsPerRpc(200).build());
    final PeerId attacker = connect(key());
    for (int rpc = 0; rpc < 50; rpc++) {
      final RPC.Builder subs = RPC.newBuilder();
      for (int i = 0; i < 200; i++) {
        subs.addSubscriptions(RPC.SubOpts.newBuilder().setSubscribe(true)
            .setTopic(randomTopic(100)));
      }
      engine.handleRpc(attacker, subs.build());
    }
    final RPC.Builder tooMany = RPC.newBuilder();
    for (int i = 0; i < 201; i++) {
      tooMany.addSubscriptions(RPC.SubOpts.newBuilder().setSubscribe(true).setTopic("x" + i));
    }
    engine.handleRpc(attacker, tooMany.build());
    assertThat(engine.topicsOf(attacker)).hasSize(100);
    assertThat(engine.knownTopics()).isEqualTo(100);
    assertThat(engine.counter("drop-topics-over-limit")).isEqualTo(50 * 200 - 100);
    assertThat(engine.counter("drop-subscriptions-over-limit")).isEqualTo(1);
    engine.removePeer(attacker);
    assertThat(engine.knownTopics()).isZero();
    assertThat(engine.peerCount()).isZero();
  }

  @Test
  void outboundOpened_withMoreSubscriptionsThanOneRpcMayCarry_splitsThem_andAnotherEngineTakesAll() {
    for (int i = 0; i < 1_001; i++) {
      engine.subscribe("/orbitdb/zdpuFollowed" + i);
    }
    sent.clear();
    final PeerId other = key().publicKey().peerId();
    engine.outboundOpened(other, true);

    assertThat(sent).hasSize(2);
    assertThat(sent).allSatisfy(rpc -> assertThat(rpc.getSubscriptionsCount())
        .isLessThanOrEqualTo(GossipsubConfig.MAX_SUBSCRIPTIONS_PER_RPC));
    // The other side, a relay-pinner with the defaults: every subscription, no fault.
    final GossipsubEngine receiver = newEngine(GossipsubConfig.DEFAULT);
    final PeerId us = identity.publicKey().peerId();
    for (final RPC rpc : List.copyOf(sent)) {
      assertThat(receiver.handleRpc(us, rpc)).isTrue();
    }
    assertThat(receiver.topicsOf(us)).hasSize(1_001);
    assertThat(receiver.counters()).noneSatisfy((name, n) ->
        assertThat(GossipsubEngine.FAULTS).contains(name));
  }

  @Test
  void subscriptionsBeyondTheGuaranteedOnes_comeFromTheSharedPool_andFullPoolIsNoFault() {
    engine = newEngine(GossipsubConfig.builder().maxTopicsPerPeer(40)
        .guaranteedTopicsPerPeer(10).maxSharedTopics(30).build());
    final PeerId relayA = connect(key());
    final PeerId relayB = connect(key());
    final PeerId browser = connect(key());
    assertThat(engine.handleRpc(relayA, subscriptions("a", 40))).isTrue();
    // B gets its 10 guaranteed and what is left of the pool (0): the node is full, not B's fault.
    assertThat(engine.handleRpc(relayB, subscriptions("b", 40))).isTrue();
    assertThat(engine.handleRpc(browser, subscriptions("c", 10))).isTrue();
    assertThat(engine.topicsOf(relayA)).hasSize(40);
    assertThat(engine.topicsOf(relayB)).hasSize(10);
    assertThat(engine.topicsOf(browser)).hasSize(10);
    assertThat(engine.sharedTopics()).isEqualTo(30);
    assertThat(engine.counter("drop-topics-shared-full")).isEqualTo(30);
    // A unsubscribes 5 and leaves: the pool is free again; over maxTopicsPerPeer stays a fault.
    final RPC.Builder unsub = RPC.newBuilder();
    for (int i = 0; i < 5; i++) {
      unsub.addSubscriptions(RPC.SubOpts.newBuilder().setSubscribe(false).setTopic("a" + i));
    }
    engine.handleRpc(relayA, unsub.build());
    assertThat(engine.sharedTopics()).isEqualTo(25);
    engine.removePeer(relayA);
    assertThat(engine.sharedTopics()).isZero();
    assertThat(engine.handleRpc(relayB, subscriptions("b", 40))).isTrue();
    assertThat(engine.handleRpc(relayB, subscriptions("d", 1))).isFalse();
    assertThat(engine.topicsOf(relayB)).hasSize(40);
    assertThat(engine.sharedTopics()).isEqualTo(30);
  }

  /**
   * The shared pool also takes its topics from the node budget's {@code gossipsub_topics} scope
   * (one work slot each): a scope that holds fewer than {@code maxSharedTopics} refuses the rest,
   * counted by the budget and still no fault; unsubscribing and leaving give them back.
   */
  @Test
  void sharedTopics_shouldBeTakenFromTheBudgetsPoolScope_andGivenBack() {
    final java.util.List<String> hits = new java.util.ArrayList<>();
    final io.relaypinner.common.budget.Scope pool = io.relaypinner.common.budget.Scope.root(
        "gossipsub_topics", io.relaypinner.common.budget.Limits.NONE.with(
            io.relaypinner.common.budget.Resource.WORK, 20),
        (scope, resource) -> hits.add(scope.kind() + "/" + resource.label()));
    engine = newEngine(GossipsubConfig.builder().maxTopicsPerPeer(40)
        .guaranteedTopicsPerPeer(10).maxSharedTopics(30).build(), pool);
    final PeerId relayA = connect(key());
    assertThat(engine.handleRpc(relayA, subscriptions("a", 40))).isTrue();
    assertThat(engine.topicsOf(relayA)).hasSize(30);
    assertThat(engine.sharedTopics()).isEqualTo(20);
    assertThat(pool.used(io.relaypinner.common.budget.Resource.WORK)).isEqualTo(20);
    assertThat(hits).hasSize(10).containsOnly("gossipsub_topics/work");
    assertThat(engine.counter("drop-topics-shared-full")).isEqualTo(10);
    final RPC.Builder unsub = RPC.newBuilder();
    for (int i = 0; i < 5; i++) {
      unsub.addSubscriptions(RPC.SubOpts.newBuilder().setSubscribe(false).setTopic("a" + i));
    }
    engine.handleRpc(relayA, unsub.build());
    assertThat(pool.used(io.relaypinner.common.budget.Resource.WORK)).isEqualTo(15);
    engine.removePeer(relayA);
    assertThat(pool.used(io.relaypinner.common.budget.Resource.WORK)).isZero();
    assertThat(engine.sharedTopics()).isZero();
  }

  private static RPC subscriptions(final String prefix, final int count) {
    final RPC.Builder rpc = RPC.newBuilder();
    for (int i = 0; i < count; i++) {
      rpc.addSubscriptions(RPC.SubOpts.newBuilder().setSubscribe(true).setTopic(prefix + i));
    }
    return rpc.build();
  }

  @Test
  void idontwantFlood_keepsAtMostMaxIDontWant_ignoresLongIds_andExpires() {
    engine = newEngine(GossipsubConfig.builder().maxIDontWant(100).build());
    final PeerId attacker = connect(key(), TOPIC);
    // Long ids first: a peer could otherwise park up to its RPC size per id until expiry.
    final ControlIDontWant.Builder longIds = ControlIDontWant.newBuilder();
    for (int i = 0; i < 50; i++) {
      longIds.addMessageIDs(randomId(64 * 1024));
    }
    engine.handleRpc(attacker, control(ControlMessage.newBuilder().addIdontwant(longIds)));
    assertThat(engine.dontSendEntries()).isZero();
    assertThat(engine.counter("drop-message-id-too-long")).isEqualTo(50);
    for (int rpc = 0; rpc < 20; rpc++) {
      final ControlIDontWant.Builder ids = ControlIDontWant.newBuilder();
      for (int i = 0; i < 100; i++) {
        ids.addMessageIDs(randomId(48));
      }
      engine.handleRpc(attacker, control(ControlMessage.newBuilder().addIdontwant(ids)));
    }
    assertThat(engine.dontSendEntries()).isEqualTo(100);
    assertThat(engine.counter("drop-idontwant-over-limit")).isEqualTo(19);
    for (int i = 0; i < GossipsubConfig.DEFAULT.mcacheLength(); i++) {
      heartbeat();
    }
    assertThat(engine.dontSendEntries()).isZero();
  }

  @Test
  void ihaveFlood_asksForAtMostMaxIHaveLengthIds_readsAtMostMaxIHaveMessages_perHeartbeat() {
    engine = newEngine(GossipsubConfig.builder().maxIHaveLength(500).maxIHaveMessages(5)
        .build());
    engine.subscribe(TOPIC);
    final PeerId attacker = connect(key(), TOPIC);
    sent.clear();
    for (int rpc = 0; rpc < 20; rpc++) {
      final ControlIHave.Builder ihave = ControlIHave.newBuilder().setTopicID(TOPIC);
      for (int i = 0; i < 1_000; i++) {
        ihave.addMessageIDs(i == 0 ? randomId(4_096) : randomId(48));
      }
      engine.handleRpc(attacker, control(ControlMessage.newBuilder().addIhave(ihave)));
    }
    final int asked = sent.stream().flatMap(r -> r.getControl().getIwantList().stream())
        .mapToInt(ControlIWant::getMessageIDsCount).sum();
    assertThat(asked).isEqualTo(500);
    assertThat(sent.stream().flatMap(r -> r.getControl().getIwantList().stream())
        .flatMap(w -> w.getMessageIDsList().stream())).allSatisfy(id ->
            assertThat(id.size()).isEqualTo(48));
    assertThat(engine.counter("drop-ihave-over-limit")).isEqualTo(15);
    assertThat(engine.counter("drop-message-id-too-long")).isEqualTo(1);
    // An IWANT for ids we never had, long or not, sends nothing and keeps nothing.
    sent.clear();
    engine.handleRpc(attacker, control(ControlMessage.newBuilder().addIwant(
        ControlIWant.newBuilder().addMessageIDs(randomId(48)).addMessageIDs(randomId(100_000)))));
    assertThat(sent).isEmpty();
    assertThat(engine.counter("iwant-unknown")).isEqualTo(1);
    assertThat(engine.counter("drop-message-id-too-long")).isEqualTo(2);
  }

  @Test
  void graftFlood_forTopicsWeNeverJoined_keepsNothing() {
    engine.subscribe(TOPIC);
    final PeerId attacker = connect(key(), TOPIC);
    heartbeat();
    for (int rpc = 0; rpc < 100; rpc++) {
      final ControlMessage.Builder grafts = ControlMessage.newBuilder();
      for (int i = 0; i < 100; i++) {
        grafts.addGraft(ControlGraft.newBuilder().setTopicID(randomTopic(64)));
      }
      engine.handleRpc(attacker, control(grafts));
    }
    assertThat(engine.counter("graft-unknown-topic")).isEqualTo(10_000);
    assertThat(engine.knownTopics()).isEqualTo(1);
    assertThat(engine.backoffEntries()).isZero();
    assertThat(engine.meshPeers(TOPIC)).containsExactly(attacker);
  }

  @Test
  void validMessagesFromManyPeers_keepTheSeenCacheWithinMaxSeenEntries() {
    engine = newEngine(GossipsubConfig.builder().maxSeenEntries(100).build());
    engine.subscribe(TOPIC);
    for (int p = 0; p < 5; p++) {
      final PrivateKey key = key();
      final PeerId peer = connect(key, TOPIC);
      for (int i = 0; i < 60; i++) {
        engine.handleRpc(peer, publish(StrictSign.sign(key, TOPIC, new byte[] {(byte) i}, i)));
      }
    }
    assertThat(delivered).hasSize(300);
    assertThat(engine.seenEntries()).isEqualTo(100);
    assertThat(engine.counter("seen-evicted")).isEqualTo(200);
  }
}
