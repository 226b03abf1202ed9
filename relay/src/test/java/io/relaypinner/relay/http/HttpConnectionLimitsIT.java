package io.relaypinner.relay.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.relaypinner.common.budget.Resource;
import io.relaypinner.libp2p.crypto.KeyType;
import io.relaypinner.libp2p.crypto.Keys;
import io.relaypinner.libp2p.crypto.PrivateKey;
import io.relaypinner.relay.RelayNode;
import io.relaypinner.relay.config.RelayConfig;
import io.relaypinner.relay.identity.NodeIdentity;
import io.relaypinner.relay.testing.PrometheusTextParser;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.net.URI;
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
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The HTTP listener's connection caps from the node budget, performed against a relay node:
 * silent connections from 127.0.0.2 (Linux routes all of 127/8 to lo) hold their IP's share and
 * no more, while 127.0.0.1 is served; a trusted proxy (127.0.0.3 in
 * {@code RELAY_TRUSTED_PROXIES}) goes beyond the per-IP share up to the total only.
 */
class HttpConnectionLimitsIT {
  private static final int PER_IP = 4;
  private static final int TOTAL = 12;

  private final SecureRandom random = new SecureRandom();
  private final List<Socket> sockets = new ArrayList<>();
  private RelayNode node;
  private int port;
  @TempDir
  Path dataDir;

  @AfterEach
  void close() throws IOException {
    for (final Socket socket : sockets) {
      socket.close();
    }
    if (node != null) {
      node.close();
    }
  }

  private Socket open(final String from) throws IOException {
    final Socket socket = new Socket();
    sockets.add(socket);
    socket.bind(new InetSocketAddress(from, 0));
    socket.connect(new InetSocketAddress("127.0.0.1", port), 5_000);
    socket.setSoTimeout(5_000);
    return socket;
  }

  /** Whether {@code socket}'s GET /health is answered (else the relay closed it unanswered). */
  private static boolean served(final Socket socket) throws IOException {
    try {
      socket.getOutputStream().write(("GET /health HTTP/1.1\r\nHost: relay\r\n\r\n")
          .getBytes(StandardCharsets.US_ASCII));
      final InputStream in = socket.getInputStream();
      final byte[] status = in.readNBytes(12);
      return new String(status, StandardCharsets.US_ASCII).equals("HTTP/1.1 200");
    } catch (final SocketException | SocketTimeoutException e) {
      // Reset: closed at accept while we were writing.
      return false;
    }
  }

  @Test
  void connectionsBeyondAnIpsShare_shouldBeClosedAtAccept_whileOthersAndTrustedProxiesAreServed()
      throws Exception {
    final RelayConfig config = RelayConfig.fromEnvironment(Map.of(
        "DATASTORE_PATH", dataDir.toString(), "METRICS_HOST", "127.0.0.1", "METRICS_PORT", "0",
        "RELAY_LISTEN_IPV4", "127.0.0.1", "RELAY_TCP_PORT", "0", "RELAY_WS_PORT", "0",
        "RELAY_DISABLE_IPV6", "true", "RELAY_MAX_CONNECTIONS_PER_IP", String.valueOf(PER_IP),
        "RELAY_HTTP_MAX_CONNECTIONS", String.valueOf(TOTAL),
        "RELAY_TRUSTED_PROXIES", "127.0.0.3")).toBuilder().quicPort(0).build();
    final PrivateKey key = Keys.generate(KeyType.ED25519, random);
    node = new RelayNode(config, new NodeIdentity(key, key.publicKey().peerId(),
        NodeIdentity.servingZone(key.publicKey().peerId(), "libp2p.direct"),
        NodeIdentity.Source.ENVIRONMENT), new PrometheusRegistry(), Clock.systemUTC());
    node.start();
    port = node.http().port().getAsInt();

    // The attacker's silent connections: its share, held without a byte sent.
    for (int i = 0; i < PER_IP; i++) {
      open("127.0.0.2");
    }
    await().atMost(Duration.ofSeconds(5)).until(() ->
        node.budget().http().used(Resource.CONNECTIONS) == PER_IP);
    // One more from there is closed at accept, unanswered.
    assertThat(served(open("127.0.0.2"))).isFalse();
    // Another address is served.
    assertThat(served(open("127.0.0.1"))).isTrue();

    // A trusted proxy: beyond the per-IP share, up to the total.
    final int proxied = TOTAL - PER_IP - 1;
    for (int i = 0; i < proxied; i++) {
      assertThat(served(open("127.0.0.3"))).as("proxied connection %d", i).isTrue();
    }
    assertThat(node.budget().http().used(Resource.CONNECTIONS)).isEqualTo(TOTAL);
    assertThat(served(open("127.0.0.3"))).as("beyond the total").isFalse();

    // A closed connection gives its slot back.
    sockets.get(0).close();
    await().atMost(Duration.ofSeconds(5)).until(() ->
        node.budget().http().used(Resource.CONNECTIONS) == TOTAL - 1);
    final PrometheusTextParser.Exposition metrics = PrometheusTextParser.parse(
        HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(
            "http://127.0.0.1:" + port + "/metrics")).build(),
            HttpResponse.BodyHandlers.ofString()).body());
    assertThat(metrics.samples("relay_resource_limit_hits_total")).anySatisfy(sample -> {
      assertThat(sample.labels()).containsEntry("scope", "http_ip")
          .containsEntry("resource", "connections");
      assertThat(sample.value()).isEqualTo(1.0);
    }).anySatisfy(sample -> {
      assertThat(sample.labels()).containsEntry("scope", "http")
          .containsEntry("resource", "connections");
      assertThat(sample.value()).isGreaterThanOrEqualTo(1.0);
    });
  }
}
