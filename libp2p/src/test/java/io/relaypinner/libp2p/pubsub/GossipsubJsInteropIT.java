package io.relaypinner.libp2p.pubsub;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.relaypinner.libp2p.crypto.KeyType;
import io.relaypinner.libp2p.crypto.Keys;
import io.relaypinner.libp2p.host.Host;
import io.relaypinner.libp2p.host.HostConfig;
import io.relaypinner.libp2p.netty.EventLoops;
import io.relaypinner.multiformats.Multiaddr;
import io.relaypinner.multiformats.PeerId;
import io.relaypinner.testkit.JsPeer;
import io.relaypinner.testkit.NodeJs;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Gossipsub between the Java router and js-libp2p: stack A ({@code @chainsafe/libp2p-gossipsub}
 * 14) and stack B ({@code @libp2p/gossipsub} 15), with the relay's JS settings
 * (interop/js/common/pubsub-peer.mjs).
 */
class GossipsubJsInteropIT {
  private static final Logger LOG = LoggerFactory.getLogger(GossipsubJsInteropIT.class);
  private static final Duration WAIT = Duration.ofSeconds(30);
  private static final Duration LINE = Duration.ofSeconds(30);
  private final EventLoops loops = EventLoops.create(2, "gossip-interop");
  private final List<JsPeer> jsPeers = new ArrayList<>();
  private Host host;
  private PubSub pubsub;
  private final List<ReceivedMessage> received = new CopyOnWriteArrayList<>();
  private final List<String> changes = new CopyOnWriteArrayList<>();

  @BeforeEach
  void start() throws Exception {
    host = new Host(Keys.generate(KeyType.ED25519, new SecureRandom()), HostConfig.builder()
        .listenAddresses(List.of(Multiaddr.parse("/ip4/127.0.0.1/tcp/0")))
        .agentVersion("relay-pinner/interop-test").build(), loops, Clock.systemUTC());
    host.start().get(5, TimeUnit.SECONDS);
    pubsub = PubSub.start(host, GossipsubConfig.DEFAULT, Clock.systemUTC(), new Random());
    pubsub.addMessageHandler(received::add);
    pubsub.addSubscriptionListener((peer, topic, subscribed) ->
        changes.add(peer + " " + topic + " " + subscribed));
  }

  @AfterEach
  void stop() {
    // What the JS peers made us count (IDONTWANT, duplicates, grafts): kept in the test log.
    LOG.info("gossipsub counters after the test: {}", pubsub.counters());
    jsPeers.forEach(JsPeer::close);
    pubsub.close();
    host.close();
    loops.shutdownGracefully(Duration.ofSeconds(3));
  }

  private JsPeer js(final String stack, final String... args) {
    final JsPeer peer = NodeJs.start(stack, "../common/pubsub-peer.mjs", args);
    jsPeers.add(peer);
    return peer;
  }

  private String javaAddress() {
    return host.listenAddresses().get(0).withPeerId(host.peerId()).toString();
  }

  /** Reads JSON lines into {@code into} until {@code done} holds for what was read. */
  private static void readUntil(final JsPeer peer, final List<JsonNode> into,
      final Predicate<List<JsonNode>> done) {
    while (!done.test(into)) {
      into.add(peer.nextJson(LINE));
    }
  }

  private static List<String> messageData(final List<JsonNode> events) {
    return events.stream().filter(e -> "message".equals(e.path("event").asText()))
        .map(e -> e.get("data").asText()).toList();
  }

  private static String padded(final String text, final int length) {
    return text + ".".repeat(Math.max(0, length - text.length()));
  }

  private static boolean has(final List<JsonNode> events, final String event) {
    return events.stream().anyMatch(e -> event.equals(e.path("event").asText()));
  }

  @ParameterizedTest
  @ValueSource(strings = {"stack-a", "stack-b", "stack-c"})
  void javaAndJs_shouldExchangeMessages_bothWays(final String stack) throws Exception {
    final String topic = "relay-pinner/interop/" + stack;
    pubsub.subscribe(topic).get(5, TimeUnit.SECONDS);
    final JsPeer peer = js(stack, topic, "--dial", javaAddress(), "--publish", "3", "--to",
        host.peerId().toString());
    final PeerId jsId = PeerId.parse(peer.nextEvent("ready", LINE).get("peerId").asText());

    await().atMost(WAIT).until(() -> changes.contains(jsId + " " + topic + " true"));
    await().atMost(WAIT).until(() -> pubsub.meshPeers(topic).contains(jsId));
    for (int i = 0; i < 3; i++) {
      pubsub.publish(topic, ("java-" + i).getBytes(StandardCharsets.UTF_8))
          .get(5, TimeUnit.SECONDS);
    }
    final List<JsonNode> events = new ArrayList<>();
    readUntil(peer, events, e -> messageData(e).size() >= 3 && has(e, "published"));
    assertThat(messageData(events)).containsExactly("java-0", "java-1", "java-2");
    assertThat(events.stream().filter(e -> "message".equals(e.path("event").asText())))
        .allSatisfy(e -> assertThat(e.get("from").asText()).isEqualTo(host.peerId().toString()));
    assertThat(events.stream().filter(e -> "subscription-change".equals(e.path("event").asText())))
        .anySatisfy(e -> {
          assertThat(e.get("peer").asText()).isEqualTo(host.peerId().toString());
          assertThat(e.get("topic").asText()).isEqualTo(topic);
          assertThat(e.get("subscribed").asBoolean()).isTrue();
        });

    final String prefix = stack.equals("stack-a") ? "A-" : stack.equals("stack-b") ? "B-" : "C-";
    await().atMost(WAIT).until(() -> received.size() >= 3);
    await().during(Duration.ofSeconds(2)).atMost(Duration.ofSeconds(4))
        .until(() -> received.size() == 3);
    assertThat(received).extracting(m -> new String(m.data(), StandardCharsets.UTF_8))
        .containsExactly(prefix + "0", prefix + "1", prefix + "2");
    assertThat(received).allSatisfy(m -> {
      assertThat(m.author()).isEqualTo(jsId);
      assertThat(m.topic()).isEqualTo(topic);
    });
    assertThat(pubsub.counters().keySet()).noneMatch(k -> k.startsWith("drop-invalid"));
  }

  @ParameterizedTest
  @ValueSource(strings = {"stack-a", "stack-b", "stack-c"})
  void jsToJavaToJs_shouldRelayEachMessageOnce_whenJavaSubscribesFromTheCallback(
      final String stack) throws Exception {
    final String topic = "/orbitdb/zdpuAwV7hJ5nSmzkqQMTvYGV4pYkVnEJeMxmRnW4wTZ93cUq"
        + stack.charAt(stack.length() - 1);
    // The relay policy: join any /orbitdb/ topic a peer announces, from inside the callback.
    pubsub.addSubscriptionListener((peer, t, subscribed) -> {
      if (subscribed && t.startsWith("/orbitdb/")) {
        pubsub.subscribe(t);
      }
    });
    final JsPeer reader = js(stack, topic, "--dial", javaAddress());
    final PeerId readerId = PeerId.parse(reader.nextEvent("ready", LINE).get("peerId").asText());
    await().atMost(WAIT).until(() -> pubsub.meshPeers(topic).contains(readerId));
    assertThat(pubsub.topics()).contains(topic);

    // 1 KiB messages: over JS's 512-byte IDONTWANT threshold, so IDONTWANT crosses the wire.
    final JsPeer writer = js(stack, topic, "--dial", javaAddress(), "--publish", "20", "--to",
        host.peerId().toString(), "--pad", "1024");
    final PeerId writerId = PeerId.parse(writer.nextEvent("ready", LINE).get("peerId").asText());
    writer.nextEvent("published", WAIT);

    final List<JsonNode> events = new ArrayList<>();
    readUntil(reader, events, e -> messageData(e).size() >= 20);
    final String prefix = stack.equals("stack-a") ? "A-" : stack.equals("stack-b") ? "B-" : "C-";
    final List<String> expected = new ArrayList<>();
    for (int i = 0; i < 20; i++) {
      expected.add(padded(prefix + i, 1024));
    }
    assertThat(messageData(events)).containsExactlyInAnyOrderElementsOf(expected);
    assertThat(events.stream().filter(e -> "message".equals(e.path("event").asText())))
        .allSatisfy(e -> assertThat(e.get("from").asText()).isEqualTo(writerId.toString()));
    await().atMost(WAIT).until(() -> received.size() >= 20);
    await().during(Duration.ofSeconds(2)).atMost(Duration.ofSeconds(4))
        .until(() -> received.size() == 20);
    assertThat(received.stream().map(ReceivedMessage::id).distinct().count()).isEqualTo(20);
    assertThat(pubsub.counters().getOrDefault("message-forwarded", 0L)).isGreaterThanOrEqualTo(20);
    // We told the reader (a 1.2 mesh peer) IDONTWANT for each; it kept the stream and the mesh.
    assertThat(pubsub.counters().getOrDefault("idontwant-sent", 0L)).isEqualTo(20);
    assertThat(pubsub.meshPeers(topic)).contains(readerId, writerId);
    assertThat(pubsub.counters().keySet()).noneMatch(k -> k.startsWith("drop-invalid"));
  }
}
