package io.relaypinner.libp2p.pubsub;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

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
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Set;
import java.util.Map;
import java.util.Random;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class GossipsubEngineTest {
  private static final String TOPIC = "/orbitdb/zdpuTest";
  private final SecureRandom keyRandom = new SecureRandom();
  private final MutableClock clock = new MutableClock(Instant.parse("2026-01-01T00:00:00Z"));
  private final Map<PeerId, List<RPC>> sent = new LinkedHashMap<>();
  private final List<ReceivedMessage> delivered = new ArrayList<>();
  private final List<String> subscriptionEvents = new ArrayList<>();
  private final Map<PeerId, PrivateKey> peerKeys = new LinkedHashMap<>();
  private PrivateKey identity;
  private GossipsubEngine engine;
  private GossipsubEngine.Output extra;

  @BeforeEach
  void setUp() {
    identity = Keys.generate(KeyType.ED25519, keyRandom);
    engine = newEngine(GossipsubConfig.DEFAULT);
  }

  private GossipsubEngine newEngine(final GossipsubConfig config) {
    return new GossipsubEngine(identity, config, clock, new Random(42),
        new GossipsubEngine.Output() {
          @Override
          public void send(final PeerId peer, final RPC rpc) {
            sent.computeIfAbsent(peer, p -> new ArrayList<>()).add(rpc);
          }

          @Override
          public void deliver(final ReceivedMessage message) {
            delivered.add(message);
          }

          @Override
          public void subscriptionChanged(final PeerId peer, final String topic,
              final boolean subscribed) {
            subscriptionEvents.add(peer + " " + topic + " " + subscribed);
            if (extra != null) {
              extra.subscriptionChanged(peer, topic, subscribed);
            }
          }
        });
  }

  /** Connects {@code count} peers, each subscribed to {@code topic}. */
  private List<PeerId> peers(final int count, final String topic) {
    final List<PeerId> result = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      final PrivateKey key = Keys.generate(KeyType.ED25519, keyRandom);
      final PeerId peer = key.publicKey().peerId();
      peerKeys.put(peer, key);
      engine.outboundOpened(peer, true);
      engine.handleRpc(peer, RPC.newBuilder().addSubscriptions(RPC.SubOpts.newBuilder()
          .setSubscribe(true).setTopic(topic)).build());
      result.add(peer);
    }
    sent.clear();
    return result;
  }

  private static RPC control(final ControlMessage.Builder control) {
    return RPC.newBuilder().setControl(control).build();
  }

  private static RPC publish(final Message message) {
    return RPC.newBuilder().addPublish(message).build();
  }

  private List<ControlGraft> graftsTo(final PeerId peer) {
    return sent.getOrDefault(peer, List.of()).stream()
        .flatMap(rpc -> rpc.getControl().getGraftList().stream()).toList();
  }

  private List<ControlPrune> prunesTo(final PeerId peer) {
    return sent.getOrDefault(peer, List.of()).stream()
        .flatMap(rpc -> rpc.getControl().getPruneList().stream()).toList();
  }

  private List<Message> messagesTo(final PeerId peer) {
    return sent.getOrDefault(peer, List.of()).stream()
        .flatMap(rpc -> rpc.getPublishList().stream()).toList();
  }

  private List<ControlIHave> ihavesTo(final PeerId peer) {
    return sent.getOrDefault(peer, List.of()).stream()
        .flatMap(rpc -> rpc.getControl().getIhaveList().stream()).toList();
  }

  private Message signedBy(final PeerId author, final String data, final long seqno) {
    return StrictSign.sign(peerKeys.get(author), TOPIC, data.getBytes(StandardCharsets.UTF_8),
        seqno);
  }

  private void heartbeats(final int count) {
    for (int i = 0; i < count; i++) {
      clock.advance(Duration.ofSeconds(1));
      engine.heartbeat();
    }
  }

  @Test
  void outboundOpened_shouldSendAllSubscriptionsFirst_whenSubscribed() {
    engine.subscribe("a");
    engine.subscribe("b");
    final PeerId peer = Keys.generate(KeyType.ED25519, keyRandom).publicKey().peerId();
    engine.outboundOpened(peer, true);
    assertThat(sent.get(peer)).hasSize(1);
    assertThat(sent.get(peer).get(0).getSubscriptionsList())
        .extracting(RPC.SubOpts::getTopic).containsExactly("a", "b");
  }

  @Test
  void subscribe_shouldGraftDPeers_whenMoreTopicPeersKnown() {
    final List<PeerId> all = peers(10, TOPIC);
    engine.subscribe(TOPIC);
    assertThat(engine.meshPeers(TOPIC)).hasSize(6);
    assertThat(all.stream().filter(p -> !graftsTo(p).isEmpty()).count()).isEqualTo(6);
    // Every connected peer hears about the subscription.
    assertThat(all).allSatisfy(p -> assertThat(sent.get(p).get(0).getSubscriptions(0)
        .getSubscribe()).isTrue());
  }

  @Test
  void heartbeat_shouldGraftUpToD_whenMeshBelowDLo() {
    engine.subscribe(TOPIC);
    final List<PeerId> all = peers(8, TOPIC);
    assertThat(engine.meshPeers(TOPIC)).hasSize(6);
    // Four mesh peers leave it (PRUNE with a backoff): 2 left, below D_lo.
    final List<PeerId> leaving = all.stream().filter(engine.meshPeers(TOPIC)::contains)
        .limit(4).toList();
    for (final PeerId peer : leaving) {
      engine.handleRpc(peer, control(ControlMessage.newBuilder()
          .addPrune(ControlPrune.newBuilder().setTopicID(TOPIC).setBackoff(60))));
    }
    assertThat(engine.meshPeers(TOPIC)).hasSize(2);
    final long before = engine.counter("graft-sent");
    heartbeats(1);
    // Only the two peers never in the mesh may be grafted: the others asked for a backoff.
    assertThat(engine.meshPeers(TOPIC)).hasSize(4).doesNotContainAnyElementsOf(leaving);
    assertThat(engine.counter("graft-sent") - before).isEqualTo(2);
  }

  @Test
  void subscription_shouldGraftThePeerAtOnce_whenMeshBelowD() {
    engine = newEngine(GossipsubConfig.builder().floodPublish(false).build());
    engine.subscribe(TOPIC);
    final PeerId writer = peers(1, TOPIC).get(0);
    assertThat(engine.meshPeers(TOPIC)).containsExactly(writer);
    final PeerId reader = peers(1, TOPIC).get(0);
    // No heartbeat ran: the reader is in the mesh and got our GRAFT with its subscription.
    assertThat(engine.meshPeers(TOPIC)).containsExactlyInAnyOrder(writer, reader);
    assertThat(engine.counter("graft-on-subscribe")).isEqualTo(2);
    sent.clear();
    engine.handleRpc(reader, RPC.newBuilder().addSubscriptions(RPC.SubOpts.newBuilder()
        .setSubscribe(true).setTopic(TOPIC)).build());
    assertThat(graftsTo(reader)).as("a repeated SUBSCRIBE grafts nothing").isEmpty();
    // The writer's first message, right after the reader subscribed, is forwarded to it.
    engine.handleRpc(writer, publish(signedBy(writer, "first", 1)));
    assertThat(messagesTo(reader)).extracting(m -> m.getData().toStringUtf8())
        .containsExactly("first");
    // So is ours without flood publishing: it goes to the mesh.
    engine.publish(TOPIC, "ours".getBytes(StandardCharsets.UTF_8));
    assertThat(messagesTo(reader)).hasSize(2);
  }

  @Test
  void subscription_shouldGraftWhenOurStreamOpens_whenItCameBeforeTheStream() {
    engine.subscribe(TOPIC);
    final PeerId peer = Keys.generate(KeyType.ED25519, keyRandom).publicKey().peerId();
    engine.handleRpc(peer, RPC.newBuilder().addSubscriptions(RPC.SubOpts.newBuilder()
        .setSubscribe(true).setTopic(TOPIC)).build());
    assertThat(engine.meshPeers(TOPIC)).as("nothing can be sent to it yet").isEmpty();
    engine.outboundOpened(peer, true);
    assertThat(engine.meshPeers(TOPIC)).containsExactly(peer);
    assertThat(graftsTo(peer)).hasSize(1);
  }

  @Test
  void subscription_shouldHonourTheControlOfItsOwnRpc_beforeGrafting() {
    engine.subscribe(TOPIC);
    final PeerId grafter = Keys.generate(KeyType.ED25519, keyRandom).publicKey().peerId();
    engine.outboundOpened(grafter, true);
    sent.clear();
    // SUBSCRIBE with a GRAFT (a JS peer joining): in the mesh, no GRAFT back.
    engine.handleRpc(grafter, RPC.newBuilder().addSubscriptions(RPC.SubOpts.newBuilder()
        .setSubscribe(true).setTopic(TOPIC)).setControl(ControlMessage.newBuilder()
        .addGraft(ControlGraft.newBuilder().setTopicID(TOPIC))).build());
    assertThat(engine.meshPeers(TOPIC)).containsExactly(grafter);
    assertThat(graftsTo(grafter)).isEmpty();
    // SUBSCRIBE with a PRUNE: its backoff holds, no GRAFT it would count against us.
    final PeerId pruner = Keys.generate(KeyType.ED25519, keyRandom).publicKey().peerId();
    engine.outboundOpened(pruner, true);
    sent.clear();
    engine.handleRpc(pruner, RPC.newBuilder().addSubscriptions(RPC.SubOpts.newBuilder()
        .setSubscribe(true).setTopic(TOPIC)).setControl(ControlMessage.newBuilder()
        .addPrune(ControlPrune.newBuilder().setTopicID(TOPIC).setBackoff(60))).build());
    assertThat(engine.meshPeers(TOPIC)).containsExactly(grafter);
    assertThat(graftsTo(pruner)).isEmpty();
    assertThat(engine.inBackoff(pruner, TOPIC)).isTrue();
  }

  @Test
  void subscription_shouldNotGraft_whenMeshHasDPeersOrPeerInBackoffOrTopicNotJoined() {
    engine.subscribe(TOPIC);
    final List<PeerId> first = peers(6, TOPIC);
    assertThat(engine.meshPeers(TOPIC)).containsExactlyInAnyOrderElementsOf(first);
    final PeerId seventh = peers(1, TOPIC).get(0);
    assertThat(engine.meshPeers(TOPIC)).doesNotContain(seventh);
    assertThat(graftsTo(seventh)).isEmpty();
    // A mesh peer that PRUNEd us, then unsubscribes and subscribes again: still in backoff.
    final PeerId pruner = first.get(0);
    engine.handleRpc(pruner, control(ControlMessage.newBuilder()
        .addPrune(ControlPrune.newBuilder().setTopicID(TOPIC).setBackoff(60))));
    engine.handleRpc(pruner, RPC.newBuilder().addSubscriptions(RPC.SubOpts.newBuilder()
        .setSubscribe(false).setTopic(TOPIC)).build());
    sent.clear();
    engine.handleRpc(pruner, RPC.newBuilder().addSubscriptions(RPC.SubOpts.newBuilder()
        .setSubscribe(true).setTopic(TOPIC)).build());
    assertThat(engine.meshPeers(TOPIC)).hasSize(5).doesNotContain(pruner);
    assertThat(graftsTo(pruner)).isEmpty();
    // A topic we did not join: no mesh, no GRAFT.
    final PeerId other = peers(1, "other").get(0);
    assertThat(graftsTo(other)).isEmpty();
    assertThat(engine.meshPeers("other")).isEmpty();
  }

  @Test
  void heartbeat_shouldPruneToD_whenMeshAboveDHi() {
    engine.subscribe(TOPIC);
    final List<PeerId> all = peers(15, TOPIC);
    for (final PeerId peer : all) {
      engine.handleRpc(peer, control(ControlMessage.newBuilder()
          .addGraft(ControlGraft.newBuilder().setTopicID(TOPIC))));
    }
    assertThat(engine.meshPeers(TOPIC)).hasSize(15);
    sent.clear();
    heartbeats(1);
    assertThat(engine.meshPeers(TOPIC)).hasSize(6);
    final List<PeerId> pruned = all.stream().filter(p -> !prunesTo(p).isEmpty()).toList();
    assertThat(pruned).hasSize(9);
    assertThat(prunesTo(pruned.get(0)).get(0).getBackoff()).isEqualTo(60);
    assertThat(pruned).allSatisfy(p -> assertThat(engine.inBackoff(p, TOPIC)).isTrue());
  }

  @Test
  void graft_shouldBeAnsweredWithPrune_whenPeerInBackoff() {
    engine.subscribe(TOPIC);
    final PeerId peer = peers(1, TOPIC).get(0);
    heartbeats(1);
    assertThat(engine.meshPeers(TOPIC)).containsExactly(peer);
    engine.handleRpc(peer, control(ControlMessage.newBuilder()
        .addPrune(ControlPrune.newBuilder().setTopicID(TOPIC).setBackoff(30))));
    assertThat(engine.meshPeers(TOPIC)).isEmpty();
    sent.clear();
    engine.handleRpc(peer, control(ControlMessage.newBuilder()
        .addGraft(ControlGraft.newBuilder().setTopicID(TOPIC))));
    assertThat(engine.meshPeers(TOPIC)).isEmpty();
    assertThat(prunesTo(peer)).hasSize(1);
    assertThat(engine.counter("graft-during-backoff")).isEqualTo(1);
  }

  @Test
  void heartbeat_shouldNotGraft_whileBackoffFromPeersPruneRuns() {
    engine.subscribe(TOPIC);
    final PeerId peer = peers(1, TOPIC).get(0);
    heartbeats(1);
    engine.handleRpc(peer, control(ControlMessage.newBuilder()
        .addPrune(ControlPrune.newBuilder().setTopicID(TOPIC).setBackoff(30))));
    sent.clear();
    heartbeats(30);
    assertThat(graftsTo(peer)).isEmpty();
    heartbeats(2);
    assertThat(graftsTo(peer)).hasSize(1);
    assertThat(engine.meshPeers(TOPIC)).containsExactly(peer);
  }

  @Test
  void handleMessage_shouldDeliverAndForwardOnce_whenReceivedTwice() {
    engine.subscribe(TOPIC);
    final List<PeerId> all = peers(3, TOPIC);
    heartbeats(1);
    final Message message = signedBy(all.get(0), "hello", 7);
    engine.handleRpc(all.get(0), publish(message));
    engine.handleRpc(all.get(1), publish(message));
    assertThat(delivered).hasSize(1);
    assertThat(delivered.get(0).author()).isEqualTo(all.get(0));
    assertThat(new String(delivered.get(0).data(), StandardCharsets.UTF_8)).isEqualTo("hello");
    assertThat(engine.counter("drop-duplicate")).isEqualTo(1);
    // Forwarded byte-identical to the mesh, never back to the author.
    assertThat(messagesTo(all.get(0))).isEmpty();
    assertThat(messagesTo(all.get(1))).containsExactly(message);
    assertThat(messagesTo(all.get(2))).containsExactly(message);
  }

  @Test
  void messageId_shouldBeKeyProtobufThenSeqno_asJsMsgIdFnStrictSign() {
    engine.subscribe(TOPIC);
    final PeerId author = peers(1, TOPIC).get(0);
    engine.handleRpc(author, publish(signedBy(author, "x", 0x0102030405060708L)));
    final byte[] id = delivered.get(0).id().bytes();
    final byte[] from = author.bytes();
    // Ed25519: the identity multihash minus its 2-byte header is the key protobuf.
    assertThat(Arrays.copyOfRange(id, 0, id.length - 8))
        .isEqualTo(Arrays.copyOfRange(from, 2, from.length));
    assertThat(Arrays.copyOfRange(id, id.length - 8, id.length))
        .isEqualTo(new byte[] {1, 2, 3, 4, 5, 6, 7, 8});
  }

  @Test
  void handleMessage_shouldDropAndCount_whenSignatureInvalid() {
    engine.subscribe(TOPIC);
    final PeerId author = peers(1, TOPIC).get(0);
    final Message good = signedBy(author, "data", 1);
    engine.handleRpc(author, publish(good.toBuilder()
        .setData(ByteString.copyFromUtf8("forged")).build()));
    engine.handleRpc(author, publish(good.toBuilder().clearSignature().build()));
    engine.handleRpc(author, publish(good.toBuilder()
        .setSeqno(ByteString.copyFrom(new byte[4])).build()));
    engine.handleRpc(author, publish(good.toBuilder().clearFrom().build()));
    final PrivateKey other = Keys.generate(KeyType.ED25519, keyRandom);
    engine.handleRpc(author, publish(good.toBuilder()
        .setKey(ByteString.copyFrom(other.publicKey().marshal())).build()));
    assertThat(delivered).isEmpty();
    assertThat(engine.counter("drop-invalid-bad-signature")).isEqualTo(1);
    assertThat(engine.counter("drop-invalid-missing-signature")).isEqualTo(1);
    assertThat(engine.counter("drop-invalid-invalid-seqno")).isEqualTo(1);
    assertThat(engine.counter("drop-invalid-invalid-from")).isEqualTo(1);
    assertThat(engine.counter("drop-invalid-key-mismatch")).isEqualTo(1);
    // The forged copies did not poison the seen-cache: the real one still gets through.
    engine.handleRpc(author, publish(good));
    assertThat(delivered).hasSize(1);
  }

  @Test
  void handleMessage_shouldDrop_whenDataOversized() {
    final GossipsubConfig config = GossipsubConfig.builder().maxMessageSize(16).build();
    engine = newEngine(config);
    engine.subscribe(TOPIC);
    final PeerId author = peers(1, TOPIC).get(0);
    engine.handleRpc(author, publish(signedBy(author, "x".repeat(17), 1)));
    assertThat(delivered).isEmpty();
    assertThat(engine.counter("drop-oversized")).isEqualTo(1);
    assertThatThrownBy(() -> engine.publish(TOPIC, new byte[17]))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void spammer_shouldNotEvictGoodMeshPeers_andItsValidTrafficStillWorks() {
    final GossipsubConfig config = GossipsubConfig.builder().maxMessageSize(64)
        .maxMessagesPerPeerPerHeartbeat(20).build();
    engine = newEngine(config);
    engine.subscribe(TOPIC);
    final List<PeerId> all = peers(6, TOPIC);
    heartbeats(1);
    final Set<PeerId> meshBefore = Set.copyOf(engine.meshPeers(TOPIC));
    final PeerId spammer = meshBefore.iterator().next();
    final Message valid = signedBy(spammer, "fine", 1);
    for (int i = 0; i < 50; i++) {
      engine.handleRpc(spammer, publish(signedBy(spammer, "x".repeat(65), 100 + i)));
      engine.handleRpc(spammer, publish(valid.toBuilder()
          .setData(ByteString.copyFromUtf8("forged " + i)).build()));
    }
    heartbeats(3);
    assertThat(engine.counter("drop-oversized") + engine.counter("drop-rate-limited"))
        .isGreaterThan(0);
    assertThat(engine.counter("drop-invalid-bad-signature")
        + engine.counter("drop-rate-limited")).isGreaterThanOrEqualTo(50);
    assertThat(engine.meshPeers(TOPIC)).containsAll(meshBefore);
    assertThat(all).containsAll(engine.meshPeers(TOPIC));
    engine.handleRpc(spammer, publish(valid));
    assertThat(delivered).hasSize(1);
  }

  @Test
  void heartbeat_shouldGossipIHaveToNonMeshPeers_andAnswerIWantWithinTheWindow() {
    engine.subscribe(TOPIC);
    final List<PeerId> all = peers(10, TOPIC);
    heartbeats(1);
    final PeerId outsider = all.stream().filter(p -> !engine.meshPeers(TOPIC).contains(p))
        .findFirst().orElseThrow();
    final PeerId author = engine.meshPeers(TOPIC).iterator().next();
    engine.handleRpc(author, publish(signedBy(author, "gossip me", 3)));
    final MessageId id = delivered.get(0).id();
    sent.clear();
    heartbeats(1);
    final List<PeerId> gossiped = all.stream().filter(p -> !ihavesTo(p).isEmpty()).toList();
    assertThat(gossiped).hasSize(4).doesNotContainAnyElementsOf(engine.meshPeers(TOPIC));
    assertThat(ihavesTo(gossiped.get(0)).get(0).getMessageIDsList())
        .containsExactly(ByteString.copyFrom(id.bytes()));
    sent.clear();
    final RPC iwant = control(ControlMessage.newBuilder().addIwant(ControlIWant.newBuilder()
        .addMessageIDs(ByteString.copyFrom(id.bytes()))));
    engine.handleRpc(outsider, iwant);
    assertThat(messagesTo(outsider)).hasSize(1);
    // After mcache_len (5) heartbeats in total the message is gone from the cache.
    heartbeats(4);
    sent.clear();
    engine.handleRpc(outsider, iwant);
    assertThat(messagesTo(outsider)).isEmpty();
    assertThat(engine.counter("iwant-unknown")).isEqualTo(1);
  }

  @Test
  void handleIHave_shouldAskOnlyForUnseenIds() {
    engine.subscribe(TOPIC);
    final List<PeerId> all = peers(2, TOPIC);
    final Message known = signedBy(all.get(0), "known", 1);
    engine.handleRpc(all.get(0), publish(known));
    sent.clear();
    final byte[] knownId = delivered.get(0).id().bytes();
    final byte[] unknownId = new byte[] {9, 9, 9};
    engine.handleRpc(all.get(1), control(ControlMessage.newBuilder().addIhave(
        ControlIHave.newBuilder().setTopicID(TOPIC).addMessageIDs(ByteString.copyFrom(knownId))
            .addMessageIDs(ByteString.copyFrom(unknownId)))));
    final List<ByteString> asked = sent.get(all.get(1)).stream()
        .flatMap(rpc -> rpc.getControl().getIwantList().stream())
        .flatMap(w -> w.getMessageIDsList().stream()).toList();
    assertThat(asked).containsExactly(ByteString.copyFrom(unknownId));
  }

  @Test
  void handleMessage_shouldNotForward_toPeerThatSentIDontWant() {
    engine.subscribe(TOPIC);
    final List<PeerId> all = peers(3, TOPIC);
    heartbeats(1);
    final Message message = signedBy(all.get(0), "big".repeat(300), 11);
    final MessageId id = StrictSign.validate(message).valid().id();
    engine.handleRpc(all.get(2), control(ControlMessage.newBuilder().addIdontwant(
        ControlIDontWant.newBuilder().addMessageIDs(ByteString.copyFrom(id.bytes())))));
    sent.clear();
    engine.handleRpc(all.get(0), publish(message));
    assertThat(messagesTo(all.get(1))).hasSize(1);
    assertThat(messagesTo(all.get(2))).isEmpty();
    assertThat(engine.counter("forward-skipped-idontwant")).isEqualTo(1);
    // A message >= 512 bytes makes us send IDONTWANT to the other 1.2 mesh peers.
    assertThat(sent.get(all.get(1)).stream().flatMap(r -> r.getControl().getIdontwantList()
        .stream()).flatMap(d -> d.getMessageIDsList().stream()).toList())
        .containsExactly(ByteString.copyFrom(id.bytes()));
  }

  @Test
  void publish_shouldFloodAllTopicPeers_andExpireFanoutAfterTtl() {
    final List<PeerId> all = peers(8, TOPIC);
    final GossipsubEngine.PublishResult result = engine.publish(TOPIC,
        "mine".getBytes(StandardCharsets.UTF_8));
    assertThat(result.recipients()).isEqualTo(8);
    assertThat(all).allSatisfy(p -> assertThat(messagesTo(p)).hasSize(1));
    final Message sentMessage = messagesTo(all.get(0)).get(0);
    assertThat(StrictSign.validate(sentMessage).valid().id()).isEqualTo(result.id());
    assertThat(sentMessage.getKey().toByteArray()).isEqualTo(identity.publicKey().marshal());
    assertThat(engine.fanoutPeers(TOPIC)).hasSize(6);
    heartbeats(59);
    assertThat(engine.fanoutPeers(TOPIC)).hasSize(6);
    heartbeats(2);
    assertThat(engine.fanoutPeers(TOPIC)).isEmpty();
  }

  @Test
  void publish_shouldFail_whenNoPeersAndZeroPeersNotAllowed() {
    engine = newEngine(GossipsubConfig.builder().allowPublishToZeroTopicPeers(false).build());
    assertThatThrownBy(() -> engine.publish(TOPIC, new byte[1]))
        .isInstanceOf(IllegalStateException.class);
    assertThat(newEngine(GossipsubConfig.DEFAULT).publish(TOPIC, new byte[1]).recipients())
        .isZero();
  }

  @Test
  void seenCache_shouldForgetIdsAfterTtl() {
    engine.subscribe(TOPIC);
    final PeerId author = peers(1, TOPIC).get(0);
    final Message message = signedBy(author, "again", 5);
    engine.handleRpc(author, publish(message));
    heartbeats(119);
    assertThat(engine.hasSeen(delivered.get(0).id())).isTrue();
    heartbeats(2);
    assertThat(engine.hasSeen(delivered.get(0).id())).isFalse();
  }

  @Test
  void subscriptionChange_shouldAllowSubscribingFromTheCallback() {
    extra = new GossipsubEngine.Output() {
      @Override
      public void send(final PeerId peer, final RPC rpc) {}

      @Override
      public void subscriptionChanged(final PeerId peer, final String topic,
          final boolean subscribed) {
        if (subscribed && topic.startsWith("/orbitdb/")) {
          engine.subscribe(topic);
        }
      }
    };
    final PeerId peer = peers(1, TOPIC).get(0);
    assertThat(subscriptionEvents).containsExactly(peer + " " + TOPIC + " true");
    assertThat(engine.topics()).containsExactly(TOPIC);
    assertThat(engine.meshPeers(TOPIC)).containsExactly(peer);
    engine.handleRpc(peer, publish(signedBy(peer, "after", 1)));
    assertThat(delivered).hasSize(1);
  }

  @Test
  void handleRpc_shouldIgnoreSubscriptions_overTheLimits() {
    engine = newEngine(GossipsubConfig.builder().maxTopicsPerPeer(2).maxSubscriptionsPerRpc(3)
        .build());
    final PeerId peer = Keys.generate(KeyType.ED25519, keyRandom).publicKey().peerId();
    engine.outboundOpened(peer, true);
    final RPC.Builder many = RPC.newBuilder();
    for (int i = 0; i < 4; i++) {
      many.addSubscriptions(RPC.SubOpts.newBuilder().setSubscribe(true).setTopic("t" + i));
    }
    engine.handleRpc(peer, many.build());
    assertThat(engine.topicsOf(peer)).isEmpty();
    engine.handleRpc(peer, RPC.newBuilder().addAllSubscriptions(
        many.getSubscriptionsList().subList(0, 3)).build());
    assertThat(engine.topicsOf(peer)).containsExactlyInAnyOrder("t0", "t1");
    assertThat(engine.counters()).containsEntry("drop-subscriptions-over-limit", 1L)
        .containsEntry("drop-topics-over-limit", 1L);
  }

  @Test
  void handleMessage_shouldRateLimitPerPeer() {
    engine = newEngine(GossipsubConfig.builder().maxMessagesPerPeerPerHeartbeat(2).build());
    engine.subscribe(TOPIC);
    final PeerId author = peers(1, TOPIC).get(0);
    for (int i = 0; i < 3; i++) {
      engine.handleRpc(author, publish(signedBy(author, "m" + i, i)));
    }
    assertThat(delivered).hasSize(2);
    heartbeats(1);
    engine.handleRpc(author, publish(signedBy(author, "m3", 3)));
    assertThat(delivered.stream().map(m -> new String(m.data(), StandardCharsets.UTF_8))
        .collect(Collectors.toList())).containsExactly("m0", "m1", "m3");
  }

  @Test
  void graft_shouldBeIgnoredWithoutPrune_whenTopicNotJoined() {
    final PeerId peer = peers(1, TOPIC).get(0);
    engine.handleRpc(peer, control(ControlMessage.newBuilder()
        .addGraft(ControlGraft.newBuilder().setTopicID(TOPIC))));
    assertThat(sent.getOrDefault(peer, List.of())).isEmpty();
    assertThat(engine.counter("graft-unknown-topic")).isEqualTo(1);
    // Joining later grafts the peer: no backoff was set on either side.
    engine.subscribe(TOPIC);
    assertThat(graftsTo(peer)).hasSize(1);
  }

  @Test
  void unsubscribe_shouldSendUnsubAndPruneTheMeshWithUnsubscribeBackoff() {
    engine.subscribe(TOPIC);
    final List<PeerId> all = peers(2, TOPIC);
    heartbeats(1);
    sent.clear();
    engine.unsubscribe(TOPIC);
    assertThat(all).allSatisfy(p -> {
      assertThat(sent.get(p).get(0).getSubscriptions(0).getSubscribe()).isFalse();
      assertThat(prunesTo(p)).extracting(ControlPrune::getBackoff).containsExactly(10L);
      assertThat(engine.inBackoff(p, TOPIC)).isTrue();
    });
    assertThat(engine.meshPeers(TOPIC)).isEmpty();
    assertThat(engine.topics()).isEmpty();
  }

  @Test
  void outboundClosed_shouldLeaveMeshes_andStopSending() {
    engine.subscribe(TOPIC);
    final List<PeerId> all = peers(2, TOPIC);
    heartbeats(1);
    engine.outboundClosed(all.get(0));
    assertThat(engine.meshPeers(TOPIC)).containsExactly(all.get(1));
    sent.clear();
    assertThat(engine.publish(TOPIC, new byte[] {1}).recipients()).isEqualTo(1);
    assertThat(sent).containsOnlyKeys(all.get(1));
    // Reopened: all subscriptions first, then the heartbeat grafts it again.
    engine.outboundOpened(all.get(0), false);
    assertThat(sent.get(all.get(0)).get(0).getSubscriptionsList())
        .extracting(RPC.SubOpts::getTopic).containsExactly(TOPIC);
    heartbeats(1);
    assertThat(engine.meshPeers(TOPIC)).containsExactlyInAnyOrderElementsOf(all);
  }

  @Test
  void handleIWant_shouldStopAnswering_afterRetransmissionLimit() {
    engine.subscribe(TOPIC);
    final PeerId peer = peers(1, TOPIC).get(0);
    final MessageId id = engine.publish(TOPIC, new byte[] {7}).id();
    sent.clear();
    final RPC iwant = control(ControlMessage.newBuilder().addIwant(ControlIWant.newBuilder()
        .addMessageIDs(ByteString.copyFrom(id.bytes()))));
    for (int i = 0; i < 5; i++) {
      engine.handleRpc(peer, iwant);
    }
    assertThat(messagesTo(peer)).hasSize(3);
    assertThat(engine.counter("drop-iwant-retransmission-limit")).isEqualTo(2);
  }

  @Test
  void handleIHave_shouldIgnoreIHaves_overThePerHeartbeatLimit() {
    engine = newEngine(GossipsubConfig.builder().maxIHaveMessages(2).build());
    engine.subscribe(TOPIC);
    final PeerId peer = peers(1, TOPIC).get(0);
    for (int i = 0; i < 3; i++) {
      engine.handleRpc(peer, control(ControlMessage.newBuilder().addIhave(ControlIHave
          .newBuilder().setTopicID(TOPIC).addMessageIDs(ByteString.copyFrom(new byte[] {
              (byte) i})))));
    }
    assertThat(sent.get(peer).stream().mapToInt(r -> r.getControl().getIwantCount()).sum())
        .isEqualTo(2);
    assertThat(engine.counter("drop-ihave-over-limit")).isEqualTo(1);
  }

  @Test
  void flush_shouldSplitControlIntoOneRpcPerItem_whenLarge() {
    engine = newEngine(GossipsubConfig.builder().maxMessageSize(1).maxRpcSize(4).build());
    final PeerId peer = peers(1, TOPIC).get(0);
    engine.subscribe(TOPIC);
    final List<RPC> rpcs = sent.get(peer);
    assertThat(rpcs).hasSize(2);
    assertThat(rpcs.get(0).getSubscriptionsCount()).isEqualTo(1);
    assertThat(rpcs.get(0).hasControl()).isFalse();
    assertThat(rpcs.get(1).getControl().getGraftCount()).isEqualTo(1);
    assertThat(rpcs.get(1).getSubscriptionsCount()).isZero();
  }
}
