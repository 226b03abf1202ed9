package io.relaypinner.relay.network;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.relaypinner.libp2p.crypto.KeyType;
import io.relaypinner.libp2p.crypto.Keys;
import io.relaypinner.libp2p.crypto.PrivateKey;
import io.relaypinner.libp2p.host.Connection;
import io.relaypinner.libp2p.host.Host;
import io.relaypinner.libp2p.host.HostConfig;
import io.relaypinner.libp2p.netty.EventLoops;
import io.relaypinner.multiformats.Multiaddr;
import io.relaypinner.relay.RelayNode;
import io.relaypinner.relay.config.RelayConfig;
import io.relaypinner.relay.identity.NodeIdentity;
import io.relaypinner.relay.testing.PrometheusTextParser;
import io.relaypinner.relay.testing.TestCertificates;
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
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The relay's connection limits come from the environment and are exported as
 * {@code libp2p_limit_hits_total{limit}} and connection gauges on {@code /metrics};
 * {@code /multiaddrs} follows the WebSocket certificate.
 */
class Libp2pLimitsIT {
  private static final ObjectMapper JSON = new ObjectMapper();
  private final SecureRandom random = new SecureRandom();
  private final EventLoops loops = EventLoops.create(1, "limits-clients");
  private final HttpClient http = HttpClient.newHttpClient();
  private RelayNode node;
  @TempDir
  Path dataDir;

  @AfterEach
  void close() {
    if (node != null) {
      node.close();
    }
    loops.shutdownGracefully(Duration.ofSeconds(2));
  }

  @Test
  void connectionBeyondRelayMaxConnections_shouldBeRefused_andShowInMetrics() throws Exception {
    final RelayConfig config = RelayConfig.fromEnvironment(Map.of(
        "DATASTORE_PATH", dataDir.toString(), "METRICS_HOST", "127.0.0.1", "METRICS_PORT", "0",
        "RELAY_LISTEN_IPV4", "127.0.0.1", "RELAY_TCP_PORT", "0", "RELAY_WS_PORT", "0",
        "RELAY_QUIC_PORT", "0",
        "RELAY_DISABLE_IPV6", "true", "RELAY_MAX_CONNECTIONS", "1"));
    final PrivateKey key = Keys.generate(KeyType.ED25519, random);
    node = new RelayNode(config, new NodeIdentity(key, key.publicKey().peerId(),
        NodeIdentity.servingZone(key.publicKey().peerId(), "libp2p.direct"),
        NodeIdentity.Source.ENVIRONMENT), new PrometheusRegistry(), Clock.systemUTC());
    node.start();
    final Host relay = node.network().host();
    final Multiaddr target = relay.listenAddresses().get(0).withPeerId(relay.peerId());

    try (Host first = client(); Host second = client()) {
      first.dial(target).get(10, TimeUnit.SECONDS);
      assertThatThrownBy(() -> second.dial(target).get(10, TimeUnit.SECONDS))
          .isInstanceOf(ExecutionException.class);
      await().atMost(Duration.ofSeconds(10)).until(() -> relay.connectionCount() == 1);

      final PrometheusTextParser.Exposition metrics = PrometheusTextParser.parse(http.send(
          HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + node.http().port().getAsInt()
              + "/metrics")).build(), HttpResponse.BodyHandlers.ofString()).body());
      assertThat(metrics.types()).containsEntry("libp2p_limit_hits_total", "counter")
          .containsEntry("libp2p_connections", "gauge");
      assertThat(metrics.samples("libp2p_limit_hits_total")).anySatisfy(sample -> {
        assertThat(sample.labels()).isEqualTo(Map.of("limit", "max_connections"));
        assertThat(sample.value()).isEqualTo(1.0);
      }).anySatisfy(sample -> {
        assertThat(sample.labels()).isEqualTo(Map.of("limit", "stream_flood"));
        assertThat(sample.value()).isZero();
      });
      assertThat(metrics.samples("libp2p_connections")).anySatisfy(sample -> {
        assertThat(sample.labels()).isEqualTo(Map.of("direction", "inbound"));
        assertThat(sample.value()).isEqualTo(1.0);
      });
      assertThat(metrics.samples("libp2p_transport_connections")).singleElement()
          .satisfies(sample -> assertThat(sample.value()).isEqualTo(1.0));
    }
  }

  @Test
  void multiaddrs_shouldListTlsWebSocketAddresses_whileACertificateIsAvailable() throws Exception {
    final RelayConfig config = RelayConfig.fromEnvironment(Map.of(
        "DATASTORE_PATH", dataDir.toString(), "METRICS_HOST", "127.0.0.1", "METRICS_PORT", "0",
        "RELAY_LISTEN_IPV4", "127.0.0.1", "RELAY_TCP_PORT", "0", "RELAY_WS_PORT", "0",
        "RELAY_QUIC_PORT", "0",
        "RELAY_DISABLE_IPV6", "true"));
    final PrivateKey key = Keys.generate(KeyType.ED25519, random);
    node = new RelayNode(config, new NodeIdentity(key, key.publicKey().peerId(),
        NodeIdentity.servingZone(key.publicKey().peerId(), "libp2p.direct"),
        NodeIdentity.Source.ENVIRONMENT), new PrometheusRegistry(), Clock.systemUTC());
    // Only whether a context is there matters to /multiaddrs.
    final AtomicReference<Optional<SslContext>> certificate =
        new AtomicReference<>(Optional.empty());
    node.useWebSocketTls(certificate::get);
    node.start();

    assertThat(websocket(multiaddrs())).noneMatch(a -> a.contains("/tls/ws"));
    certificate.set(Optional.of(SslContextBuilder.forClient().build()));
    final List<String> withTls = websocket(multiaddrs());
    assertThat(withTls).hasSize(2);
    assertThat(withTls.get(0)).matches("/ip4/127\\.0\\.0\\.1/tcp/\\d+/tls/ws/p2p/.+");
    assertThat(withTls.get(1)).isEqualTo(withTls.get(0).replace("/tls/ws", "/ws"));
    certificate.set(Optional.empty());
    assertThat(websocket(multiaddrs())).hasSize(1);
  }

  @Test
  void webSocketPort_shouldServeTls_whenACertificateAppearsInTheCertificateDirectory()
      throws Exception {
    final RelayConfig config = RelayConfig.fromEnvironment(Map.of(
        "DATASTORE_PATH", dataDir.toString(), "METRICS_HOST", "127.0.0.1", "METRICS_PORT", "0",
        "RELAY_LISTEN_IPV4", "127.0.0.1", "RELAY_TCP_PORT", "0", "RELAY_WS_PORT", "0",
        "RELAY_QUIC_PORT", "0",
        "RELAY_DISABLE_IPV6", "true"));
    final PrivateKey key = Keys.generate(KeyType.ED25519, random);
    node = new RelayNode(config, new NodeIdentity(key, key.publicKey().peerId(),
        NodeIdentity.servingZone(key.publicKey().peerId(), "libp2p.direct"),
        NodeIdentity.Source.ENVIRONMENT), new PrometheusRegistry(), Clock.systemUTC());
    node.start();
    assertThat(websocket(multiaddrs())).noneMatch(a -> a.contains("/tls/ws"));

    final TestCertificates.Pair pair = TestCertificates.selfSigned("EC", "relay-test");
    pair.writeTo(config.tls().certDir());
    node.http().certificates().checkNow();
    final String tlsAddress = await().atMost(Duration.ofSeconds(30))
        .until(() -> websocket(multiaddrs()).stream().filter(a -> a.contains("/tls/ws"))
            .findFirst(), Optional::isPresent).orElseThrow();

    final SslContext trust = SslContextBuilder.forClient()
        .trustManager(pair.certificate()).build();
    try (Host client = new Host(Keys.generate(KeyType.ED25519, random),
        HostConfig.builder().webSocketClientTls(trust).build(), loops, Clock.systemUTC())) {
      final Connection connection = client.dial(Multiaddr.parse(tlsAddress))
          .get(20, TimeUnit.SECONDS);
      assertThat(connection.remotePeer()).isEqualTo(key.publicKey().peerId());
      assertThat(connection.remoteAddress().toString()).contains("/tls/ws");
      assertThat(client.ping(connection).get(10, TimeUnit.SECONDS)).isNotNull();
    }
  }

  private JsonNode multiaddrs() throws Exception {
    return JSON.readTree(http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
        + node.http().port().getAsInt() + "/multiaddrs")).build(),
        HttpResponse.BodyHandlers.ofString()).body());
  }

  private static List<String> websocket(final JsonNode record) {
    final List<String> out = new ArrayList<>();
    record.get("byTransport").get("websocket").forEach(node -> out.add(node.asText()));
    return out;
  }

  private Host client() {
    return new Host(Keys.generate(KeyType.ED25519, random), HostConfig.DEFAULT, loops,
        Clock.systemUTC());
  }
}
