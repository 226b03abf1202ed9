package io.relaypinner.libp2p.protocol.relay;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.relaypinner.libp2p.crypto.KeyType;
import io.relaypinner.libp2p.crypto.Keys;
import io.relaypinner.libp2p.host.Host;
import io.relaypinner.libp2p.host.HostConfig;
import io.relaypinner.libp2p.netty.EventLoops;
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
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The Java circuit relay v2 against js-libp2p's {@code @libp2p/circuit-relay-v2} transport on
 * stack A (libp2p 2, relay client 3.2) and stack B (libp2p 3, relay client 4.2)
 * (interop/js/common/circuit-peer.mjs): a JS peer reserves, another dials it through
 * {@code /p2p-circuit}, pings and echoes; data and duration limits end circuits when exceeded and
 * not before; a refreshed reservation keeps its slot; a peer reconnecting 20 times gets its
 * reservation back every time and none leaks.
 */
class CircuitRelayJsInteropIT {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Duration NODE_TIMEOUT = Duration.ofSeconds(60);
  private final EventLoops loops = EventLoops.create(2, "relay-interop");
  private Host host;
  private CircuitRelay relay;

  private void startRelay(final CircuitRelayConfig config) throws Exception {
    host = new Host(Keys.generate(KeyType.ED25519, new SecureRandom()), HostConfig.builder()
        .listenAddresses(List.of(Multiaddr.parse("/ip4/127.0.0.1/tcp/0")))
        .agentVersion("relay-pinner/interop-test").build(), loops, Clock.systemUTC());
    relay = CircuitRelay.start(host, config, Clock.systemUTC(), host::listenAddresses);
    host.start().get(5, TimeUnit.SECONDS);
  }

  private String relayAddress() {
    return host.listenAddresses().get(0).withPeerId(host.peerId()).toString();
  }

  @AfterEach
  void stop() {
    if (relay != null) {
      relay.close();
    }
    if (host != null) {
      host.close();
    }
    loops.shutdownGracefully(Duration.ofSeconds(3));
  }

  @ParameterizedTest
  @ValueSource(strings = {"stack-a", "stack-b", "stack-c"})
  void jsPeers_shouldReserveDialThroughTheRelayPingAndEcho(final String stack) throws Exception {
    startRelay(CircuitRelayConfig.DEFAULT);
    try (JsPeer listener = NodeJs.start(stack, "../common/circuit-peer.mjs", "listen",
        relayAddress())) {
      final JsonNode reserved = listener.nextEvent("reserved", NODE_TIMEOUT);
      final PeerId target = PeerId.parse(reserved.get("peerId").asText());
      final String circuit = texts(reserved.get("addrs")).get(0);
      assertThat(circuit).startsWith(relayAddress() + "/p2p-circuit/p2p/" + target);
      assertThat(relay.engine().reservation(target)).isPresent();

      final JsonNode dial = JSON.readTree(NodeJs.run(stack, "../common/circuit-peer.mjs",
          NODE_TIMEOUT, "dial", circuit, "1,65536,1048576").stdout());
      assertThat(dial.get("remotePeer").asText()).isEqualTo(target.toBase58());
      assertThat(dial.get("remoteAddr").asText()).contains("/p2p-circuit");
      assertThat(dial.get("rtt").asDouble()).isGreaterThanOrEqualTo(0);
      for (final JsonNode echo : dial.get("echoes")) {
        assertThat(echo.get("ok").asBoolean()).as(echo.toString()).isTrue();
      }
      // Both ends got the Limit (10 GiB, 20 min): JS reports what is left of it.
      assertThat(dial.get("limits").get("bytes").asLong()).isBetween(
          CircuitRelayConfig.DEFAULT_DATA_LIMIT - (8 << 20), CircuitRelayConfig.DEFAULT_DATA_LIMIT);
      assertThat(dial.get("limits").get("seconds").asLong()).isBetween(20L * 60 - 30, 20L * 60);
      assertThat(listener.nextEvent("relayed:open", NODE_TIMEOUT).get("limits").get("bytes")
          .asLong()).isBetween(CircuitRelayConfig.DEFAULT_DATA_LIMIT - (8 << 20),
              CircuitRelayConfig.DEFAULT_DATA_LIMIT);
      await().atMost(Duration.ofSeconds(10)).until(() -> relay.engine().openCircuits() == 0);
      assertThat(relay.engine().circuitsOpened()).as(relay.engine().circuitsEnded() + " "
          + relay.engine().refusals()).isEqualTo(1);
      assertThat(relay.engine().bytesRelayed()).isGreaterThan(2L * (1 + 65536 + 1048576));
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"stack-a", "stack-b", "stack-c"})
  void dataLimit_shouldEndTheCircuitWhenExceededAndNotBefore(final String stack)
      throws Exception {
    startRelay(CircuitRelayConfig.builder().defaultDataLimit(256 * 1024)
        .defaultDurationLimit(Duration.ZERO).build());
    try (JsPeer listener = NodeJs.start(stack, "../common/circuit-peer.mjs", "listen",
        relayAddress())) {
      final String circuit = texts(listener.nextEvent("reserved", NODE_TIMEOUT).get("addrs"))
          .get(0);
      final JsonNode dial = JSON.readTree(NodeJs.run(stack, "../common/circuit-peer.mjs",
          NODE_TIMEOUT, "dial", circuit, "65536,65536,1048576").stdout());
      final JsonNode echoes = dial.get("echoes");
      // 128 KiB each way plus the relayed connection's own bytes fit in 256 KiB; 1 MiB does not.
      assertThat(echoes.get(0).get("ok").asBoolean()).as(echoes.toString()).isTrue();
      assertThat(echoes.get(1).get("ok").asBoolean()).as(echoes.toString()).isTrue();
      assertThat(echoes.get(2).get("ok").asBoolean()).as(echoes.toString()).isFalse();
      assertThat(dial.get("limits").get("bytes").asLong()).isLessThanOrEqualTo(256 * 1024);
      await().atMost(Duration.ofSeconds(10)).until(() -> relay.engine().openCircuits() == 0);
      assertThat(relay.engine().circuitsEnded().get(CircuitEnd.DATA_LIMIT)).isEqualTo(1);
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"stack-a", "stack-b", "stack-c"})
  void durationLimit_shouldEndTheCircuitWhenExceededAndNotBefore(final String stack)
      throws Exception {
    startRelay(CircuitRelayConfig.builder().defaultDataLimit(0)
        .defaultDurationLimit(Duration.ofSeconds(3)).build());
    try (JsPeer listener = NodeJs.start(stack, "../common/circuit-peer.mjs", "listen",
        relayAddress())) {
      final String circuit = texts(listener.nextEvent("reserved", NODE_TIMEOUT).get("addrs"))
          .get(0);
      final List<JsonNode> pings = new ArrayList<>();
      final JsonNode closed;
      try (JsPeer dialer = NodeJs.start(stack, "../common/circuit-peer.mjs", "hold", circuit,
          "250")) {
        while (true) {
          final JsonNode event = dialer.nextJson(NODE_TIMEOUT);
          if (event.get("event").asText().equals("closed")) {
            closed = event;
            break;
          }
          pings.add(event);
        }
      }
      // Pings pass until close to the limit; then the relay ends the circuit.
      assertThat(pings.stream().filter(p -> p.get("ok").asBoolean())
          .mapToLong(p -> p.get("atMs").asLong()).max().orElse(0)).as(pings.toString())
          .isGreaterThanOrEqualTo(2_000);
      assertThat(closed.get("afterMs").asLong()).isGreaterThanOrEqualTo(2_500);
      await().atMost(Duration.ofSeconds(10)).until(() -> relay.engine().openCircuits() == 0);
      assertThat(relay.engine().circuitsEnded().get(CircuitEnd.DURATION_LIMIT)).isEqualTo(1);
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"stack-a", "stack-b", "stack-c"})
  void refreshedReservation_shouldKeepItsSlot(final String stack) throws Exception {
    startRelay(CircuitRelayConfig.builder().maxReservations(1).build());
    try (JsPeer listener = NodeJs.start(stack, "../common/circuit-peer.mjs", "listen",
        relayAddress())) {
      final JsonNode reserved = listener.nextEvent("reserved", NODE_TIMEOUT);
      final PeerId target = PeerId.parse(reserved.get("peerId").asText());
      final long firstExpiry = relay.engine().reservation(target).orElseThrow().expires()
          .getEpochSecond();
      assertThat(reserveFromAnotherPeer(stack)).isEqualTo("RESERVATION_REFUSED");

      listener.send("refresh");
      final JsonNode refreshed = listener.nextEvent("refreshed", NODE_TIMEOUT);
      assertThat(refreshed.get("status").asText()).as(refreshed.toString()).isEqualTo("OK");
      assertThat(refreshed.get("hasVoucher").asBoolean()).isTrue();
      assertThat(refreshed.get("expire").asLong()).isGreaterThanOrEqualTo(firstExpiry);
      assertThat(texts(refreshed.get("addrs"))).contains(relayAddress());
      assertThat(relay.engine().reservationsRefreshed()).isEqualTo(1);
      assertThat(relay.engine().reservations()).isEqualTo(1);

      // The slot is still the listener's: others are refused, dials to it go through.
      assertThat(reserveFromAnotherPeer(stack)).isEqualTo("RESERVATION_REFUSED");
      final JsonNode dial = JSON.readTree(NodeJs.run(stack, "../common/circuit-peer.mjs",
          NODE_TIMEOUT, "dial", texts(reserved.get("addrs")).get(0), "1024").stdout());
      assertThat(dial.get("echoes").get(0).get("ok").asBoolean()).isTrue();
      assertThat(relay.engine().refusals().get(RelayRefusal.RESERVATION_LIMIT)).isEqualTo(2);
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"stack-a", "stack-b", "stack-c"})
  void reconnectingPeer_shouldGetItsReservationBackTwentyTimesWithoutLeaking(
      final String stack) throws Exception {
    final int times = 20;
    startRelay(CircuitRelayConfig.builder().maxReservations(1).build());
    try (JsPeer peer = NodeJs.start(stack, "../common/circuit-peer.mjs", "reconnect",
        relayAddress(), String.valueOf(times))) {
      for (int i = 0; i < times; i++) {
        final JsonNode reserved = peer.nextEvent("reserved", NODE_TIMEOUT);
        assertThat(reserved.get("i").asInt()).isEqualTo(i);
        assertThat(texts(reserved.get("addrs")).get(0)).startsWith(relayAddress()
            + "/p2p-circuit");
        peer.nextEvent("stopped", NODE_TIMEOUT);
        // The peer is gone: its slot must be free again before it comes back.
        await().atMost(Duration.ofSeconds(10)).until(() -> relay.engine().reservations() == 0);
        peer.send("next");
      }
    }
    assertThat(relay.engine().reservationsMade()).isEqualTo(times);
    assertThat(relay.engine().reservationsReleased()).isEqualTo(times);
    assertThat(relay.engine().refusals().values()).allMatch(count -> count == 0);
    assertThat(reserveFromAnotherPeer(stack)).isEqualTo("OK");
  }

  private String reserveFromAnotherPeer(final String stack) throws Exception {
    return JSON.readTree(NodeJs.run(stack, "../common/circuit-peer.mjs", NODE_TIMEOUT,
        "reserve", relayAddress()).stdout()).get("status").asText();
  }

  static List<String> texts(final JsonNode array) {
    final List<String> out = new ArrayList<>();
    array.forEach(node -> out.add(node.asText()));
    return out;
  }
}
