package io.relaypinner.relay.browser;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.relaypinner.libp2p.crypto.KeyType;
import io.relaypinner.libp2p.crypto.Keys;
import io.relaypinner.libp2p.crypto.PrivateKey;
import io.relaypinner.relay.RelayNode;
import io.relaypinner.relay.config.RelayConfig;
import io.relaypinner.relay.identity.NodeIdentity;
import io.relaypinner.relay.testing.PrometheusTextParser;
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
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.IntStream;
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Browser E2E 2 (interop/js/browser/pages/live.js): two pages, each in its own headless Chromium
 * with a fresh profile, that can reach only the relay. Each makes a circuit relay v2 reservation,
 * they find each other through pubsub peer discovery on the relay
 * ({@code todo._peer-discovery._p2p._pubsub}), one dials the other's
 * {@code /p2p-circuit/webrtc} address (WebRTC signalled over the relayed connection), and while
 * both are open page A writes entries that page B's open database receives. The test asserts
 * which connection carried them: each of the entries came to B as a pubsub message from A
 * itself over a WebRTC connection that is not limited (not the relayed circuit, not the relay's
 * own gossipsub), and B's WebRTC ICE pair (host candidates on this machine's own address)
 * received the bytes.
 *
 * <p>Through relay-pinner (whose metrics then show both reservations and the circuit), and the
 * same through a js-libp2p 3 relay ({@code interop/js/browser/js-relay.mjs}) as a reference: a
 * failure of only the relay-pinner run points at the relay, not at the pages or the browser.
 */
class BrowserWebRtcE2eIT {
  private static final String TOPIC = "todo._peer-discovery._p2p._pubsub";
  private static final Duration STEP = Duration.ofSeconds(120);
  private static final int ENTRIES = 20;
  private static final ObjectMapper JSON = new ObjectMapper();

  private final List<AutoCloseable> toClose = new ArrayList<>();

  @AfterEach
  void close() throws Exception {
    for (int i = toClose.size() - 1; i >= 0; i--) {
      toClose.get(i).close();
    }
  }

  @Test
  void pages_shouldFindEachOther_andReplicateOverWebRtc_throughTheJsReferenceRelay()
      throws Exception {
    final JsPeer relay = NodeJs.start(HeadlessBrowser.PROJECT, "js-relay.mjs", TOPIC);
    toClose.add(relay);
    final JsonNode ready = relay.nextEvent("ready", STEP);
    liveReplication(ready.get("addrs").get(0).asText(), "js-relay");
  }

  @Test
  void pages_shouldFindEachOther_andReplicateOverWebRtc_throughRelayPinner(
      @TempDir final Path dir) throws Exception {
    final PrivateKey key = Keys.generate(KeyType.ED25519, new SecureRandom());
    // The relay serves circuits and discovery here, not replication: it follows no database
    // (an allowlist naming another one), else it may forward an entry to B before A's own copy
    // arrives over WebRTC and the test could not tell which connection carried it.
    final RelayNode relay = new RelayNode(RelayConfig.builder().dataDir(dir)
        .metricsHost("127.0.0.1").metricsPort(0).listenIpv4("127.0.0.1").tcpPort(0).wsPort(0)
        .quicPort(0)
        .ipv6Disabled(true)
        .orbitDbAllow(List.of("zdpuAkstgbTVGHQmMi5TC84auhJ8rL5qoC8jfk4yi5yzTGHaS")).build(),
        new NodeIdentity(key, key.publicKey().peerId(),
            NodeIdentity.servingZone(key.publicKey().peerId(), "libp2p.direct"),
            NodeIdentity.Source.ENVIRONMENT), new PrometheusRegistry(), Clock.systemUTC());
    toClose.add(relay);
    relay.start();
    final String address = relay.network().host().listenAddresses().stream()
        .filter(a -> a.toString().endsWith("/ws")).findFirst().orElseThrow()
        .withPeerId(key.publicKey().peerId()).toString();
    liveReplication(address, "relay-pinner");

    // The relay's side: both pages reserved, and it opened the circuit the WebRTC upgrade used.
    final PrometheusTextParser.Exposition metrics = PrometheusTextParser.parse(
        HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
            + relay.http().port().getAsInt() + "/metrics")).build(),
            HttpResponse.BodyHandlers.ofString()).body());
    assertThat(sum(metrics, "relay_circuit_reservations_total")).isGreaterThanOrEqualTo(2);
    assertThat(sum(metrics, "relay_circuit_circuits_opened_total")).isGreaterThanOrEqualTo(1);
  }

  private static double sum(final PrometheusTextParser.Exposition metrics, final String name) {
    return metrics.samples(name).stream().mapToDouble(PrometheusTextParser.Sample::value).sum();
  }

  private void liveReplication(final String relayAddress, final String tag) {
    final HeadlessBrowser browser = HeadlessBrowser.builder()
        .screenshots(Path.of("target", "browser-screenshots")).start();
    toClose.add(browser);
    final String query = "&relay=" + encode(relayAddress) + "&topic=" + encode(TOPIC);
    final BrowserPage a = browser.open("webrtc-" + tag + "-A", false, "/live.html?role=A" + query);
    toClose.add(a);
    final BrowserPage b = browser.open("webrtc-" + tag + "-B", false, "/live.html?role=B" + query);
    toClose.add(b);
    final String peerA = a.nextReport("reserved", STEP).get("peerId").asText();
    final String peerB = b.nextReport("reserved", STEP).get("peerId").asText();
    // Discovery, the relayed dial and the WebRTC upgrade, seen from both sides.
    assertThat(a.nextReport("direct", STEP).get("peer").asText()).isEqualTo(peerB);
    assertThat(b.nextReport("direct", STEP).get("peer").asText()).isEqualTo(peerA);

    final String address = a.eval("createDatabase()", STEP).asText();
    b.eval("openDatabase(" + JSON.valueToTree(address) + ", " + ENTRIES + ")", STEP);
    // A writes once it knows B follows the database, so every entry is live traffic to B.
    await().atMost(STEP).pollInterval(Duration.ofMillis(200)).until(() ->
        a.eval("subscribers()", STEP).toString().contains(peerB));
    a.eval("write(" + ENTRIES + ")", STEP);
    final JsonNode replicated = b.nextReport("replicated", STEP);

    final List<String> texts = new ArrayList<>();
    replicated.get("entries").forEach(t -> texts.add(t.asText()));
    assertThat(texts).containsExactlyElementsOf(IntStream.rangeClosed(1, ENTRIES)
        .mapToObj(i -> "live entry " + i + " from A").toList());
    // B's connection to A: WebRTC, not limited.
    final List<JsonNode> toA = new ArrayList<>();
    replicated.get("connections").forEach(c -> {
      if (c.get("peer").asText().equals(peerA)) {
        toA.add(c);
      }
    });
    assertThat(toA).as("B's connections to A").anySatisfy(c -> {
      assertThat(c.get("remoteAddr").asText()).contains("/webrtc");
      assertThat(c.get("limited").asBoolean()).isFalse();
    });
    // Every pubsub message of the database reached B from A directly, over WebRTC.
    final JsonNode messages = replicated.get("messages");
    assertThat(messages.size()).as("pubsub messages B received on the database topic")
        .isEqualTo(ENTRIES);
    messages.forEach(m -> {
      assertThat(m.get("from").asText()).as("the peer that sent B the message").isEqualTo(peerA);
      assertThat(m.get("via").toString()).contains("/webrtc");
    });
    // And the WebRTC ICE pair between the two browsers carried bytes. Chromium's stats may lag
    // behind the traffic (one CI run saw 0 bytes on the pair the messages had just crossed), so
    // the pairs are read again until one shows bytes, within the step's time.
    final AtomicReference<JsonNode> rtc = new AtomicReference<>(replicated.get("rtc"));
    try {
      await().atMost(STEP).pollInterval(Duration.ofMillis(200)).until(() -> {
        if (hasBytes(rtc.get())) {
          return true;
        }
        rtc.set(b.eval("snapshot()", STEP).get("rtc"));
        return hasBytes(rtc.get());
      });
    } catch (final ConditionTimeoutException e) {
      throw new AssertionError("no WebRTC candidate pair of B received bytes within " + STEP
          + "; B's last pairs: " + rtc.get() + "; B's connections: "
          + replicated.get("connections"), e);
    }
    assertThat(rtc.get()).as("B's WebRTC candidate pairs").anySatisfy(pair -> {
      assertThat(pair.get("bytesReceived").asLong()).isPositive();
      // B's end is a host candidate on this machine's own address; A's is its host candidate
      // on the same address, or peer-reflexive when A's check came before its candidate did
      // (Chromium's stats then hide the address).
      assertThat(pair.get("local").asText()).endsWith(" host");
      assertThat(pair.get("remote").asText()).matches(".* (host|prflx)");
      if (!pair.get("remoteAddress").asText().isEmpty()) {
        assertThat(pair.get("remoteAddress").asText())
            .isEqualTo(pair.get("localAddress").asText());
      }
    });
    assertThat(a.errors()).noneMatch(e -> e.startsWith("uncaught"));
    assertThat(b.errors()).noneMatch(e -> e.startsWith("uncaught"));
  }

  private static boolean hasBytes(final JsonNode pairs) {
    for (final JsonNode pair : pairs) {
      if (pair.get("bytesReceived").asLong() > 0) {
        return true;
      }
    }
    return false;
  }

  private static String encode(final String value) {
    return URLEncoder.encode(value, StandardCharsets.UTF_8);
  }
}
