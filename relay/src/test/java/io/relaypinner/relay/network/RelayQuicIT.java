package io.relaypinner.relay.network;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.relaypinner.libp2p.crypto.KeyType;
import io.relaypinner.libp2p.crypto.Keys;
import io.relaypinner.libp2p.crypto.PrivateKey;
import io.relaypinner.libp2p.host.Connection;
import io.relaypinner.libp2p.host.Host;
import io.relaypinner.libp2p.host.HostConfig;
import io.relaypinner.libp2p.netty.EventLoops;
import io.relaypinner.libp2p.protocol.identify.IdentifyResult;
import io.relaypinner.libp2p.transport.quic.QuicTransport;
import io.relaypinner.multiformats.Multiaddr;
import io.relaypinner.relay.RelayNode;
import io.relaypinner.relay.config.RelayConfig;
import io.relaypinner.relay.identity.NodeIdentity;
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
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The relay listens on QUIC v1 ({@code RELAY_QUIC_PORT}, here ephemeral): {@code /multiaddrs}
 * lists the address under {@code byTransport.quic} and {@code best.quic}, and a Java host dials
 * that advertised address, identifies the relay and pings it. One relay for the class.
 */
class RelayQuicIT {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final SecureRandom RANDOM = new SecureRandom();
  private static final HttpClient HTTP = HttpClient.newHttpClient();
  private static EventLoops loops;
  private static RelayNode node;

  @TempDir
  static Path dataDir;

  @BeforeAll
  static void start() {
    loops = EventLoops.create(1, "relay-quic-clients");
    final RelayConfig config = RelayConfig.builder().dataDir(dataDir).metricsHost("127.0.0.1")
        .metricsPort(0).listenIpv4("127.0.0.1").tcpPort(0).wsPort(0).quicPort(0)
        .ipv6Disabled(true).build();
    final PrivateKey key = Keys.generate(KeyType.ED25519, RANDOM);
    node = new RelayNode(config, new NodeIdentity(key, key.publicKey().peerId(),
        NodeIdentity.servingZone(key.publicKey().peerId(), "libp2p.direct"),
        NodeIdentity.Source.ENVIRONMENT), new PrometheusRegistry(), Clock.systemUTC());
    node.start();
  }

  @AfterAll
  static void stop() {
    if (node != null) {
      node.close();
    }
    loops.shutdownGracefully(Duration.ofSeconds(2));
  }

  @Test
  void multiaddrs_shouldListTheQuicAddress_andAJavaHostShouldDialItIdentifyAndPing()
      throws Exception {
    assertThat(QuicTransport.isAvailable()).as("native QUIC: %s",
        QuicTransport.unavailabilityCause()).isTrue();
    final JsonNode record = JSON.readTree(HTTP.send(HttpRequest.newBuilder(URI.create(
        "http://127.0.0.1:" + node.http().port().getAsInt() + "/multiaddrs")).build(),
        HttpResponse.BodyHandlers.ofString()).body());
    final List<String> quic = new ArrayList<>();
    record.get("byTransport").get("quic").forEach(address -> quic.add(address.asText()));
    final String peer = node.network().host().peerId().toBase58();
    assertThat(quic).singleElement().asString()
        .matches("/ip4/127\\.0\\.0\\.1/udp/\\d+/quic-v1/p2p/" + peer);
    assertThat(record.get("best").get("quic").asText()).isEqualTo(quic.get(0));
    assertThat(record.get("all").toString()).contains(quic.get(0));
    // The spec's three keys are unchanged: no QUIC address among them.
    assertThat(record.get("byTransport").get("tcp").toString()).doesNotContain("quic");
    assertThat(record.get("best").get("tcp").asText()).contains("/tcp/");

    try (Host client = new Host(Keys.generate(KeyType.ED25519, RANDOM), HostConfig.DEFAULT,
        loops, Clock.systemUTC())) {
      final Connection connection = client.dial(Multiaddr.parse(quic.get(0)))
          .get(10, TimeUnit.SECONDS);
      assertThat(connection.muxerProtocol()).isEqualTo("quic-v1");
      final IdentifyResult about = client.identify(connection).get(10, TimeUnit.SECONDS);
      assertThat(about.agentVersion()).hasValueSatisfying(v -> assertThat(v).startsWith(
          "relay-pinner/"));
      assertThat(about.listenAddrs().stream().map(Multiaddr::withoutPeerId))
          .contains(Multiaddr.parse(quic.get(0)).withoutPeerId());
      assertThat(client.ping(connection).get(10, TimeUnit.SECONDS)).isPositive();
    }
  }
}
