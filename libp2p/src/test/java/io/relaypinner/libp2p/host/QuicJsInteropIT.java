package io.relaypinner.libp2p.host;

import static org.assertj.core.api.Assertions.assertThat;

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
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * QUIC v1 with js-libp2p 3.3.11 and {@code @chainsafe/libp2p-quic} 2.1.1 (interop/js/quic): a JS
 * peer dials the Java host (libp2p TLS both ways, identify, ping) and the Java host dials a JS
 * peer. One Java host for the class.
 */
class QuicJsInteropIT {
  private static final String PROJECT = "quic";
  private static final ObjectMapper JSON = new ObjectMapper();
  private static EventLoops loops;
  private static Host host;

  @BeforeAll
  static void start() throws Exception {
    loops = EventLoops.create(2, "quic-js-it");
    host = new Host(Keys.generate(KeyType.ED25519, new SecureRandom()), HostConfig.builder()
        .listenAddresses(List.of(Multiaddr.parse("/ip4/127.0.0.1/udp/0/quic-v1")))
        .agentVersion("relay-pinner/test").build(), loops, Clock.systemUTC());
    host.start().get(5, TimeUnit.SECONDS);
  }

  @AfterAll
  static void stop() {
    host.close();
    loops.shutdownGracefully(Duration.ofSeconds(3));
  }

  @Test
  void jsPeer_shouldDialJavaOverQuic_identifyAndPing() throws Exception {
    final Multiaddr address = host.listenAddresses().get(0).withPeerId(host.peerId());

    final JsonNode result = JSON.readTree(NodeJs.run(PROJECT, "quic-peer.mjs",
        Duration.ofSeconds(60), "dial", address.toString()).stdout());

    assertThat(result.get("peerId").asText()).isEqualTo(host.peerId().toString());
    assertThat(result.get("agentVersion").asText()).isEqualTo("relay-pinner/test");
    assertThat(result.get("listenAddrs").toString()).contains(address.withoutPeerId().toString());
    assertThat(result.get("rtts")).hasSize(3);
  }

  @Test
  void javaHost_shouldDialJsOverQuic_identifyAndPing() throws Exception {
    try (JsPeer js = NodeJs.start(PROJECT, "quic-peer.mjs", "listen", "60")) {
      final JsonNode listening = js.nextEvent("listening", Duration.ofSeconds(30));
      final Multiaddr address = Multiaddr.parse(listening.get("addrs").get(0).asText());

      final Connection connection = host.dial(address).get(10, TimeUnit.SECONDS);

      assertThat(connection.remotePeer())
          .isEqualTo(PeerId.parse(listening.get("peerId").asText()));
      final IdentifyResult identified = host.identify(connection).get(10, TimeUnit.SECONDS);
      assertThat(identified.protocols()).contains("/ipfs/ping/1.0.0");
      assertThat(host.ping(connection).get(10, TimeUnit.SECONDS)).isPositive();
      assertThat(js.nextEvent("identify", Duration.ofSeconds(10)).get("agentVersion").asText())
          .isEqualTo("relay-pinner/test");
    }
  }
}
