package io.relaypinner.relay.pubsub;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.relaypinner.ipfs.dagcbor.DagCbor;
import io.relaypinner.libp2p.crypto.KeyType;
import io.relaypinner.libp2p.crypto.Keys;
import io.relaypinner.libp2p.crypto.PrivateKey;
import io.relaypinner.libp2p.pubsub.PubSub;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.multiformats.Multiaddr;
import io.relaypinner.multiformats.Multibase;
import io.relaypinner.orbitdb.Manifest;
import io.relaypinner.orbitdb.OrbitDbAddress;
import io.relaypinner.orbitdb.access.IpfsAccessController;
import io.relaypinner.relay.RelayNode;
import io.relaypinner.relay.config.RelayConfig;
import io.relaypinner.relay.identity.NodeIdentity;
import io.relaypinner.relay.sync.SyncEngine;
import io.relaypinner.testkit.JsPeer;
import io.relaypinner.testkit.NodeJs;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The relay node's own topic policy between real JS peers (interop/js/common/pubsub-peer.mjs):
 * two js-libp2p peers connected only to the relay, on an {@code /orbitdb/<cid>} topic nobody
 * subscribed on the relay by hand. Every message of the writer reaches the reader exactly once,
 * through the relay's mesh. The subscription is admitted (the database's manifest resolves) and
 * triggers a sync of the database.
 */
class RelayPubSubJsInteropIT {
  private static final Duration LINE = Duration.ofSeconds(60);
  private final List<AutoCloseable> toClose = new ArrayList<>();

  @AfterEach
  void close() throws Exception {
    for (int i = toClose.size() - 1; i >= 0; i--) {
      toClose.get(i).close();
    }
  }

  private JsPeer js(final String stack, final String... args) {
    final JsPeer peer = NodeJs.start(stack, "../common/pubsub-peer.mjs", args);
    toClose.add(peer);
    return peer;
  }

  @ParameterizedTest
  @ValueSource(strings = {"stack-a", "stack-b", "stack-c"})
  void relay_shouldForwardAnOrbitDbTopicItFollowedByItself(final String stack,
      @TempDir final Path dir) throws Exception {
    final PrivateKey key = Keys.generate(KeyType.ED25519, new SecureRandom());
    final NodeIdentity identity = new NodeIdentity(key, key.publicKey().peerId(),
        NodeIdentity.servingZone(key.publicKey().peerId(), "libp2p.direct"),
        NodeIdentity.Source.ENVIRONMENT);
    final RelayNode node = new RelayNode(RelayConfig.builder().dataDir(dir)
        .metricsDisabled(true).listenIpv4("127.0.0.1").tcpPort(0).wsPort(0).quicPort(0)
        .ipv6Disabled(true).build(), identity, new PrometheusRegistry(), Clock.systemUTC());
    toClose.add(node);
    node.start();
    final String relay = node.network().host().listenAddresses().stream()
        .filter(a -> !a.toString().endsWith("/ws")).findFirst().orElseThrow()
        .withPeerId(identity.peerId()).toString();
    // A database exists only once its manifest and controller resolve: this one's blocks are in
    // the relay's store (no JS peer here speaks OrbitDB), so the subscription is admitted.
    final byte[] ac = IpfsAccessController.encode(List.of("*"));
    final Cid acCid = DagCbor.cid(ac);
    node.storage().blockstore().put(acCid, ac);
    final byte[] manifest = Manifest.encode("pubsub-" + stack, "events",
        "/ipfs/" + acCid.toString(Multibase.Base.BASE58BTC), null);
    final Cid manifestCid = DagCbor.cid(manifest);
    node.storage().blockstore().put(manifestCid, manifest);
    final String topic = new OrbitDbAddress(manifestCid).topic();
    final PubSub pubsub = node.network().pubsub();

    final JsPeer reader = js(stack, topic, "--dial", relay);
    reader.nextEvent("ready", LINE);
    await().atMost(Duration.ofSeconds(15)).until(() -> pubsub.topics().contains(topic));
    assertThat(node.replication().topics().followed()).containsExactly(topic);

    final JsPeer writer = js(stack, topic, "--dial", relay, "--publish", "20", "--to",
        identity.peerId().toString());
    writer.nextEvent("ready", LINE);
    writer.nextEvent("published", LINE);

    final List<String> data = new ArrayList<>();
    while (data.size() < 20) {
      final JsonNode event = reader.nextEvent("message", LINE);
      data.add(event.get("data").asText());
    }
    final String prefix = stack.equals("stack-a") ? "A-" : stack.equals("stack-b") ? "B-" : "C-";
    final List<String> expected = new ArrayList<>();
    for (int i = 0; i < 20; i++) {
      expected.add(prefix + i);
    }
    assertThat(data).containsExactlyInAnyOrderElementsOf(expected);
    // The 20 arrived once each (no duplicate among them); the relay forwarded every one itself.
    await().atMost(Duration.ofSeconds(4))
        .until(() -> pubsub.counters().getOrDefault("message-forwarded", 0L) >= 20);
    assertThat(pubsub.counters().keySet()).noneMatch(k -> k.startsWith("drop-invalid"));
    assertThat(Multiaddr.parse(relay).peerId()).contains(identity.peerId());
    // Following the topic queued a sync of the database; its log is empty, hence complete.
    final SyncEngine engine = node.replication().syncEngine();
    await().atMost(Duration.ofSeconds(20)).until(() -> engine.history().get(topic).isPresent());
  }
}
