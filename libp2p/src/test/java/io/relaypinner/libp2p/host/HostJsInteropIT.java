package io.relaypinner.libp2p.host;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.relaypinner.libp2p.crypto.KeyType;
import io.relaypinner.libp2p.crypto.Keys;
import io.relaypinner.libp2p.netty.EventLoops;
import io.relaypinner.libp2p.protocol.identify.IdentifyResult;
import io.relaypinner.multiformats.Multiaddr;
import io.relaypinner.multiformats.PeerId;
import io.relaypinner.testkit.JsPeer;
import io.relaypinner.testkit.NodeJs;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The Java host against real js-libp2p peers: stack A (libp2p 2.10, noise 16, yamux 7) and stack B
 * (libp2p 3.3, noise 17, yamux 8), both directions, over TCP on 127.0.0.1
 * (interop/js/common/libp2p-peer.mjs).
 */
class HostJsInteropIT {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Duration NODE_TIMEOUT = Duration.ofSeconds(60);
  private final EventLoops loops = EventLoops.create(2, "host-interop");
  private Host host;

  @BeforeEach
  void startHost() throws Exception {
    host = new Host(Keys.generate(KeyType.ED25519, new SecureRandom()), HostConfig.builder()
        .listenAddresses(List.of(Multiaddr.parse("/ip4/127.0.0.1/tcp/0"),
            Multiaddr.parse("/ip4/127.0.0.1/tcp/0/ws")))
        .agentVersion("relay-pinner/interop-test").build(), loops, Clock.systemUTC());
    host.start().get(5, TimeUnit.SECONDS);
  }

  @AfterEach
  void stopHost() {
    host.close();
    loops.shutdownGracefully(Duration.ofSeconds(3));
  }

  @ParameterizedTest
  @ValueSource(strings = {"stack-a", "stack-b", "stack-c"})
  void jsDialsJava_shouldIdentifyAndPing(final String stack) throws Exception {
    final List<IdentifyResult> learned = new ArrayList<>();
    host.addListener(new HostListener() {
      @Override
      public void peerIdentified(final Connection connection, final IdentifyResult result) {
        synchronized (learned) {
          learned.add(result);
        }
      }
    });
    final Multiaddr target = javaAddress(false);
    final JsonNode js = JSON.readTree(NodeJs.run(stack, "../common/libp2p-peer.mjs",
        NODE_TIMEOUT, "dial", target.toString(), "3").stdout());

    assertThat(js.get("remotePeer").asText()).isEqualTo(host.peerId().toBase58());
    assertThat(js.get("encryption").asText()).isEqualTo("/noise");
    assertThat(js.get("multiplexer").asText()).isEqualTo("/yamux/1.0.0");
    final JsonNode identify = js.get("identify");
    assertThat(identify.get("agentVersion").asText()).isEqualTo("relay-pinner/interop-test");
    assertThat(identify.get("protocolVersion").asText()).isEqualTo("ipfs/0.1.0");
    assertThat(texts(identify.get("protocols"))).contains("/ipfs/id/1.0.0",
        "/ipfs/id/push/1.0.0", "/ipfs/ping/1.0.0");
    assertThat(texts(identify.get("listenAddrs"))).contains(
        javaAddress(false).withoutPeerId().toString(), javaAddress(true).withoutPeerId().toString());
    assertThat(identify.get("observedAddr").asText()).startsWith("/ip4/127.0.0.1/tcp/");
    assertThat(js.get("rtts")).hasSize(3);

    final PeerId jsPeer = PeerId.parse(js.get("peerId").asText());
    await().atMost(Duration.ofSeconds(10)).until(() -> {
      synchronized (learned) {
        return learned.stream().anyMatch(r -> r.peerId().equals(jsPeer));
      }
    });
    assertThat(host.peerStore().get(jsPeer).orElseThrow().agentVersion().orElseThrow())
        .startsWith("js-libp2p/" + (stack.equals("stack-a") ? "2." : "3."));
    await().atMost(Duration.ofSeconds(10)).until(() -> host.connection(jsPeer).isEmpty());
  }

  @ParameterizedTest
  @ValueSource(strings = {"stack-a", "stack-b", "stack-c"})
  void javaDialsJs_shouldIdentifyAndPing(final String stack) throws Exception {
    try (JsPeer js = NodeJs.start(stack, "../common/libp2p-peer.mjs", "listen", "60")) {
      final JsonNode listening = js.nextJson(NODE_TIMEOUT);
      assertThat(listening.get("event").asText()).isEqualTo("listening");
      final Multiaddr tcp = texts(listening.get("addrs")).stream().map(Multiaddr::parse)
          .filter(a -> !a.toString().contains("/ws")).findFirst().orElseThrow();

      final Connection connection = host.dial(tcp).get(15, TimeUnit.SECONDS);
      assertThat(connection.remotePeer().toBase58())
          .isEqualTo(listening.get("peerId").asText());
      final IdentifyResult identify = host.identify(connection).get(15, TimeUnit.SECONDS);
      assertThat(identify.agentVersion().orElseThrow())
          .startsWith("js-libp2p/" + (stack.equals("stack-a") ? "2." : "3."));
      assertThat(identify.protocols()).contains("/ipfs/id/1.0.0", "/ipfs/ping/1.0.0");
      assertThat(host.ping(connection).get(15, TimeUnit.SECONDS)).isPositive();

      final JsonNode event = js.nextEvent("identify", NODE_TIMEOUT);
      assertThat(event.get("identify").get("peerId").asText())
          .isEqualTo(host.peerId().toBase58());
      assertThat(event.get("identify").get("agentVersion").asText())
          .isEqualTo("relay-pinner/interop-test");
      connection.close().sync();
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"stack-a", "stack-b", "stack-c"})
  void jsOpensFiftyEchoStreams_shouldGetEveryByteBack(final String stack) throws Exception {
    EchoStreams.serve(host);
    final Multiaddr target = javaAddress(false);
    final JsonNode result = JSON.readTree(NodeJs.run(stack, "../common/libp2p-peer.mjs",
        Duration.ofSeconds(120), "echo-client", target.toString(), "50", "1048576").stdout());
    assertThat(result.get("ok").asBoolean()).isTrue();
    assertThat(result.get("streams").asInt()).isEqualTo(50);
  }

  @ParameterizedTest
  @ValueSource(strings = {"stack-a", "stack-b", "stack-c"})
  void javaOpensFiftyEchoStreams_shouldGetEveryByteBack(final String stack) throws Exception {
    try (JsPeer js = NodeJs.start(stack, "../common/libp2p-peer.mjs", "listen", "120")) {
      final JsonNode listening = js.nextJson(NODE_TIMEOUT);
      final Multiaddr tcp = texts(listening.get("addrs")).stream().map(Multiaddr::parse)
          .filter(a -> !a.toString().contains("/ws")).findFirst().orElseThrow();
      final Connection connection = host.dial(tcp).get(15, TimeUnit.SECONDS);
      // js-libp2p 3 aborts a connection when more than 10 streams arrive before its side of the
      // connection exists; its identify answer proves that it does.
      host.identify(connection).get(15, TimeUnit.SECONDS);

      EchoStreams.assertConcurrentEchoes(connection, 50);
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"stack-a", "stack-b", "stack-c"})
  void jsDialsJavaOverWebSocket_shouldIdentifyAndPing(final String stack) throws Exception {
    final JsonNode js = JSON.readTree(NodeJs.run(stack, "../common/libp2p-peer.mjs",
        NODE_TIMEOUT, "dial", javaAddress(true).toString(), "2").stdout());
    assertThat(js.get("remotePeer").asText()).isEqualTo(host.peerId().toBase58());
    assertThat(js.get("remoteAddr").asText()).contains("/ws");
    assertThat(js.get("identify").get("agentVersion").asText())
        .isEqualTo("relay-pinner/interop-test");
    assertThat(js.get("rtts")).hasSize(2);
  }

  @ParameterizedTest
  @ValueSource(strings = {"stack-a", "stack-b", "stack-c"})
  void javaDialsJsOverWebSocket_shouldIdentifyAndPing(final String stack) throws Exception {
    try (JsPeer js = NodeJs.start(stack, "../common/libp2p-peer.mjs", "listen", "60")) {
      final JsonNode listening = js.nextJson(NODE_TIMEOUT);
      final Multiaddr ws = texts(listening.get("addrs")).stream().map(Multiaddr::parse)
          .filter(a -> a.toString().contains("/ws")).findFirst().orElseThrow();
      final Connection connection = host.dial(ws).get(15, TimeUnit.SECONDS);
      assertThat(connection.remoteAddress().toString()).endsWith("/ws");
      assertThat(host.identify(connection).get(15, TimeUnit.SECONDS).agentVersion().orElseThrow())
          .startsWith("js-libp2p/");
      assertThat(host.ping(connection).get(15, TimeUnit.SECONDS)).isPositive();
      assertThat(js.nextEvent("identify", NODE_TIMEOUT).get("identify").get("peerId").asText())
          .isEqualTo(host.peerId().toBase58());
    }
  }

  /** The Java host's TCP or WebSocket address, with its PeerId. */
  private Multiaddr javaAddress(final boolean webSocket) {
    return host.listenAddresses().stream()
        .filter(a -> a.toString().endsWith("/ws") == webSocket).findFirst().orElseThrow()
        .withPeerId(host.peerId());
  }

  private static List<String> texts(final JsonNode array) {
    final List<String> out = new ArrayList<>();
    array.forEach(node -> out.add(node.asText()));
    return out;
  }
}
