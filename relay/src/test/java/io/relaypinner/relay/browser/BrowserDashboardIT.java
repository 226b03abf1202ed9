package io.relaypinner.relay.browser;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.relaypinner.libp2p.crypto.KeyType;
import io.relaypinner.libp2p.crypto.Keys;
import io.relaypinner.libp2p.crypto.PrivateKey;
import io.relaypinner.orbitdb.OrbitDbAddress;
import io.relaypinner.relay.RelayNode;
import io.relaypinner.relay.config.RelayConfig;
import io.relaypinner.relay.identity.NodeIdentity;
import io.relaypinner.testkit.JsPeer;
import io.relaypinner.testkit.NodeJs;
import io.relaypinner.testkit.browser.BrowserPage;
import io.relaypinner.testkit.browser.HeadlessBrowser;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
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
 * The status page ({@code GET /dashboard}) in real headless Chromium: a JS OrbitDB 4 writer
 * (interop/js/common/replication-peer.mjs on stack B) writes a database through the relay; the
 * page, loaded from the relay under its strict CSP with no console error, shows the live peer id
 * and the database, and its entry count rises when the writer adds an entry. Screenshot:
 * {@code target/browser-screenshots/dashboard.png}.
 */
class BrowserDashboardIT {
  private static final Duration STEP = Duration.ofSeconds(120);

  private final List<AutoCloseable> toClose = new ArrayList<>();

  @AfterEach
  void close() throws Exception {
    for (int i = toClose.size() - 1; i >= 0; i--) {
      toClose.get(i).close();
    }
  }

  @Test
  void dashboard_shouldShowThePeerIdAndADatabase_andUpdateWhenAnEntryArrives(
      @TempDir final Path dir) throws Exception {
    final PrivateKey key = Keys.generate(KeyType.ED25519, new SecureRandom());
    final NodeIdentity identity = new NodeIdentity(key, key.publicKey().peerId(),
        NodeIdentity.servingZone(key.publicKey().peerId(), "libp2p.direct"),
        NodeIdentity.Source.ENVIRONMENT);
    final RelayNode relay = new RelayNode(RelayConfig.builder().dataDir(dir.resolve("data"))
        .metricsHost("127.0.0.1").metricsPort(0).listenIpv4("127.0.0.1").tcpPort(0).wsPort(0)
        .quicPort(0)
        .ipv6Disabled(true).build(), identity, new PrometheusRegistry(), Clock.systemUTC());
    toClose.add(relay);
    relay.start();
    final String tcp = relay.network().host().listenAddresses().stream()
        .filter(a -> !a.toString().endsWith("/ws")).findFirst().orElseThrow()
        .withPeerId(identity.peerId()).toString();

    final JsPeer alice = NodeJs.start("stack-b", "../common/replication-peer.mjs", "alice",
        "--dial", tcp, "--files", "1", "--file-size", "2048", "--entries", "4");
    toClose.add(alice);
    final JsonNode ready = alice.nextEvent("ready", STEP);
    final String address = ready.get("dbs").get(0).get("address").asText();
    final int entries = ready.get("dbs").get(0).get("entries").asInt();
    final OrbitDbAddress parsed = OrbitDbAddress.parse(address);
    await().atMost(STEP).pollInterval(Duration.ofMillis(200)).until(() ->
        relay.replication().service().replicas().replica(parsed)
            .map(r -> r.log().size()).orElse(0) == entries);

    final URI url = URI.create("http://127.0.0.1:" + relay.http().port().getAsInt() + "/dashboard");
    final HttpResponse<String> raw = HttpClient.newHttpClient().send(
        HttpRequest.newBuilder(url).build(), HttpResponse.BodyHandlers.ofString());
    assertThat(raw.headers().firstValue("content-security-policy")).get().asString()
        .startsWith("default-src 'none'");
    // Self-contained: no asset from anywhere (the SVG namespace is a name, not a request).
    assertThat(raw.body().replace("http://www.w3.org/2000/svg", ""))
        .doesNotContain("http://", "https://", "src=", "href=", "<link", "@import", "url(");

    final HeadlessBrowser browser = HeadlessBrowser.builder()
        .screenshots(Path.of("target", "browser-screenshots")).start();
    toClose.add(browser);
    final BrowserPage page = browser.open("dashboard", url);
    toClose.add(page);
    final String peerId = identity.peerId().toBase58();
    await().atMost(STEP).pollInterval(Duration.ofMillis(250)).until(() ->
        page.eval("document.getElementById('peer-id').textContent", STEP).asText()
            .equals(peerId));
    final String cell = "(() => { const r = [...document.querySelectorAll('#databases tr')]"
        + ".find((t) => t.dataset.address === " + jsString(address) + ");"
        + " return r ? Number(r.querySelector('.entries').textContent) : -1 })()";
    await().atMost(STEP).pollInterval(Duration.ofMillis(250)).until(() ->
        page.eval(cell, STEP).asInt() == entries);

    alice.send("write 1");
    assertThat(alice.nextEvent("written", STEP).get("entries").asInt()).isEqualTo(entries + 1);
    await().atMost(STEP).pollInterval(Duration.ofMillis(250)).until(() ->
        page.eval(cell, STEP).asInt() == entries + 1);
    assertThat(page.eval("document.getElementById('state').className", STEP).asText())
        .isNotEqualTo("bad");
    assertThat(page.errors()).isEmpty();
    page.close();
    assertThat(page.screenshot()).isPresent();
  }

  private static String jsString(final String value) {
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'";
  }
}
