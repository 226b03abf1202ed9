package io.relaypinner.relay.browser;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.relaypinner.libp2p.crypto.KeyType;
import io.relaypinner.libp2p.crypto.Keys;
import io.relaypinner.libp2p.crypto.PrivateKey;
import io.relaypinner.orbitdb.OrbitDbAddress;
import io.relaypinner.orbitdb.identity.webauthn.P256;
import io.relaypinner.relay.RelayNode;
import io.relaypinner.relay.config.RelayConfig;
import io.relaypinner.relay.identity.NodeIdentity;
import io.relaypinner.testkit.NodeJs;
import io.relaypinner.testkit.browser.BrowserPage;
import io.relaypinner.testkit.browser.HeadlessBrowser;
import java.io.IOException;
import java.io.OutputStream;
import java.math.BigInteger;
import java.net.InetSocketAddress;
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
import java.util.HexFormat;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A passkey identity made in a real browser: page A (interop/js/browser-passkey/pages/passkey.js,
 * served on {@code http://localhost:<port>}, a secure context whose host is a valid rpId) gets
 * Chromium's virtual authenticator (CDP {@code WebAuthn.addVirtualAuthenticator}: ctap2,
 * internal, user verification), creates a passkey and a {@code webauthn} OrbitDB identity with
 * the real provider 0.3.1 and writes entries through a relay configured with that origin
 * ({@code RELAY_WEBAUTHN_ORIGINS}; rpId its host), which verifies the passkey's assertion and
 * replicates the database. Page A closes; page B, a fresh profile connected only to the relay,
 * reads every entry and names the passkey's did:key as their writer.
 *
 * <p>Page A also makes 32 more assertions and reports their DER signatures: the virtual
 * authenticator, like hardware ones, does not normalise S to the lower half of the group order,
 * which is why the relay accepts either half (docs/identities.md). Screenshots:
 * {@code target/browser-screenshots/}.
 */
class BrowserPasskeyE2eIT {
  private static final Duration STEP = Duration.ofSeconds(180);
  private static final int ENTRIES = 10;
  private static final int ASSERTIONS = 32;

  private final HttpClient client = HttpClient.newBuilder()
      .version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(5)).build();
  private final List<AutoCloseable> toClose = new ArrayList<>();

  @AfterEach
  void close() throws Exception {
    for (int i = toClose.size() - 1; i >= 0; i--) {
      toClose.get(i).close();
    }
  }

  @Test
  void pageB_shouldReadEveryEntry_aPasskeyIdentityInPageAWroteThroughTheRelay(
      @TempDir final Path dir) throws Exception {
    final int pagePort = servePages(NodeJs.project("browser-passkey").resolve("dist"));
    final String origin = "http://localhost:" + pagePort;
    final PrivateKey key = Keys.generate(KeyType.ED25519, new SecureRandom());
    final NodeIdentity identity = new NodeIdentity(key, key.publicKey().peerId(),
        NodeIdentity.servingZone(key.publicKey().peerId(), "libp2p.direct"),
        NodeIdentity.Source.ENVIRONMENT);
    final RelayNode relay = new RelayNode(RelayConfig.builder().dataDir(dir.resolve("data"))
        .metricsHost("127.0.0.1").metricsPort(0).listenIpv4("127.0.0.1").tcpPort(0).wsPort(0)
        .quicPort(0)
        .ipv6Disabled(true).webauthnOrigins(List.of(origin)).build(),
        identity, new PrometheusRegistry(), Clock.systemUTC());
    toClose.add(relay);
    relay.start();
    final String relayAddress = relay.network().host().listenAddresses().stream()
        .filter(a -> a.toString().endsWith("/ws")).findFirst().orElseThrow()
        .withPeerId(identity.peerId()).toString();

    final HeadlessBrowser browser = HeadlessBrowser.builder()
        .screenshots(Path.of("target", "browser-screenshots")).start();
    toClose.add(browser);

    // Page A: the passkey, the identity, the entries; closed once the relay holds them all.
    final BrowserPage writer = browser.open("passkey-A-writer", URI.create(origin
        + "/passkey.html?role=writer&relay=" + encode(relayAddress) + "&entries=" + ENTRIES
        + "&assertions=" + ASSERTIONS));
    toClose.add(writer);
    writer.nextReport("connected", STEP);
    assertThat(writer.addVirtualAuthenticator(null, STEP)).isNotBlank();
    writer.eval("go()", STEP);
    final JsonNode written = writer.nextReport("written", STEP);
    assertThat(written.get("type").asText()).isEqualTo("webauthn");
    final String did = written.get("id").asText();
    assertThat(did).startsWith("did:key:z");
    final OrbitDbAddress address = OrbitDbAddress.parse(written.get("address").asText());
    await().atMost(STEP).pollInterval(Duration.ofMillis(250)).until(() ->
        relay.replication().service().replicas().replica(address)
            .map(r -> r.log().size()).orElse(0) == ENTRIES);
    assertThat(metrics(relay))
        .contains("orbitdb_identity_verifications_total{result=\"valid\",type=\"webauthn\"}");
    writer.close();
    assertThat(writer.screenshot()).isPresent();

    // What the authenticator signs with: S in both halves (32 signatures all in one half would
    // happen once in 2^31 runs).
    final BigInteger half = P256.N.shiftRight(1);
    final List<BigInteger> s = new ArrayList<>();
    written.get("signatures").forEach(h ->
        s.add(P256.parseDer(HexFormat.of().parseHex(h.asText())).orElseThrow()[1]));
    assertThat(s).hasSize(ASSERTIONS);
    assertThat(s).anyMatch(v -> v.compareTo(half) > 0).anyMatch(v -> v.compareTo(half) <= 0);

    // Page B: a new profile, only the relay to talk to.
    final BrowserPage reader = browser.open("passkey-B-reader", URI.create(origin
        + "/passkey.html?role=reader&relay=" + encode(relayAddress) + "&address="
        + encode(address.toString()) + "&entries=" + ENTRIES));
    toClose.add(reader);
    final JsonNode read = reader.nextReport("read", STEP);
    final List<String> texts = new ArrayList<>();
    read.get("entries").forEach(t -> texts.add(t.asText()));
    assertThat(texts).containsExactlyElementsOf(
        IntStream.rangeClosed(1, ENTRIES).mapToObj(i -> "passkey entry " + i).toList());
    assertThat(read.get("writers")).hasSize(1);
    assertThat(read.get("writers").get(0).asText()).isEqualTo(did);
    assertThat(reader.errors()).noneMatch(e -> e.startsWith("uncaught"));
    reader.close();
    assertThat(reader.screenshot()).isPresent();
  }

  /** Serves the bundled passkey page on 127.0.0.1 (opened as localhost); returns the port. */
  private int servePages(final Path dist) throws IOException {
    final HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    server.createContext("/", exchange -> serve(dist, exchange));
    server.start();
    toClose.add(() -> server.stop(0));
    return server.getAddress().getPort();
  }

  private static void serve(final Path dist, final HttpExchange exchange) throws IOException {
    final String name = exchange.getRequestURI().getPath().replaceFirst("^/", "");
    final Path file = dist.resolve(name).normalize();
    if (name.isEmpty() || !file.startsWith(dist) || !Files.isRegularFile(file)) {
      exchange.sendResponseHeaders(404, -1);
      exchange.close();
      return;
    }
    final String type = name.endsWith(".html") ? "text/html; charset=utf-8"
        : name.endsWith(".js") ? "text/javascript; charset=utf-8"
        : name.endsWith(".css") ? "text/css; charset=utf-8" : "application/octet-stream";
    exchange.getResponseHeaders().set("Content-Type", type);
    final byte[] body = Files.readAllBytes(file);
    exchange.sendResponseHeaders(200, body.length);
    try (OutputStream out = exchange.getResponseBody()) {
      out.write(body);
    }
  }

  private String metrics(final RelayNode relay) throws Exception {
    return client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
        + relay.http().port().getAsInt() + "/metrics")).timeout(Duration.ofSeconds(20)).build(),
        HttpResponse.BodyHandlers.ofString()).body();
  }

  private static String encode(final String value) {
    return URLEncoder.encode(value, StandardCharsets.UTF_8);
  }
}
