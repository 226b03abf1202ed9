package io.relaypinner.relay.network;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.relaypinner.libp2p.crypto.KeyType;
import io.relaypinner.libp2p.crypto.Keys;
import io.relaypinner.libp2p.crypto.PrivateKey;
import io.relaypinner.libp2p.protocol.relay.CircuitRelay;
import io.relaypinner.relay.RelayNode;
import io.relaypinner.relay.config.RelayConfig;
import io.relaypinner.relay.identity.NodeIdentity;
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
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The relay node as browsers use it: js-libp2p peers reach it over {@code /ws}, one reserves
 * with the limits of {@code RELAY_CIRCUIT_*}, the other dials it through {@code /p2p-circuit};
 * the circuit shows in {@code /metrics}.
 */
class RelayNodeCircuitJsInteropIT {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Duration NODE_TIMEOUT = Duration.ofSeconds(60);
  @TempDir
  Path tempDir;
  private RelayNode node;

  @AfterEach
  void stop() {
    if (node != null) {
      node.close();
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"stack-a", "stack-b", "stack-c"})
  void jsPeers_shouldReserveAndConnectThroughTheRelayNodeOverWebSockets(final String stack)
      throws Exception {
    final PrivateKey key = Keys.generate(KeyType.ED25519, new SecureRandom());
    node = new RelayNode(RelayConfig.fromEnvironment(java.util.Map.of(
        "DATASTORE_PATH", tempDir.toString(), "METRICS_HOST", "127.0.0.1", "METRICS_PORT", "0",
        "RELAY_LISTEN_IPV4", "127.0.0.1", "RELAY_TCP_PORT", "0", "RELAY_WS_PORT", "0",
        "RELAY_QUIC_PORT", "0",
        "RELAY_DISABLE_IPV6", "true", "RELAY_CIRCUIT_DEFAULT_DATA_LIMIT_BYTES", "4194304",
        "RELAY_CIRCUIT_DEFAULT_DURATION_LIMIT_MS", "600000")),
        new NodeIdentity(key, key.publicKey().peerId(), NodeIdentity.servingZone(
            key.publicKey().peerId(), "libp2p.direct"), NodeIdentity.Source.ENVIRONMENT),
        new PrometheusRegistry(), Clock.systemUTC());
    node.start();
    final String ws = node.network().advertisedAddresses().stream().map(Object::toString)
        .filter(a -> a.contains("/ws/")).findFirst().orElseThrow();
    try (JsPeer listener = NodeJs.start(stack, "../common/circuit-peer.mjs", "listen", ws)) {
      final JsonNode reserved = listener.nextEvent("reserved", NODE_TIMEOUT);
      final String circuit = reserved.get("addrs").get(0).asText();
      assertThat(circuit).startsWith(ws + "/p2p-circuit/p2p/");
      final JsonNode dial = JSON.readTree(NodeJs.run(stack, "../common/circuit-peer.mjs",
          NODE_TIMEOUT, "dial", circuit, "1048576").stdout());
      assertThat(dial.get("echoes").get(0).get("ok").asBoolean()).isTrue();
      assertThat(dial.get("limits").get("seconds").asLong()).isBetween(590L, 600L);
      final CircuitRelay relay = node.network().circuitRelay();
      assertThat(relay.engine().circuitsOpened()).isEqualTo(1);
      await().atMost(Duration.ofSeconds(10)).until(() -> relay.engine().openCircuits() == 0);
      final String metrics = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(
          "http://127.0.0.1:" + node.http().port().getAsInt() + "/metrics")).build(),
          HttpResponse.BodyHandlers.ofString()).body();
      assertThat(metrics).contains("relay_circuit_circuits_opened_total 1.0",
          "relay_circuit_reservations_active 1.0");
    }
  }
}
