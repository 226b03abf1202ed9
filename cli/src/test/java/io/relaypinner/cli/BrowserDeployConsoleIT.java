package io.relaypinner.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.relaypinner.handoff.console.ConsoleTls;
import io.relaypinner.handoff.console.DeployConsole;
import io.relaypinner.handoff.deploy.DeployConfig;
import io.relaypinner.handoff.deploy.DeployController;
import io.relaypinner.handoff.deploy.ImageManifest;
import io.relaypinner.handoff.deploy.Libp2pPeerHandshake;
import io.relaypinner.handoff.deploy.LocalHostProvider;
import io.relaypinner.handoff.deploy.SshKeys;
import io.relaypinner.handoff.records.MessageVerifier;
import io.relaypinner.handoff.records.client.HttpRecordStore;
import io.relaypinner.handoff.records.service.LocalRecordStore;
import io.relaypinner.handoff.records.service.MemoryRecordStorage;
import io.relaypinner.handoff.records.service.RecordServer;
import io.relaypinner.handoff.records.service.RecordServiceConfig;
import io.relaypinner.handoff.wallet.EthPrivateKey;
import io.relaypinner.testkit.browser.BrowserPage;
import io.relaypinner.testkit.browser.HeadlessBrowser;
import java.io.InputStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.SecureRandom;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The deploy console ({@code relay-pinner deploy console}) in real headless Chromium on an
 * {@code https://} origin (a certificate from a throwaway local CA): the push button is refused
 * with the actionable mixed-content message before the local provider created anything, and
 * the pull button completes a deployment whose relay answers {@code /health} with its PeerId;
 * requests from another origin (403) or under another host name (421) are refused.
 * Screenshots: {@code target/browser-screenshots/console-https-*.png}.
 */
class BrowserDeployConsoleIT {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Duration STEP = Duration.ofSeconds(240);
  private static final List<String> GUEST_JVM = List.of("-Xmx256m", "-XX:+UseSerialGC",
      "-XX:TieredStopAtLevel=1");

  static {
    Runtime.getRuntime().addShutdownHook(new Thread(() -> ProcessHandle.current().descendants()
        .forEach(ProcessHandle::destroyForcibly)));
  }

  @TempDir
  Path dir;

  private RecordServer records;
  private LocalHostProvider local;
  private DeployConsole console;
  private HeadlessBrowser browser;
  private final Libp2pPeerHandshake handshake =
      new Libp2pPeerHandshake(new SecureRandom(), Duration.ofSeconds(5));

  @AfterEach
  void stop() {
    if (browser != null) {
      browser.close();
    }
    if (console != null) {
      console.close();
    }
    if (local != null) {
      local.list().forEach(i -> local.erase(i.id()));
    }
    if (records != null) {
      records.close();
    }
    handshake.close();
  }

  @Test
  void httpsConsole_shouldRefusePushBeforeAnyHost_andCompleteAPull() throws Exception {
    records = new RecordServer(RecordServiceConfig.builder().host("127.0.0.1").port(0).build(),
        new LocalRecordStore(new MemoryRecordStorage(), new MessageVerifier(), 100_000));
    final URI recordsUrl = URI.create("http://127.0.0.1:" + records.start().getPort());
    final HttpRecordStore store = new HttpRecordStore(recordsUrl);
    local = new LocalHostProvider(LocalHostProvider.Settings.defaults(dir.resolve("deployments"))
        .withGuestCommand(LocalHostProvider.currentJvmCommand(GUEST_JVM)), Clock.systemUTC());
    final EthPrivateKey wallet = EthPrivateKey.generate(new SecureRandom());
    final Path tls = dir.resolve("tls");
    TestCa.writeLeaf(tls);
    // What DeployConsoleCommand wires: one controller per deployment, the page's origin and
    // handoff in its configuration, the result recorded with the provider.
    console = new DeployConsole((handoff, origin, progress) -> {
      final DeployConfig config = DeployConfig.builder().handoff(handoff.orElse(null))
          .origin(origin).maxCandidates(2).setupAttempts(40)
          .setupBackoff(Duration.ofMillis(250)).pollInterval(Duration.ofMillis(300))
          .relayTimeout(Duration.ofSeconds(60)).registrationTimeout(Duration.ofSeconds(60))
          .ackTimeout(Duration.ofSeconds(90)).build();
      final var result = new DeployController(local, store, wallet, config, Clock.systemUTC(),
          progress, new SecureRandom(), handshake)
          .deploy(ImageManifest.BUILT_IN, recordsUrl, SshKeys.throwawayKey());
      result.relay().ifPresent(r -> local.recordDeployment(r.instanceId(), result.toJson()));
      return result;
    }, local, Optional.of(ConsoleTls.fromDirectory(tls)), Clock.systemUTC());
    final int port = console.start("127.0.0.1", 0).getPort();
    final URI url = URI.create("https://127.0.0.1:" + port + "/");

    browser = HeadlessBrowser.builder().screenshots(Path.of("target", "browser-screenshots"))
        .trust(tls.resolve("cert.pem")).start();

    // Push from an https:// page: refused up front, nothing created.
    final BrowserPage push = browser.open("console-https-push", url);
    assertThat(push.eval("location.protocol", STEP).asText()).isEqualTo("https:");
    push.eval("document.getElementById('deploy-push').click(), true", STEP);
    await().atMost(STEP).pollInterval(Duration.ofMillis(250)).until(() ->
        !push.eval("document.body.dataset.state || ''", STEP).asText().equals("")
            && !push.eval("document.body.dataset.state", STEP).asText().equals("running"));
    assertThat(push.eval("document.body.dataset.state", STEP).asText()).isEqualTo("failed");
    assertThat(push.eval("document.getElementById('message').textContent", STEP).asText())
        .contains("mixed content", "supportsBootstrapConfigAggregate", "No host was created");
    assertThat(local.list()).as("hosts the local provider created").isEmpty();
    assertThat(push.errors()).noneMatch(e -> e.startsWith("uncaught"));
    push.close();
    assertThat(push.screenshot()).isPresent();

    // Pull from the same https:// page: a relay that answers /health.
    final BrowserPage pull = browser.open("console-https-pull", url);
    pull.eval("document.getElementById('deploy-pull').click(), true", STEP);
    await().atMost(STEP).pollInterval(Duration.ofSeconds(1)).until(() ->
        !pull.eval("document.body.dataset.state || 'running'", STEP).asText()
            .equals("running"));
    assertThat(pull.eval("document.body.dataset.state", STEP).asText())
        .as(pull.eval("document.getElementById('log').textContent", STEP).asText())
        .isEqualTo("done");
    assertThat(pull.eval("document.getElementById('log').textContent", STEP).asText())
        .contains("deploy [", "publishing-config", "waiting-for-acknowledgement");
    final JsonNode result = pull.eval("window.lastResult", STEP);
    final String httpUrl = result.path("relay").path("httpUrl").asText();
    final String peerId = result.path("relay").path("peerId").asText();
    final HttpResponse<String> health = HttpClient.newHttpClient().send(
        HttpRequest.newBuilder(URI.create(httpUrl + "/health")).build(),
        HttpResponse.BodyHandlers.ofString());
    assertThat(health.statusCode()).isEqualTo(200);
    assertThat(JSON.readTree(health.body()).path("peerId").asText()).isEqualTo(peerId);
    // The list shows it; the page lists what the provider has.
    await().atMost(Duration.ofSeconds(30)).until(() -> pull.eval(
        "[...document.querySelectorAll('#deployments tr')].some((r) => r.textContent.includes("
            + "'" + peerId + "'))", STEP).asBoolean());
    assertThat(pull.errors()).noneMatch(e -> e.startsWith("uncaught"));
    pull.close();
    assertThat(pull.screenshot()).isPresent();

    // Another site cannot drive the console.
    final HttpResponse<String> forged = HttpClient.newBuilder()
        .sslContext(trusting(tls.resolve("cert.pem"))).build().send(
            HttpRequest.newBuilder(URI.create(url + "api/deploy"))
                .header("Origin", "https://evil.example").header("Content-Type",
                    "application/json").POST(HttpRequest.BodyPublishers.ofString(
                        "{\"handoff\":\"pull\"}")).build(), HttpResponse.BodyHandlers.ofString());
    assertThat(forged.statusCode()).isEqualTo(403);
    // Nor a site whose DNS name was rebound to the console's address.
    try (SSLSocket socket = (SSLSocket) trusting(tls.resolve("cert.pem")).getSocketFactory()
        .createSocket("127.0.0.1", port)) {
      socket.getOutputStream().write(("GET /api/deployments HTTP/1.1\r\nHost: evil.example:"
          + port + "\r\nConnection: close\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
      final String status = new String(socket.getInputStream().readNBytes(12),
          StandardCharsets.US_ASCII);
      assertThat(status).isEqualTo("HTTP/1.1 421");
    }
  }

  /** A context trusting the certificates of {@code pem} (the test CA's chain). */
  private static SSLContext trusting(final Path pem) throws Exception {
    final KeyStore trust = KeyStore.getInstance("PKCS12");
    trust.load(null, null);
    int i = 0;
    try (InputStream in = Files.newInputStream(pem)) {
      for (final Certificate c : CertificateFactory.getInstance("X.509")
          .generateCertificates(in)) {
        trust.setCertificateEntry("c" + i++, c);
      }
    }
    final TrustManagerFactory factory =
        TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
    factory.init(trust);
    final SSLContext context = SSLContext.getInstance("TLS");
    context.init(null, factory.getTrustManagers(), null);
    return context;
  }
}
