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
import io.relaypinner.relay.testing.TestCertificates;
import io.relaypinner.testkit.browser.BrowserPage;
import io.relaypinner.testkit.browser.HeadlessBrowser;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What the browser harness (io.relaypinner.testkit.browser) promises other tests: it trusts
 * exactly the test certificates it is given (an https page served with one reaches the relay's
 * {@code wss://} port when the relay's certificate is trusted too, and is refused when the relay
 * serves a certificate nobody trusted: the SPKI list is a pin, not a switch that ignores
 * certificate errors), and a CDP virtual authenticator lets a page create a WebAuthn credential.
 */
class BrowserHarnessIT {
  private static final Duration STEP = Duration.ofSeconds(60);
  private static final ObjectMapper JSON = new ObjectMapper();

  private final List<AutoCloseable> toClose = new ArrayList<>();

  @AfterEach
  void close() throws Exception {
    for (int i = toClose.size() - 1; i >= 0; i--) {
      toClose.get(i).close();
    }
  }

  @Test
  void httpsPage_shouldReachTheRelaysTlsPort_onlyWhenTheRelaysCertificateIsTrusted(
      @TempDir final Path dir) throws Exception {
    final Path pages = Files.createDirectories(dir.resolve("pages-tls"));
    TestCertificates.selfSigned("EC", "pages").writeTo(pages);
    final Path trustedRelay = Files.createDirectories(dir.resolve("relay-trusted"));
    TestCertificates.selfSigned("EC", "relay-trusted").writeTo(trustedRelay);
    final Path unknownRelay = Files.createDirectories(dir.resolve("relay-unknown"));
    TestCertificates.selfSigned("EC", "relay-unknown").writeTo(unknownRelay);

    final HeadlessBrowser browser = HeadlessBrowser.builder()
        .screenshots(Path.of("target", "browser-screenshots"))
        .httpsCertificate(pages.resolve("cert.pem"), pages.resolve("key.pem"))
        .trust(trustedRelay.resolve("cert.pem"))
        .start();
    toClose.add(browser);
    final BrowserPage page = browser.open("certificate-trust", true, "/blank.html");
    toClose.add(page);
    assertThat(page.eval("location.protocol + ' ' + isSecureContext", STEP).asText())
        .isEqualTo("https: true");

    assertThat(webSocket(page, relayTlsPort(dir.resolve("a"), trustedRelay))).isEqualTo("open");
    assertThat(webSocket(page, relayTlsPort(dir.resolve("b"), unknownRelay))).isEqualTo("error");
  }

  @Test
  void virtualAuthenticator_shouldLetAnHttpsPageCreateAWebAuthnCredential(@TempDir final Path dir) {
    final Path pages = dir.resolve("pages-tls");
    TestCertificates.selfSigned("EC", "pages").writeTo(createDirectories(pages));
    final HeadlessBrowser browser = HeadlessBrowser.builder()
        .screenshots(Path.of("target", "browser-screenshots"))
        .httpsCertificate(pages.resolve("cert.pem"), pages.resolve("key.pem"))
        .start();
    toClose.add(browser);
    // WebAuthn wants a domain as relying party id, so the page is opened as https://localhost.
    final URI origin = browser.httpsOrigin().orElseThrow();
    final BrowserPage page = browser.open("webauthn",
        URI.create("https://localhost:" + origin.getPort() + "/blank.html"));
    toClose.add(page);
    assertThat(page.addVirtualAuthenticator(null, STEP)).isNotBlank();
    final JsonNode created = page.eval("navigator.credentials.create({ publicKey: {"
        + " rp: { id: 'localhost', name: 'relay-pinner test' },"
        + " user: { id: new Uint8Array([1, 2, 3, 4]), name: 'tester', displayName: 'Tester' },"
        + " challenge: crypto.getRandomValues(new Uint8Array(32)),"
        + " pubKeyCredParams: [{ type: 'public-key', alg: -7 }],"
        + " authenticatorSelection: { residentKey: 'required', userVerification: 'required' } } })"
        + ".then((c) => ({ type: c.type, idLength: c.rawId.byteLength }))", STEP);
    assertThat(created.get("type").asText()).isEqualTo("public-key");
    assertThat(created.get("idLength").asInt()).isPositive();
  }

  private static Path createDirectories(final Path dir) {
    try {
      return Files.createDirectories(dir);
    } catch (final java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  private static String webSocket(final BrowserPage page, final int port) {
    return page.eval("new Promise((resolve) => { const ws = new WebSocket('wss://127.0.0.1:"
        + port + "/'); ws.onopen = () => { ws.close(); resolve('open') };"
        + " ws.onerror = () => resolve('error') })", STEP).asText();
  }

  /** A relay serving {@code tls}'s certificate on its WebSocket port; returns the port. */
  private int relayTlsPort(final Path dir, final Path tls) throws Exception {
    final PrivateKey key = Keys.generate(KeyType.ED25519, new SecureRandom());
    final RelayNode relay = new RelayNode(RelayConfig.builder().dataDir(dir).tlsCertDir(tls)
        .metricsHost("127.0.0.1").metricsPort(0).listenIpv4("127.0.0.1").tcpPort(0).wsPort(0)
        .quicPort(0)
        .ipv6Disabled(true).build(),
        new NodeIdentity(key, key.publicKey().peerId(),
            NodeIdentity.servingZone(key.publicKey().peerId(), "libp2p.direct"),
            NodeIdentity.Source.ENVIRONMENT), new PrometheusRegistry(), Clock.systemUTC());
    toClose.add(relay);
    relay.start();
    relay.http().certificates().checkNow();
    final HttpClient client = HttpClient.newHttpClient();
    final String address = await().atMost(STEP).until(() -> {
      final JsonNode record = JSON.readTree(client.send(HttpRequest.newBuilder(URI.create(
          "http://127.0.0.1:" + relay.http().port().getAsInt() + "/multiaddrs")).build(),
          HttpResponse.BodyHandlers.ofString()).body());
      for (final JsonNode a : record.get("byTransport").get("websocket")) {
        if (a.asText().contains("/tls/ws/")) {
          return a.asText();
        }
      }
      return null;
    }, a -> a != null);
    return Integer.parseInt(address.split("/")[4]);
  }
}
