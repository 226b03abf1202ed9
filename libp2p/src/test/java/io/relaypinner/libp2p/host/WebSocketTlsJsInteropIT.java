package io.relaypinner.libp2p.host;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.netty.handler.ssl.SslContext;
import io.relaypinner.libp2p.crypto.KeyType;
import io.relaypinner.libp2p.crypto.Keys;
import io.relaypinner.libp2p.netty.EventLoops;
import io.relaypinner.multiformats.Multiaddr;
import io.relaypinner.multiformats.PeerId;
import io.relaypinner.testkit.NodeJs;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Real js-libp2p peers (stack A: libp2p 2 / websockets 9; stack B: libp2p 3 / websockets 10) dial
 * the Java host's WebSocket port over TLS ({@code /tls/ws}), trusting a test CA made for the run
 * and handed to Node with {@code NODE_EXTRA_CA_CERTS}: identify, ping and 8 concurrent 256 KiB echo streams.
 * The same port keeps serving plain {@code /ws}.
 */
class WebSocketTlsJsInteropIT {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Duration NODE_TIMEOUT = Duration.ofSeconds(90);
  private final EventLoops loops = EventLoops.create(2, "wss-interop");
  private final TestCertificates ca = TestCertificates.newAuthority("relay-pinner interop CA");
  private Host host;
  private Map<String, String> nodeEnv;
  @TempDir
  Path tempDir;

  @BeforeEach
  void startHost() throws Exception {
    final SslContext server = ca.serverContext();
    host = new Host(Keys.generate(KeyType.ED25519, new SecureRandom()), HostConfig.builder()
        .listenAddresses(List.of(Multiaddr.parse("/ip4/127.0.0.1/tcp/0/ws")))
        .webSocketTls(() -> Optional.of(server))
        .agentVersion("relay-pinner/interop-test").build(), loops, Clock.systemUTC());
    host.start().get(5, TimeUnit.SECONDS);
    EchoStreams.serve(host);
    nodeEnv = Map.of("NODE_EXTRA_CA_CERTS",
        ca.writeCaPem(tempDir.resolve("ca.pem")).toString());
  }

  @AfterEach
  void stopHost() {
    host.close();
    loops.shutdownGracefully(Duration.ofSeconds(3));
  }

  private Multiaddr address(final String suffix) {
    final String ws = host.listenAddresses().get(0).toString();
    return Multiaddr.parse(ws.substring(0, ws.length() - "/ws".length()) + suffix)
        .withPeerId(host.peerId());
  }

  @ParameterizedTest
  @ValueSource(strings = {"stack-a", "stack-b", "stack-c"})
  void jsDialsJavaOverTlsWebSocket_shouldIdentifyAndPing(final String stack) throws Exception {
    final JsonNode js = JSON.readTree(NodeJs.run(stack, "../common/libp2p-peer.mjs",
        NODE_TIMEOUT, nodeEnv, "dial", address("/tls/ws").toString(), "3").stdout());
    assertThat(js.get("remotePeer").asText()).isEqualTo(host.peerId().toBase58());
    assertThat(js.get("remoteAddr").asText()).contains("/tls/ws");
    assertThat(js.get("encryption").asText()).isEqualTo("/noise");
    assertThat(js.get("identify").get("agentVersion").asText())
        .isEqualTo("relay-pinner/interop-test");
    assertThat(js.get("rtts")).hasSize(3);
    final PeerId jsPeer = PeerId.parse(js.get("peerId").asText());
    await().atMost(Duration.ofSeconds(10)).until(() -> host.peerStore().get(jsPeer).isPresent());
  }

  @ParameterizedTest
  @ValueSource(strings = {"stack-a", "stack-b", "stack-c"})
  void jsOpensEchoStreamsOverTlsWebSocket_shouldGetEveryByteBack(final String stack)
      throws Exception {
    final JsonNode result = JSON.readTree(NodeJs.run(stack, "../common/libp2p-peer.mjs",
        Duration.ofSeconds(120), nodeEnv, "echo-client", address("/tls/ws").toString(), "8",
        "262144").stdout());
    assertThat(result.get("ok").asBoolean()).isTrue();
    assertThat(result.get("streams").asInt()).isEqualTo(8);
  }

  @ParameterizedTest
  @ValueSource(strings = {"stack-a", "stack-b", "stack-c"})
  void jsDialsPlainWebSocket_shouldStillWork_whenTheCertificateIsPresent(final String stack)
      throws Exception {
    final JsonNode js = JSON.readTree(NodeJs.run(stack, "../common/libp2p-peer.mjs",
        NODE_TIMEOUT, "dial", address("/ws").toString(), "1").stdout());
    assertThat(js.get("remoteAddr").asText()).doesNotContain("/tls");
    assertThat(js.get("rtts")).hasSize(1);
  }
}
