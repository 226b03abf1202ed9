package io.relaypinner.libp2p.pubsub.discovery;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.relaypinner.libp2p.crypto.KeyType;
import io.relaypinner.libp2p.crypto.Keys;
import io.relaypinner.libp2p.host.Host;
import io.relaypinner.libp2p.host.HostConfig;
import io.relaypinner.libp2p.netty.EventLoops;
import io.relaypinner.libp2p.pubsub.GossipsubConfig;
import io.relaypinner.libp2p.pubsub.PubSub;
import io.relaypinner.multiformats.Multiaddr;
import io.relaypinner.multiformats.PeerId;
import io.relaypinner.testkit.JsPeer;
import io.relaypinner.testkit.NodeJs;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Pubsub peer discovery between the Java relay and js-libp2p's
 * {@code @libp2p/pubsub-peer-discovery} (11 on stack A, 12 on stack B): two JS peers connected to
 * the relay only find each other through it, and find the relay with its addresses; the relay
 * hears both announcements.
 */
class PubsubPeerDiscoveryJsInteropIT {
  private static final String TOPIC = "todo._peer-discovery._p2p._pubsub";
  private static final Duration NODE_TIMEOUT = Duration.ofSeconds(60);
  private final EventLoops loops = EventLoops.create(2, "discovery-interop");
  private Host host;
  private PubSub pubsub;
  private PubsubPeerDiscovery discovery;

  @AfterEach
  void stop() {
    if (discovery != null) {
      discovery.close();
    }
    if (pubsub != null) {
      pubsub.close();
    }
    if (host != null) {
      host.close();
    }
    loops.shutdownGracefully(Duration.ofSeconds(3));
  }

  @ParameterizedTest
  @ValueSource(strings = {"stack-a", "stack-b", "stack-c"})
  void jsPeers_shouldFindEachOtherAndTheRelayThroughTheRelay(final String stack)
      throws Exception {
    host = new Host(Keys.generate(KeyType.ED25519, new SecureRandom()), HostConfig.builder()
        .listenAddresses(List.of(Multiaddr.parse("/ip4/127.0.0.1/tcp/0")))
        .agentVersion("relay-pinner/discovery-test").build(), loops, Clock.systemUTC());
    host.start().get(5, TimeUnit.SECONDS);
    pubsub = PubSub.start(host, GossipsubConfig.DEFAULT, Clock.systemUTC(), new SecureRandom());
    final Multiaddr publicAddress = Multiaddr.parse("/ip4/203.0.113.9/tcp/4001");
    discovery = PubsubPeerDiscovery.start(pubsub, List.of(TOPIC), host.identity().publicKey(),
        () -> List.of(publicAddress), loops.group(), Duration.ofSeconds(1));
    final Map<PeerId, List<Multiaddr>> heard = new ConcurrentHashMap<>();
    discovery.onDiscovered(d -> heard.put(d.peer(), d.addresses()));
    final String relay = host.listenAddresses().get(0).withPeerId(host.peerId()).toString();

    try (JsPeer a = NodeJs.start(stack, "../common/discovery-peer.mjs", relay, TOPIC);
        JsPeer b = NodeJs.start(stack, "../common/discovery-peer.mjs", relay, TOPIC)) {
      final JsonNode startedA = a.nextEvent("started", NODE_TIMEOUT);
      final JsonNode startedB = b.nextEvent("started", NODE_TIMEOUT);
      final Map<String, JsonNode> foundByA = discoveries(a, 2);
      final Map<String, JsonNode> foundByB = discoveries(b, 2);

      assertThat(foundByA).containsKeys(host.peerId().toBase58(),
          startedB.get("peerId").asText());
      assertThat(foundByB).containsKeys(host.peerId().toBase58(),
          startedA.get("peerId").asText());
      assertThat(foundByA.get(host.peerId().toBase58()).get("addrs").get(0).asText())
          .isEqualTo(publicAddress.withPeerId(host.peerId()).toString());
      await().atMost(Duration.ofSeconds(15)).until(() -> heard.size() == 2);
      assertThat(heard.get(PeerId.parse(startedA.get("peerId").asText())).toString())
          .contains("198.51.100.");
      assertThat(discovery.counters().get("published")).isPositive();
      assertThat(discovery.counters().get("invalid")).isZero();
    }
  }

  private static Map<String, JsonNode> discoveries(final JsPeer peer, final int count) {
    final Map<String, JsonNode> found = new HashMap<>();
    while (found.size() < count) {
      final JsonNode event = peer.nextEvent("discovered", NODE_TIMEOUT);
      found.put(event.get("peer").asText(), event);
    }
    return found;
  }
}
