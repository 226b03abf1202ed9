package io.relaypinner.libp2p.pubsub;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.relaypinner.libp2p.crypto.KeyType;
import io.relaypinner.libp2p.crypto.Keys;
import io.relaypinner.libp2p.host.Host;
import io.relaypinner.libp2p.host.HostConfig;
import io.relaypinner.libp2p.netty.EventLoops;
import io.relaypinner.multiformats.Multiaddr;
import io.relaypinner.multiformats.PeerId;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Java gossipsub nodes on 127.0.0.1 over TCP, Noise and yamux. */
class GossipsubIT {
  private static final Duration WAIT = Duration.ofSeconds(15);
  private static final String TOPIC = "/orbitdb/zdpuLine";
  private final SecureRandom random = new SecureRandom();
  private final EventLoops loops = EventLoops.create(3, "gossip-it");
  private final List<Host> hosts = new CopyOnWriteArrayList<>();
  private final List<PubSub> routers = new CopyOnWriteArrayList<>();

  @AfterEach
  void close() {
    routers.forEach(PubSub::close);
    hosts.forEach(Host::close);
    loops.shutdownGracefully(Duration.ofSeconds(3));
  }

  private PubSub node(final KeyType keyType) throws Exception {
    final Host host = new Host(Keys.generate(keyType, random), HostConfig.builder()
        .listenAddresses(List.of(Multiaddr.parse("/ip4/127.0.0.1/tcp/0")))
        .agentVersion("relay-pinner/test").build(), loops, Clock.systemUTC());
    hosts.add(host);
    host.start().get(5, TimeUnit.SECONDS);
    final PubSub pubsub = PubSub.start(host, GossipsubConfig.DEFAULT, Clock.systemUTC(),
        new Random());
    routers.add(pubsub);
    return pubsub;
  }

  private static Multiaddr addressOf(final Host host) {
    return host.listenAddresses().get(0).withPeerId(host.peerId());
  }

  @Test
  void publish_shouldArriveOnceAtTheFarEnd_whenThreeNodesInALine() throws Exception {
    final PubSub a = node(KeyType.ED25519);
    final PubSub b = node(KeyType.SECP256K1);
    final PubSub c = node(KeyType.ED25519);
    final Host hostA = hosts.get(0);
    final Host hostB = hosts.get(1);
    final Host hostC = hosts.get(2);
    final List<ReceivedMessage> atB = new CopyOnWriteArrayList<>();
    final List<ReceivedMessage> atC = new CopyOnWriteArrayList<>();
    final List<String> changesAtB = new CopyOnWriteArrayList<>();
    b.addMessageHandler(atB::add);
    c.addMessageHandler(atC::add);
    b.addSubscriptionListener((peer, topic, subscribed) ->
        changesAtB.add(peer + " " + topic + " " + subscribed));
    for (final PubSub node : List.of(a, b, c)) {
      node.subscribe(TOPIC).get(5, TimeUnit.SECONDS);
    }
    hostA.dial(addressOf(hostB)).get(10, TimeUnit.SECONDS);
    hostC.dial(addressOf(hostB)).get(10, TimeUnit.SECONDS);

    await().atMost(WAIT).until(() -> a.meshPeers(TOPIC).contains(hostB.peerId())
        && c.meshPeers(TOPIC).contains(hostB.peerId())
        && b.meshPeers(TOPIC).containsAll(List.of(hostA.peerId(), hostC.peerId())));
    assertThat(changesAtB).contains(hostA.peerId() + " " + TOPIC + " true",
        hostC.peerId() + " " + TOPIC + " true");

    final GossipsubEngine.PublishResult sent = a.publish(TOPIC,
        "from the far end".getBytes(StandardCharsets.UTF_8)).get(5, TimeUnit.SECONDS);
    assertThat(sent.recipients()).isEqualTo(1);
    await().atMost(WAIT).until(() -> atC.size() == 1);
    final ReceivedMessage received = atC.get(0);
    assertThat(received.author()).isEqualTo(hostA.peerId());
    assertThat(received.receivedFrom()).isEqualTo(hostB.peerId());
    assertThat(received.id()).isEqualTo(sent.id());
    assertThat(new String(received.data(), StandardCharsets.UTF_8))
        .isEqualTo("from the far end");
    // Gossip (IHAVE) keeps flowing for a few heartbeats: still exactly once everywhere.
    await().during(Duration.ofSeconds(3)).atMost(Duration.ofSeconds(5))
        .until(() -> atC.size() == 1 && atB.size() == 1);
    assertThat(a.counters()).doesNotContainKeys("drop-invalid-bad-signature");

    // And back: C publishes 20, A gets each exactly once.
    final List<ReceivedMessage> atA = new CopyOnWriteArrayList<>();
    a.addMessageHandler(atA::add);
    for (int i = 0; i < 20; i++) {
      c.publish(TOPIC, ("m" + i).getBytes(StandardCharsets.UTF_8)).get(5, TimeUnit.SECONDS);
    }
    await().atMost(WAIT).until(() -> atA.size() == 20);
    assertThat(atA.stream().map(ReceivedMessage::id).distinct().count()).isEqualTo(20);
    final PeerId cId = hostC.peerId();
    assertThat(atA).allSatisfy(m -> assertThat(m.author()).isEqualTo(cId));
  }

  /**
   * Issue 36: a relay following 1,001 databases announces them all on a new stream; another
   * relay-pinner used to drop that first RPC whole and count it as the sender's fault.
   */
  @Test
  void subscriptions_shouldAllArrive_withoutFault_whenAPeerFollows1001Topics() throws Exception {
    final PubSub a = node(KeyType.ED25519);
    final PubSub b = node(KeyType.ED25519);
    final Host hostA = hosts.get(0);
    final Host hostB = hosts.get(1);
    final java.util.Set<String> seenAtB = java.util.concurrent.ConcurrentHashMap.newKeySet();
    b.addSubscriptionListener((peer, topic, subscribed) -> {
      if (peer.equals(hostA.peerId()) && subscribed) {
        seenAtB.add(topic);
      }
    });
    for (int i = 0; i < 1_001; i++) {
      a.subscribe("/orbitdb/zdpuFollowed" + i).get(5, TimeUnit.SECONDS);
    }
    hostA.dial(addressOf(hostB)).get(10, TimeUnit.SECONDS);

    await().atMost(WAIT).until(() -> seenAtB.size() == 1_001);
    assertThat(b.peers("/orbitdb/zdpuFollowed1000")).containsExactly(hostA.peerId());
    assertThat(b.counters()).doesNotContainKeys("drop-subscriptions-over-limit",
        "drop-topics-over-limit", "drop-topics-shared-full");
    assertThat(hostB.bans().faults().values()).allMatch(n -> n == 0);
    assertThat(a.counters().get("subscriptions-rpc-sent")).isPositive();
  }

  @Test
  void unsubscribe_shouldReachPeers_andLeaveTheMesh() throws Exception {
    final PubSub a = node(KeyType.ED25519);
    final PubSub b = node(KeyType.ED25519);
    final Host hostA = hosts.get(0);
    final Host hostB = hosts.get(1);
    final List<String> changesAtA = new CopyOnWriteArrayList<>();
    a.addSubscriptionListener((peer, topic, subscribed) ->
        changesAtA.add(topic + " " + subscribed));
    a.subscribe(TOPIC).get(5, TimeUnit.SECONDS);
    b.subscribe(TOPIC).get(5, TimeUnit.SECONDS);
    hostA.dial(addressOf(hostB)).get(10, TimeUnit.SECONDS);
    await().atMost(WAIT).until(() -> a.meshPeers(TOPIC).contains(hostB.peerId()));
    b.unsubscribe(TOPIC).get(5, TimeUnit.SECONDS);
    await().atMost(WAIT).until(() -> a.meshPeers(TOPIC).isEmpty()
        && a.peers(TOPIC).isEmpty());
    assertThat(changesAtA).containsExactly(TOPIC + " true", TOPIC + " false");
    assertThat(b.topics()).isEmpty();
  }
}
