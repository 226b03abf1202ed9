package io.relaypinner.relay.pubsub;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.relaypinner.libp2p.crypto.KeyType;
import io.relaypinner.libp2p.crypto.Keys;
import io.relaypinner.libp2p.crypto.PrivateKey;
import io.relaypinner.libp2p.host.LimitCounters.Limit;
import io.relaypinner.libp2p.pubsub.GossipsubConfig;
import io.relaypinner.libp2p.pubsub.PubSub;
import io.relaypinner.multiformats.PeerId;
import io.relaypinner.relay.RelayNode;
import io.relaypinner.relay.config.BudgetConfig;
import io.relaypinner.relay.config.RelayConfig;
import io.relaypinner.relay.identity.NodeIdentity;
import io.relaypinner.testkit.JsPeer;
import io.relaypinner.testkit.NodeJs;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Many browsers behind one address (a proxy, a campus NAT): 100 js-libp2p gossipsub peers in one
 * Node process (interop/js/common/many-subscribers.mjs), all connecting from 127.0.0.1, subscribe
 * to a topic the relay follows and stay a few heartbeats. None is dropped or scored out: all stay
 * connected and subscribed as the relay sees them, its mesh for the topic is within [D, D_hi] and
 * made of them only, and a message the relay publishes once reaches each of the 100 exactly once.
 * The relay raises {@code RELAY_MAX_CONNECTIONS_PER_IP} above 100, as an operator whose users
 * share one address does (docs/libp2p.md, "Many peers behind one address").
 */
class ManySubscribersJsInteropIT {
  private static final Duration LINE = Duration.ofSeconds(60);
  private static final int PEERS = 100;
  private static final String TOPIC = "relay-pinner/many-subscribers";
  private final List<AutoCloseable> toClose = new ArrayList<>();

  @AfterEach
  void close() throws Exception {
    for (int i = toClose.size() - 1; i >= 0; i--) {
      toClose.get(i).close();
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"stack-b"})
  void hundredPeersFromOneIp_shouldAllStaySubscribed_andEachReceiveAMessagePublishedOnce(
      final String stack, @TempDir final Path dir) throws Exception {
    final PrivateKey key = Keys.generate(KeyType.ED25519, new SecureRandom());
    final NodeIdentity identity = new NodeIdentity(key, key.publicKey().peerId(),
        NodeIdentity.servingZone(key.publicKey().peerId(), "libp2p.direct"),
        NodeIdentity.Source.ENVIRONMENT);
    final BudgetConfig budget = BudgetConfig.DEFAULT;
    final RelayNode node = new RelayNode(RelayConfig.builder().dataDir(dir)
        .metricsDisabled(true).listenIpv4("127.0.0.1").tcpPort(0).wsPort(0)
        .quicPort(0).ipv6Disabled(true)
        .budget(new BudgetConfig(2 * PEERS, budget.httpMaxConnections(), budget.prefix(),
            budget.trustedProxies()))
        .build(), identity, new PrometheusRegistry(), Clock.systemUTC());
    toClose.add(node);
    node.start();
    final String relay = node.network().host().listenAddresses().stream()
        .filter(a -> !a.toString().endsWith("/ws")).findFirst().orElseThrow()
        .withPeerId(identity.peerId()).toString();
    final PubSub pubsub = node.network().pubsub();
    pubsub.subscribe(TOPIC).get();

    final JsPeer peers = NodeJs.start(stack, "../common/many-subscribers.mjs", TOPIC,
        "--dial", relay, "--peers", String.valueOf(PEERS));
    toClose.add(peers);
    final JsonNode ready = peers.nextEvent("ready", LINE);
    final Set<PeerId> ids = new HashSet<>();
    ready.get("peers").forEach(id -> ids.add(PeerId.parse(id.asText())));
    assertThat(ids).hasSize(PEERS);
    await().atMost(Duration.ofSeconds(15)).until(() -> pubsub.peers(TOPIC).containsAll(ids));

    // Two heartbeats and more (mesh maintenance: the 100 GRAFTs are pruned down to D), and a
    // JS score decay interval (1 s) for the peers' side; then nobody may have been dropped.
    final GossipsubConfig config = pubsub.config();
    final Duration stay = config.heartbeatInterval().multipliedBy(3);
    await().pollDelay(stay).atMost(stay.plusSeconds(10))
        .until(() -> pubsub.peers(TOPIC).size() == PEERS);
    assertThat(pubsub.meshPeers(TOPIC)).isSubsetOf(ids).hasSizeBetween(config.d(), config.dHi());

    assertThat(pubsub.publish(TOPIC, "once".getBytes(StandardCharsets.UTF_8)).get()
        .recipients()).isEqualTo(PEERS);
    final Set<Integer> got = new HashSet<>();
    while (got.size() < PEERS) {
      final JsonNode message = peers.nextEvent("message", Duration.ofSeconds(10));
      assertThat(message.get("data").asText()).isEqualTo("once");
      assertThat(message.get("from").asText()).isEqualTo(identity.peerId().toString());
      assertThat(got.add(message.get("peer").asInt())).as("peer %s twice", message.get("peer"))
          .isTrue();
    }
    // Exactly once each (and the relay sent it once, to each of them), all still connected to
    // the relay, none refused for its address.
    peers.send("stats");
    final JsonNode stats = peers.nextEvent("stats", LINE);
    stats.get("received").forEach(n -> assertThat(n.asInt()).isEqualTo(1));
    stats.get("connected").forEach(n -> assertThat(n.asBoolean()).isTrue());
    assertThat(pubsub.peers(TOPIC)).containsAll(ids);
    assertThat(pubsub.counters()).doesNotContainKey("graft-during-backoff")
        .containsEntry("published", 1L);
    assertThat(node.network().host().limitCounters().get(Limit.MAX_CONNECTIONS_PER_IP)).isZero();
  }
}
