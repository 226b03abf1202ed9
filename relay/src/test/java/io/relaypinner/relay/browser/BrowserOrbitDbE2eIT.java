package io.relaypinner.relay.browser;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.relaypinner.libp2p.crypto.KeyType;
import io.relaypinner.libp2p.crypto.Keys;
import io.relaypinner.libp2p.crypto.PrivateKey;
import io.relaypinner.orbitdb.OrbitDbAddress;
import io.relaypinner.relay.RelayNode;
import io.relaypinner.relay.config.RelayConfig;
import io.relaypinner.relay.identity.NodeIdentity;
import io.relaypinner.relay.testing.TestCertificates;
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
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Browser E2E 1: OrbitDB 4 in real headless Chromium pages (interop/js/browser/pages/orbitdb.js),
 * through a real {@link RelayNode} only. Page A, in a fresh profile, dials the relay, adds PNG
 * images of at least 1 MiB with @helia/unixfs and writes entries naming them to a new
 * {@code events} database, and is closed as soon as the relay lists every image pinned and holds
 * every entry. Page B, in another fresh profile, opens the database by address through the relay
 * and shows every entry and image; the test compares the images' SHA-256 with page A's.
 *
 * <p>Over {@code /tls/ws} from an {@code https://127.0.0.1} page (what users have: an https app
 * and a relay with a certificate; here a test certificate the browser trusts by its key, see
 * docs/interop.md) at full size, and over {@code /ws} from an {@code http://127.0.0.1} page at a
 * smaller size to keep the suite's time. Screenshots: {@code target/browser-screenshots/}.
 */
class BrowserOrbitDbE2eIT {
  private static final Duration STEP = Duration.ofSeconds(180);
  private static final int MIB = 1024 * 1024;
  private static final ObjectMapper JSON = new ObjectMapper();

  private final HttpClient client = HttpClient.newBuilder()
      .version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(5)).build();
  private final List<AutoCloseable> toClose = new ArrayList<>();

  @AfterEach
  void close() throws Exception {
    for (int i = toClose.size() - 1; i >= 0; i--) {
      toClose.get(i).close();
    }
  }

  @ParameterizedTest(name = "{0}: {1} entries, {2} images")
  @CsvSource({"tls/ws, 50, 5", "ws, 10, 2"})
  void pageB_shouldShowEveryEntryAndImage_pageAWroteThroughTheRelay(final String transport,
      final int entries, final int images, @TempDir final Path dir) throws Exception {
    final boolean secure = transport.equals("tls/ws");
    final Path tls = dir.resolve("tls");
    Files.createDirectories(tls);
    TestCertificates.selfSigned("EC", "relay-browser-test").writeTo(tls);
    final PrivateKey key = Keys.generate(KeyType.ED25519, new SecureRandom());
    final RelayNode relay = new RelayNode(RelayConfig.builder().dataDir(dir.resolve("data"))
        .tlsCertDir(tls).metricsHost("127.0.0.1").metricsPort(0).listenIpv4("127.0.0.1")
        .tcpPort(0).wsPort(0).quicPort(0).ipv6Disabled(true).build(),
        new NodeIdentity(key, key.publicKey().peerId(),
            NodeIdentity.servingZone(key.publicKey().peerId(), "libp2p.direct"),
            NodeIdentity.Source.ENVIRONMENT), new PrometheusRegistry(), Clock.systemUTC());
    toClose.add(relay);
    relay.start();
    relay.http().certificates().checkNow();
    final String suffix = secure ? "/tls/ws" : "/ws";
    final String relayAddress = await().atMost(Duration.ofSeconds(30)).until(() -> {
      for (final JsonNode a : get(relay, "/multiaddrs").get("byTransport").get("websocket")) {
        if (a.asText().contains(suffix + "/p2p/")) {
          return a.asText();
        }
      }
      return null;
    }, a -> a != null);

    final HeadlessBrowser browser = HeadlessBrowser.builder()
        .screenshots(Path.of("target", "browser-screenshots"))
        .httpsCertificate(tls.resolve("cert.pem"), tls.resolve("key.pem"))
        .start();
    toClose.add(browser);
    final String tag = secure ? "wss" : "ws";

    // Page A writes, and leaves once the relay has everything.
    final BrowserPage writer = browser.open("orbitdb-" + tag + "-A-writer", secure,
        "/orbitdb.html?role=writer&relay=" + encode(relayAddress) + "&entries=" + entries
            + "&images=" + images + "&imageBytes=" + MIB);
    toClose.add(writer);
    final JsonNode written = writer.nextReport("written", STEP);
    final String address = written.get("address").asText();
    final List<String> cids = new ArrayList<>();
    final List<String> hashes = new ArrayList<>();
    for (final JsonNode image : written.get("images")) {
      cids.add(image.get("cid").asText());
      hashes.add(image.get("sha256").asText());
      assertThat(image.get("bytes").asInt()).isGreaterThanOrEqualTo(MIB);
    }
    assertThat(cids).hasSize(images);
    await().atMost(STEP).pollInterval(Duration.ofMillis(250)).until(() ->
        texts(get(relay, "/pinning/stats").get("pinnedMediaCids")).containsAll(cids));
    final OrbitDbAddress parsed = OrbitDbAddress.parse(address);
    await().atMost(STEP).pollInterval(Duration.ofMillis(250)).until(() ->
        relay.replication().service().replicas().replica(parsed)
            .map(r -> r.log().size()).orElse(0) == entries);
    final Set<String> listed = new HashSet<>();
    get(relay, "/pinning/databases").get("databases")
        .forEach(d -> listed.add(d.get("address").asText()));
    assertThat(listed).contains(address);
    writer.close();
    assertThat(writer.screenshot()).isPresent();

    // Page B: a new profile, only the relay to talk to.
    final BrowserPage reader = browser.open("orbitdb-" + tag + "-B-reader", secure,
        "/orbitdb.html?role=reader&relay=" + encode(relayAddress) + "&address=" + encode(address)
            + "&entries=" + entries + "&images=" + encode(String.join(",", cids)));
    toClose.add(reader);
    final JsonNode read = reader.nextReport("read", STEP);
    final List<String> texts = new ArrayList<>();
    read.get("entries").forEach(t -> texts.add(t.asText()));
    assertThat(texts).containsExactlyElementsOf(
        IntStream.rangeClosed(1, entries).mapToObj(i -> "browser entry " + i).toList());
    final List<String> readHashes = new ArrayList<>();
    for (final JsonNode image : read.get("images")) {
      readHashes.add(image.get("sha256").asText());
      assertThat(image.get("bytes").asInt()).isGreaterThanOrEqualTo(MIB);
    }
    assertThat(readHashes).as("SHA-256 of the images page B fetched").isEqualTo(hashes);
    assertThat(reader.errors()).noneMatch(e -> e.startsWith("uncaught"));
    reader.close();
    assertThat(reader.screenshot()).isPresent();
  }

  private static String encode(final String value) {
    return URLEncoder.encode(value, StandardCharsets.UTF_8);
  }

  private JsonNode get(final RelayNode node, final String path) throws Exception {
    return JSON.readTree(client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
        + node.http().port().getAsInt() + path)).timeout(Duration.ofSeconds(20)).build(),
        HttpResponse.BodyHandlers.ofString()).body());
  }

  private static Set<String> texts(final JsonNode array) {
    final Set<String> out = new HashSet<>();
    array.forEach(n -> out.add(n.asText()));
    return out;
  }
}
