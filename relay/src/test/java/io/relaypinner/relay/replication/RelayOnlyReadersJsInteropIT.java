package io.relaypinner.relay.replication;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.relaypinner.libp2p.crypto.KeyType;
import io.relaypinner.libp2p.crypto.Keys;
import io.relaypinner.libp2p.crypto.PrivateKey;
import io.relaypinner.multiformats.PeerId;
import io.relaypinner.orbitdb.OrbitDbAddress;
import io.relaypinner.relay.RelayNode;
import io.relaypinner.relay.config.RelayConfig;
import io.relaypinner.relay.identity.NodeIdentity;
import io.relaypinner.testkit.JsPeer;
import io.relaypinner.testkit.NodeJs;
import io.relaypinner.testkit.browser.BrowserPage;
import io.relaypinner.testkit.browser.HeadlessBrowser;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Readers that reach the writer only through the relay (issue 37, orbitdb#1255), with stock
 * OrbitDB peers of each stack ({@code interop/js/common/relay-only-peer.mjs}): writer and reader
 * dial only the relay, listen nowhere and discover nobody, so the relay is the only way between
 * them (each test checks that both are connected to the relay alone).
 *
 * <ul>
 *   <li><b>Live.</b> The reader opens the database by address before the writer's first write;
 *       the writer then writes {@link #ENTRIES} entries one at a time, and each, the first
 *       included, reaches the reader as an OrbitDB {@code update} event before the next is
 *       written: no explicit sync, no reconnect, no re-open. Then an entry written while the
 *       writer was away from the relay reaches the reader once it is back. Also with a Chromium
 *       page as the reader.
 *   <li><b>Late reader.</b> The writer writes {@link #ENTRIES} entries naming a file and leaves
 *       once the relay holds them and pinned the file; a reader then opens the database and gets
 *       every entry, and the file through the relay's bitswap.
 * </ul>
 *
 * <p>One relay serves the class; each stack is one entry of {@link #stacks()}.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RelayOnlyReadersJsInteropIT {
  /** Entries the writer writes in each scenario. */
  static final int ENTRIES = 5;
  private static final Duration LINE = Duration.ofSeconds(60);
  /** How long one entry may take from the writer's write to the reader's update event. */
  private static final Duration LIVE = Duration.ofSeconds(15);
  private static final ObjectMapper JSON = new ObjectMapper();

  private final HttpClient client = HttpClient.newBuilder()
      .version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(5)).build();
  private Path dir;
  private RelayNode relay;
  private String relayAddress;
  private String relayPeer;

  /** The JS stacks the scenarios run on: one entry each. */
  static Stream<String> stacks() {
    return Stream.of("stack-a", "stack-b", "stack-c");
  }

  /**
   * The Node stacks whose writer feeds the Chromium reader (the page bundles the stack-C
   * generation of interop/js/browser: stack C since issue 37).
   */
  static Stream<String> browserWriterStacks() {
    return Stream.of("stack-b");
  }

  @BeforeAll
  void start() throws Exception {
    dir = Files.createTempDirectory("relay-only-readers-it");
    final PrivateKey key = Keys.generate(KeyType.ED25519, new SecureRandom());
    final NodeIdentity identity = new NodeIdentity(key, key.publicKey().peerId(),
        NodeIdentity.servingZone(key.publicKey().peerId(), "libp2p.direct"),
        NodeIdentity.Source.ENVIRONMENT);
    relay = new RelayNode(RelayConfig.builder().dataDir(dir.resolve("relay"))
        .metricsHost("127.0.0.1").metricsPort(0).listenIpv4("127.0.0.1").tcpPort(0).wsPort(0)
        .quicPort(0)
        .ipv6Disabled(true).build(), identity, new PrometheusRegistry(), Clock.systemUTC());
    relay.start();
    relayPeer = identity.peerId().toString();
    relayAddress = relay.network().host().listenAddresses().stream()
        .filter(a -> !a.toString().endsWith("/ws")).findFirst().orElseThrow()
        .withPeerId(identity.peerId()).toString();
  }

  @AfterAll
  void stop() throws Exception {
    if (relay != null) {
      relay.close();
    }
    try (var paths = Files.walk(dir)) {
      paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    }
  }

  /**
   * Live, then away: after the {@link #ENTRIES} live entries the writer hangs up, writes one
   * more entry and dials the relay again. The relay gets that entry in the heads exchange, never
   * as a message on the topic, after the reader had exchanged heads with it; OrbitDB never asks
   * the relay again, so only the relay's publication of its heads on the topic brings it to the
   * reader ({@code heads-republished}).
   */
  @ParameterizedTest(name = "{0}")
  @MethodSource("stacks")
  void liveReader_shouldReceiveEveryEntryAsAnUpdate_whenOnlyTheRelayConnectsItToTheWriter(
      final String stack) throws Exception {
    try (JsPeer writer = NodeJs.start(stack, "../common/relay-only-peer.mjs", "writer",
        "--dial", relayAddress)) {
      final JsonNode ready = next(writer, "ready");
      final String address = ready.get("address").asText();
      final PeerId writerPeer = PeerId.parse(ready.get("peerId").asText());
      // The relay follows the database (it fetched the manifest from the writer), so a reader
      // can open it by address through the relay.
      await().atMost(Duration.ofSeconds(20)).until(() ->
          relay.network().pubsub().topics().contains(address));
      try (JsPeer reader = NodeJs.start(stack, "../common/relay-only-peer.mjs", "reader",
          "--dial", relayAddress, "--open", address)) {
        next(reader, "opened");
        for (int i = 0; i < ENTRIES; i++) {
          writer.send("write 1");
          final JsonNode written = next(writer, "written");
          final JsonNode update = next(reader, "update", LIVE);
          assertThat(update.get("hash").asText()).as("update %d", i)
              .isEqualTo(written.get("hash").asText());
          assertThat(update.get("text").asText()).isEqualTo("entry " + i);
        }
        assertOnlyTheRelay(writer);
        assertOnlyTheRelay(reader);

        // Away: an entry written while the writer is not connected.
        final long republished = republished();
        writer.send("leave");
        next(writer, "left");
        await().atMost(Duration.ofSeconds(10)).until(() ->
            relay.network().host().connection(writerPeer).isEmpty());
        writer.send("write 1");
        final JsonNode written = next(writer, "written");
        writer.send("back");
        next(writer, "back");
        final JsonNode update = next(reader, "update", LIVE);
        assertThat(update.get("hash").asText()).as("the entry written away")
            .isEqualTo(written.get("hash").asText());
        assertThat(republished()).isGreaterThan(republished);
        assertThat(metrics()).contains(
            "relay_orbitdb_replication_events_total{event=\"heads-republished\"}");
        assertOnlyTheRelay(writer);
        assertOnlyTheRelay(reader);
      }
    }
  }

  /**
   * The live case with a Chromium page as the reader (interop/js/browser/pages/orbitdb.js,
   * {@code role=live-reader}, over the relay's {@code /ws}) and a Node writer.
   */
  @ParameterizedTest(name = "Chromium reader, {0} writer")
  @MethodSource("browserWriterStacks")
  void liveBrowserReader_shouldReceiveEveryEntryAsAnUpdate_whenOnlyTheRelayConnectsIt(
      final String stack) throws Exception {
    final String wsAddress = relay.network().host().listenAddresses().stream()
        .filter(a -> a.toString().endsWith("/ws")).findFirst().orElseThrow()
        .withPeerId(PeerId.parse(relayPeer)).toString();
    try (JsPeer writer = NodeJs.start(stack, "../common/relay-only-peer.mjs", "writer",
        "--dial", relayAddress);
        HeadlessBrowser browser = HeadlessBrowser.builder()
            .screenshots(Path.of("target", "browser-screenshots")).start()) {
      final String address = next(writer, "ready").get("address").asText();
      await().atMost(Duration.ofSeconds(20)).until(() ->
          relay.network().pubsub().topics().contains(address));
      try (BrowserPage reader = browser.open("relay-only-live-reader-" + stack, false,
          "/orbitdb.html?role=live-reader&relay=" + encode(wsAddress) + "&address="
              + encode(address))) {
        reader.nextReport("opened", LINE);
        for (int i = 0; i < ENTRIES; i++) {
          writer.send("write 1");
          final JsonNode written = next(writer, "written");
          final JsonNode update = reader.nextReport("update", LIVE);
          assertThat(update.get("hash").asText()).as("update %d", i)
              .isEqualTo(written.get("hash").asText());
          assertThat(update.get("text").asText()).isEqualTo("entry " + i);
        }
        final Set<String> peers = new HashSet<>();
        reader.eval("peers()", LINE).forEach(p -> peers.add(p.asText()));
        assertThat(peers).containsExactly(relayPeer);
        assertOnlyTheRelay(writer);
        assertThat(reader.errors()).noneMatch(e -> e.startsWith("uncaught"));
      }
    }
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("stacks")
  void lateReader_shouldGetEveryEntryAndTheFile_afterTheWriterLeft(final String stack)
      throws Exception {
    final String address;
    final JsonNode file;
    try (JsPeer writer = NodeJs.start(stack, "../common/relay-only-peer.mjs", "writer",
        "--dial", relayAddress, "--file-size", String.valueOf(300 * 1024))) {
      final JsonNode ready = next(writer, "ready");
      address = ready.get("address").asText();
      file = ready.get("file");
      writer.send("write " + ENTRIES);
      for (int i = 0; i < ENTRIES; i++) {
        next(writer, "written");
      }
      final OrbitDbAddress parsed = OrbitDbAddress.parse(address);
      await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(100)).until(() ->
          relay.replication().service().replicas().replica(parsed)
              .map(r -> r.log().size()).orElse(0) == ENTRIES
          && texts(get("/pinning/stats").get("pinnedMediaCids"))
              .contains(file.get("cid").asText()));
      assertOnlyTheRelay(writer);
    }
    try (JsPeer reader = NodeJs.start(stack, "../common/relay-only-peer.mjs", "reader",
        "--dial", relayAddress, "--open", address, "--expect", String.valueOf(ENTRIES),
        "--cat", file.get("cid").asText())) {
      final List<String> texts = new ArrayList<>();
      next(reader, "all").get("texts").forEach(t -> texts.add(t.asText()));
      final List<String> expected = new ArrayList<>();
      for (int i = 0; i < ENTRIES; i++) {
        expected.add("entry " + i);
      }
      assertThat(texts).containsExactlyInAnyOrderElementsOf(expected);
      assertThat(next(reader, "file").get("sha256").asText())
          .isEqualTo(file.get("sha256").asText());
      assertOnlyTheRelay(reader);
    }
  }

  /** The peer's open connections all lead to the relay. */
  private void assertOnlyTheRelay(final JsPeer peer) {
    peer.send("peers");
    final Set<String> peers = new HashSet<>();
    next(peer, "peers").get("peers").forEach(p -> peers.add(p.asText()));
    assertThat(peers).containsExactly(relayPeer);
  }

  private static JsonNode next(final JsPeer peer, final String event) {
    return next(peer, event, LINE);
  }

  /** The next line of {@code event}; an {@code error} line fails the test at once. */
  private static JsonNode next(final JsPeer peer, final String event, final Duration timeout) {
    while (true) {
      final JsonNode line = peer.nextJson(timeout);
      final String kind = line.path("event").asText();
      if (kind.equals("error")) {
        throw new AssertionError("the JS peer failed: " + line + "\n" + peer.stderr());
      }
      if (kind.equals(event)) {
        return line;
      }
    }
  }

  private JsonNode get(final String path) throws Exception {
    return JSON.readTree(client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
        + relay.http().port().getAsInt() + path)).timeout(Duration.ofSeconds(20)).build(),
        HttpResponse.BodyHandlers.ofString()).body());
  }

  private static String encode(final String value) {
    return URLEncoder.encode(value, StandardCharsets.UTF_8);
  }

  private long republished() {
    return relay.replication().service().counters().getOrDefault("heads-republished", 0L);
  }

  private String metrics() throws Exception {
    return client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
        + relay.http().port().getAsInt() + "/metrics")).timeout(Duration.ofSeconds(20)).build(),
        HttpResponse.BodyHandlers.ofString()).body();
  }

  private static Set<String> texts(final JsonNode array) {
    final Set<String> out = new HashSet<>();
    array.forEach(n -> out.add(n.asText()));
    return out;
  }
}
