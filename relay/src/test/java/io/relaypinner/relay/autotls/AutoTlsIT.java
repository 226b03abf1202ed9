package io.relaypinner.relay.autotls;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.relaypinner.libp2p.crypto.KeyType;
import io.relaypinner.libp2p.crypto.Keys;
import io.relaypinner.libp2p.crypto.PrivateKey;
import io.relaypinner.relay.RelayNode;
import io.relaypinner.relay.config.RelayConfig;
import io.relaypinner.relay.identity.NodeIdentity;
import io.relaypinner.testkit.NodeJs;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.security.cert.X509Certificate;
import java.time.Clock;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import javax.net.ssl.SNIHostName;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

/**
 * AutoTLS end to end on loopback: Debian's pebble (ACME) and pebble-challtestsrv (DNS), the
 * {@link BrokerDouble} (PeerID auth, dial-back, TXT record into challtestsrv), and a relay forced
 * to run AutoTLS without a public address. The relay obtains {@code *.<zone>}, serves it on WSS
 * and HTTPS (checked with pebble's root and the zone host name), advertises the
 * {@code /tls/sni/127-0-0-1.<zone>/ws} address that a js-libp2p stack B peer then dials; it
 * renews the short-lived certificate, and a broker refusal, a broker that hangs and a failed ACME
 * validation each back off and log one WARN line while HTTPS keeps answering.
 */
class AutoTlsIT {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String DOMAIN = "libp2p.direct";
  /** Pebble's certificates live this long; the relay renews at half of it. */
  private static final long VALIDITY_SECONDS = 60;
  @TempDir
  Path tempDir;
  private Pebble pebble;
  private BrokerDouble broker;
  private RelayNode node;
  private final ListAppender<ILoggingEvent> logs = new ListAppender<>();
  private final ch.qos.logback.classic.Logger logger =
      (ch.qos.logback.classic.Logger) LoggerFactory.getLogger(AutoTlsService.class);

  @AfterEach
  void stop() {
    logger.detachAppender(logs);
    if (node != null) {
      node.close();
    }
    if (broker != null) {
      broker.close();
    }
    if (pebble != null) {
      pebble.close();
    }
  }

  @Test
  void relay_shouldObtainServeAndRenewItsCertificate_andBackOffOnEachFailure() throws Exception {
    pebble = new Pebble(Files.createDirectories(tempDir.resolve("pebble")), VALIDITY_SECONDS);
    broker = new BrokerDouble(DOMAIN, pebble.challtestsrv());
    logs.start();
    logger.addAppender(logs);
    logger.setLevel(Level.DEBUG);
    final NodeIdentity identity = newIdentity();
    final String zone = identity.autoTlsServingZone();
    final RelayConfig config = relayConfig();
    node = new RelayNode(config, identity, new PrometheusRegistry(), Clock.systemUTC());
    node.useAutoTlsOptions(new AutoTlsOptions(new AutoTlsEngine.Config(Duration.ofSeconds(1),
        Duration.ofSeconds(2), Duration.ofSeconds(5), 0.5), Duration.ofSeconds(2),
        Duration.ofSeconds(30), Optional.of(pebble.listenerTrust())));
    node.start();
    // Start-up does not wait for the certificate.
    assertThat(node.http().port()).isPresent();

    await().atMost(Duration.ofSeconds(60)).until(() -> node.http().httpsPort().isPresent());
    // From now on the broker refuses: the renewal due at half the 60 s validity must not succeed
    // while the slower steps below (a Node.js dial on a loaded machine) are still running.
    broker.mode(BrokerDouble.Mode.REFUSE);
    // Pebble reuses a valid authorization for a new order of the same account 1 % of the time
    // even with PEBBLE_AUTHZREUSE=0 (it creates a new one when rand.Intn(100) > 0): such an
    // order is ready at once, without the broker, and a renewal meant to fail succeeded (seen
    // in CI). The attempts below therefore run under a new ACME account, which has no valid
    // authorization: the relay creates the account key again when it finds none.
    Files.delete(tempDir.resolve("data/autotls/acme-account-key.pem"));
    final AutoTlsService autoTls = node.http().autoTls().orElseThrow();
    assertThat(autoTls.snapshot().obtained()).isEqualTo(1);
    assertThat(autoTls.snapshot().state()).isEqualTo(AutoTlsEngine.State.VALID);
    final X509Certificate root = Pebble.parse(pebble.rootPem());
    final SSLContext trust = Pebble.trusting(List.of(root));
    final String host = "127-0-0-1." + zone;
    final int wsPort = webSocketPort();

    // HTTPS with the zone host name, verified against pebble's root.
    final JsonNode health = JSON.readTree(httpsGet(trust, node.http().httpsPort().getAsInt(), host,
        "/health"));
    assertThat(health.at("/metricsHttps/listening").asBoolean()).isTrue();
    assertThat(health.at("/metricsHttps/exampleUrl").asText())
        .isEqualTo("https://" + host + ":" + node.http().httpsPort().getAsInt() + "/health");
    // WSS on the libp2p WebSocket port: the same certificate.
    final String first = fingerprint(handshake(trust, wsPort, host));
    assertThat(fingerprint(handshake(trust, node.http().httpsPort().getAsInt(), host)))
        .isEqualTo(first);

    // /multiaddrs advertises the AutoTLS form js-libp2p and Kubo dial.
    final String sni = "/ip4/127.0.0.1/tcp/" + wsPort + "/tls/sni/" + host + "/ws/p2p/"
        + identity.peerId().toBase58();
    final JsonNode multiaddrs = JSON.readTree(httpGet("/multiaddrs"));
    assertThat(multiaddrs.path("all").toString()).contains(sni);
    assertThat(multiaddrs.path("best").path("websocket").asText()).isEqualTo(sni);

    // A js-libp2p (stack B) peer dials it, trusting pebble's root.
    final Path rootFile = tempDir.resolve("pebble-root.pem");
    Files.writeString(rootFile, pebble.rootPem());
    final Path dnsShim = NodeJs.project("common").resolve("autotls-dns.mjs").toAbsolutePath();
    final JsonNode js = JSON.readTree(NodeJs.run("stack-b", "../common/libp2p-peer.mjs",
        Duration.ofSeconds(90), Map.of("NODE_EXTRA_CA_CERTS", rootFile.toString(),
            "NODE_OPTIONS", "--import=" + dnsShim.toUri()), "dial", sni, "1").stdout());
    assertThat(js.get("remotePeer").asText()).isEqualTo(identity.peerId().toBase58());
    assertThat(js.get("remoteAddr").asText()).contains("/tls/sni/" + host);

    // Renewal attempts that fail, one kind after the other, while HTTPS keeps answering.
    for (final var step : List.of(
        Map.entry(BrokerDouble.Mode.REFUSE, FailureReason.BROKER_REFUSED),
        Map.entry(BrokerDouble.Mode.HANG, FailureReason.BROKER_TIMEOUT),
        Map.entry(BrokerDouble.Mode.WRONG_TXT, FailureReason.ACME_ERROR))) {
      broker.mode(step.getKey());
      await().atMost(Duration.ofSeconds(60)).until(() ->
          autoTls.snapshot().failures().getOrDefault(step.getValue(), 0L) >= 2);
      assertThat(warnings(step.getValue())).as("WARN lines for %s", step.getValue())
          .isEqualTo(1);
      assertThat(JSON.readTree(httpsGet(trust, node.http().httpsPort().getAsInt(), host, "/health"))
          .at("/metricsHttps/listening").asBoolean()).isTrue();
    }
    assertThat(autoTls.snapshot().obtained()).isEqualTo(1);
    assertThat(httpGet("/metrics")).contains("relay_autotls_failures_total{reason=\"broker_refused\"}");

    // The broker works again: the next attempt renews, and both ports serve the new one.
    broker.mode(BrokerDouble.Mode.OK);
    await().atMost(Duration.ofSeconds(60)).until(() -> autoTls.snapshot().obtained() == 2);
    await().atMost(Duration.ofSeconds(10)).until(() ->
        !fingerprint(handshake(trust, wsPort, host)).equals(first));
    assertThat(fingerprint(handshake(trust, node.http().httpsPort().getAsInt(), host)))
        .isNotEqualTo(first);
    assertThat(autoTls.snapshot().state()).isEqualTo(AutoTlsEngine.State.VALID);
    assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(
        tempDir.resolve("data/autotls/acme-account-key.pem")))).isEqualTo("rw-------");
    assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(
        tempDir.resolve("data/tls/key.pem")))).isEqualTo("rw-------");

    // A restart resumes from the stored certificate: HTTPS comes up without a new order.
    final String renewed = fingerprint(handshake(trust, wsPort, host));
    node.close();
    node = new RelayNode(config, identity, new PrometheusRegistry(), Clock.systemUTC());
    node.useAutoTlsOptions(new AutoTlsOptions(AutoTlsEngine.Config.DEFAULT,
        Duration.ofSeconds(2), Duration.ofSeconds(30), Optional.of(pebble.listenerTrust())));
    final int acceptedBefore = broker.accepted.size();
    node.start();
    await().atMost(Duration.ofSeconds(20)).until(() -> node.http().httpsPort().isPresent()
        && node.http().autoTls().orElseThrow().snapshot().state() == AutoTlsEngine.State.VALID);
    assertThat(fingerprint(handshake(trust, node.http().httpsPort().getAsInt(), host)))
        .isEqualTo(renewed);
    assertThat(node.http().autoTls().orElseThrow().snapshot().obtained()).isZero();
    assertThat(broker.accepted).hasSize(acceptedBefore);
  }

  /**
   * With the browser harness: an {@code https://} page in headless Chromium dials the relay's
   * {@code /tls/sni/127-0-0-1.<zone>/ws} address, i.e. {@code wss://127-0-0-1.<zone>:<port>}
   * (Chromium's host resolver maps the zone to 127.0.0.1, as the libp2p.direct DNS maps the
   * label), with the certificate the relay obtained. Chromium cannot be given pebble's root
   * without a system trust store, so the harness trusts the obtained leaf's public key (its
   * SPKI pin); the host name is the real one.
   */
  @Test
  void httpsPage_shouldDialTheRelayOverWss_withTheAutoTlsCertificate() throws Exception {
    pebble = new Pebble(Files.createDirectories(tempDir.resolve("pebble")), 3600);
    broker = new BrokerDouble(DOMAIN, pebble.challtestsrv());
    final NodeIdentity identity = newIdentity();
    node = new RelayNode(relayConfig(), identity, new PrometheusRegistry(), Clock.systemUTC());
    node.useAutoTlsOptions(new AutoTlsOptions(AutoTlsEngine.Config.DEFAULT,
        Duration.ofSeconds(5), Duration.ofSeconds(30), Optional.of(pebble.listenerTrust())));
    node.start();
    await().atMost(Duration.ofSeconds(60)).until(() -> node.http().autoTls().orElseThrow()
        .snapshot()
        .obtained() == 1 && node.http().certificates().certificate().isPresent());
    final String sni = "/ip4/127.0.0.1/tcp/" + webSocketPort() + "/tls/sni/127-0-0-1."
        + identity.autoTlsServingZone() + "/ws/p2p/" + identity.peerId().toBase58();
    final Path pages = Files.createDirectories(tempDir.resolve("pages-tls"));
    io.relaypinner.relay.testing.TestCertificates.selfSigned("EC", "pages").writeTo(pages);
    try (io.relaypinner.testkit.browser.HeadlessBrowser browser =
        io.relaypinner.testkit.browser.HeadlessBrowser.builder()
            .screenshots(Path.of("target", "browser-screenshots"))
            .httpsCertificate(pages.resolve("cert.pem"), pages.resolve("key.pem"))
            .trust(tempDir.resolve("data/tls/cert.pem"))
            .hostResolverRules("MAP *." + DOMAIN + " 127.0.0.1").start();
        io.relaypinner.testkit.browser.BrowserPage page = browser.open("autotls", true,
            "/autotls.html?relay=" + java.net.URLEncoder.encode(sni, StandardCharsets.UTF_8))) {
      final JsonNode connected = page.nextReport("connected", Duration.ofSeconds(90));
      assertThat(connected.get("remotePeer").asText()).isEqualTo(identity.peerId().toBase58());
      assertThat(connected.get("remoteAddr").asText()).contains("/tls/sni/127-0-0-1.");
      assertThat(connected.get("secure").asBoolean()).isTrue();
    }
  }

  private static NodeIdentity newIdentity() {
    final PrivateKey key = Keys.generate(KeyType.ED25519, new SecureRandom());
    return new NodeIdentity(key, key.publicKey().peerId(),
        NodeIdentity.servingZone(key.publicKey().peerId(), DOMAIN),
        NodeIdentity.Source.ENVIRONMENT);
  }

  /** A relay on loopback forced to run AutoTLS against pebble and the broker double. */
  private RelayConfig relayConfig() {
    return RelayConfig.builder().dataDir(tempDir.resolve("data"))
        .metricsHost("127.0.0.1").metricsPort(0).listenIpv4("127.0.0.1").tcpPort(0).wsPort(0)
        .quicPort(0)
        .ipv6Disabled(true).metricsHttpsEnabled(true).metricsHttpsPort(0)
        .autoTlsForced(true).autoTlsAcmeDirectory(pebble.directory())
        .autoTlsBrokerUrl(broker.url()).build();
  }

  private long warnings(final FailureReason reason) {
    return logs.list.stream().filter(e -> e.getLevel() == Level.WARN)
        .filter(e -> e.getFormattedMessage().contains("(" + reason.label() + ")")).count();
  }

  private int webSocketPort() {
    return node.network().host().listenAddresses().stream()
        .map(Object::toString).filter(a -> a.contains("/ws"))
        .map(a -> Integer.parseInt(a.split("/")[4])).findFirst().orElseThrow();
  }

  private String httpGet(final String path) throws Exception {
    return HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
        + node.http().port().getAsInt() + path)).build(), HttpResponse.BodyHandlers.ofString())
        .body();
  }

  /** A TLS handshake to 127.0.0.1:port with SNI {@code host}, verifying chain and host name. */
  private static SSLSocket handshake(final SSLContext trust, final int port, final String host)
      throws IOException {
    final SSLSocket socket = (SSLSocket) trust.getSocketFactory().createSocket(
        new Socket("127.0.0.1", port), host, port, true);
    final SSLParameters parameters = socket.getSSLParameters();
    parameters.setEndpointIdentificationAlgorithm("HTTPS");
    parameters.setServerNames(List.of(new SNIHostName(host)));
    socket.setSSLParameters(parameters);
    socket.setSoTimeout(10_000);
    socket.startHandshake();
    return socket;
  }

  private static String fingerprint(final SSLSocket socket) throws Exception {
    try (socket) {
      return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(
          socket.getSession().getPeerCertificates()[0].getEncoded()));
    }
  }

  private static String httpsGet(final SSLContext trust, final int port, final String host,
      final String path) throws Exception {
    try (SSLSocket socket = handshake(trust, port, host)) {
      final OutputStream out = socket.getOutputStream();
      out.write(("GET " + path + " HTTP/1.1\r\nHost: " + host + ":" + port
          + "\r\nConnection: close\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
      out.flush();
      final InputStream in = socket.getInputStream();
      final String response = new String(in.readAllBytes(), StandardCharsets.UTF_8);
      assertThat(response).startsWith("HTTP/1.1 200");
      return response.substring(response.indexOf("\r\n\r\n") + 4);
    }
  }
}
