package io.relaypinner.relay.identity;

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
import io.relaypinner.testkit.JsPeer;
import io.relaypinner.testkit.NodeJs;
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
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * A passkey writer through the relay (interop/js/webauthn/passkey-peer.mjs on stacks B and C,
 * the real provider 0.3.1 behind a software authenticator): the writer's {@code webauthn}
 * identity (P-256 did:key, the passkey's proof checked here for real) writes an {@code events}
 * database whose access controller lists the did:key; the relay replicates it; the writer leaves;
 * a fresh reader connected only to the relay gets every entry. The same with a
 * {@code webauthn-varsig} writer (every entry a passkey assertion, judged against
 * {@code RELAY_WEBAUTHN_ORIGINS}).
 */
class RelayPasskeyJsInteropIT {
  private static final Duration LINE = Duration.ofSeconds(180);
  private static final int ENTRIES = 20;

  private final List<AutoCloseable> toClose = new ArrayList<>();

  @AfterEach
  void close() throws Exception {
    for (int i = toClose.size() - 1; i >= 0; i--) {
      toClose.get(i).close();
    }
  }

  @ParameterizedTest(name = "{0} {1}")
  @CsvSource({"stack-b, webauthn", "stack-b, webauthn-varsig", "stack-c, webauthn",
      "stack-c, webauthn-varsig"})
  void passkeyWriter_shouldReachAFreshReader_throughTheRelayAlone(final String stack,
      final String type, @TempDir final Path dir) throws Exception {
    final String varsig = type.equals("webauthn-varsig") ? "--varsig" : "--keystore";
    final PrivateKey key = Keys.generate(KeyType.ED25519, new SecureRandom());
    final NodeIdentity identity = new NodeIdentity(key, key.publicKey().peerId(),
        NodeIdentity.servingZone(key.publicKey().peerId(), "libp2p.direct"),
        NodeIdentity.Source.ENVIRONMENT);
    final RelayNode relay = new RelayNode(RelayConfig.builder().dataDir(dir)
        .metricsHost("127.0.0.1").metricsPort(0).listenIpv4("127.0.0.1").tcpPort(0).wsPort(0)
        .quicPort(0)
        .ipv6Disabled(true).webauthnOrigins(List.of("https://app.example.test")).build(),
        identity, new PrometheusRegistry(), Clock.systemUTC());
    toClose.add(relay);
    relay.start();
    final String address = relay.network().host().listenAddresses().stream()
        .filter(a -> !a.toString().endsWith("/ws")).findFirst().orElseThrow()
        .withPeerId(identity.peerId()).toString();

    final JsPeer writer = NodeJs.start(stack, "../webauthn/passkey-peer.mjs", "writer",
        "--dial", address, "--entries", String.valueOf(ENTRIES), varsig);
    toClose.add(writer);
    final JsonNode ready = writer.nextEvent("ready", LINE);
    assertThat(ready.get("type").asText()).isEqualTo(type);
    final String did = ready.get("id").asText();
    assertThat(did).startsWith("did:key:z");
    final OrbitDbAddress db = OrbitDbAddress.parse(ready.get("address").asText());

    final var replication = relay.replication().service();
    await().atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(200)).until(() ->
        replication.replicas().replica(db).map(r -> r.log().size()).orElse(0) == ENTRIES);
    writer.close();

    final JsPeer reader = NodeJs.start(stack, "../webauthn/passkey-peer.mjs", "reader",
        "--dial", address, "--open", db.toString(), "--count", String.valueOf(ENTRIES), varsig);
    toClose.add(reader);
    final JsonNode done = reader.nextEvent("done", LINE);
    assertThat(done.get("entries").asInt()).isEqualTo(ENTRIES);
    assertThat(done.get("writers")).hasSize(1);
    assertThat(done.get("writers").get(0).asText()).isEqualTo(did);

    final String metrics = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
        URI.create("http://127.0.0.1:" + relay.http().port().getAsInt() + "/metrics")).build(),
        HttpResponse.BodyHandlers.ofString()).body();
    assertThat(metrics).contains(
        "orbitdb_identity_verifications_total{result=\"valid\",type=\"" + type + "\"}");
  }
}
