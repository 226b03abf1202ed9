package io.relaypinner.libp2p.protocol.autonat;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.relaypinner.libp2p.crypto.KeyType;
import io.relaypinner.libp2p.crypto.Keys;
import io.relaypinner.libp2p.protocol.autonat.AutoNatEngine.Decision;
import io.relaypinner.libp2p.protocol.autonat.AutoNatEngine.Refusal;
import io.relaypinner.multiformats.Multiaddr;
import io.relaypinner.multiformats.PeerId;
import io.relaypinner.testkit.MutableClock;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.security.SecureRandom;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;

/**
 * {@link AutoNatEngine} on a {@link MutableClock}, no sockets: which requested addresses a
 * dial-back goes to (the requester's own IP, TCP or WebSocket, what {@code dialable} allows, at
 * most {@code maxAddresses}) and how often (per peer and in all, per window).
 */
class AutoNatEngineTest {
  private static final SecureRandom RANDOM = new SecureRandom();
  private static final Duration WINDOW = Duration.ofMinutes(1);
  private static final byte[] IP = ip("203.0.113.7");

  private final MutableClock clock = new MutableClock(Instant.parse("2026-11-25T00:00:00Z"));

  private static PeerId peer() {
    return Keys.generate(KeyType.ED25519, RANDOM).publicKey().peerId();
  }

  private static byte[] ip(final String address) {
    try {
      return InetAddress.getByName(address).getAddress();
    } catch (final UnknownHostException e) {
      throw new AssertionError(e);
    }
  }

  private static Multiaddr addr(final String text) {
    return Multiaddr.parse(text);
  }

  private AutoNatEngine engine(final int global, final int perPeer) {
    return engine(global, perPeer, 16, a -> true);
  }

  private AutoNatEngine engine(final int global, final int perPeer, final int maxAddresses,
      final Predicate<Multiaddr> dialable) {
    return new AutoNatEngine(new AutoNatConfig(global, perPeer, WINDOW, Duration.ofSeconds(15),
        maxAddresses, Duration.ofSeconds(60), 4_096), clock, dialable);
  }

  @Test
  void decide_shouldDialOnlyTcpOrWebSocketAddresses_onTheRequestersOwnIp() {
    final AutoNatEngine engine = engine(30, 3);
    final Decision decision = engine.decide(peer(), IP, List.of(
        addr("/ip4/203.0.113.7/tcp/4001"),
        addr("/ip4/203.0.113.7/tcp/4002/ws"),
        // Another IP: the server must not be aimed at third parties.
        addr("/ip4/198.51.100.1/tcp/4001"),
        // What the server cannot dial.
        addr("/ip4/203.0.113.7/udp/4001/quic-v1"),
        addr("/ip4/203.0.113.7/tcp/4003/tls/ws"),
        addr("/dns4/example.com/tcp/4001"),
        addr("/ip4/203.0.113.7/tcp/4004/ws/p2p-circuit")));
    assertThat(decision.refusal()).isNull();
    assertThat(decision.dial()).containsExactly(addr("/ip4/203.0.113.7/tcp/4001"),
        addr("/ip4/203.0.113.7/tcp/4002/ws"));
  }

  @Test
  void decide_shouldStripThePeerId_andDialEachAddressOnce() {
    final AutoNatEngine engine = engine(30, 3);
    final PeerId peer = peer();
    final Decision decision = engine.decide(peer, IP, List.of(
        addr("/ip4/203.0.113.7/tcp/4001/p2p/" + peer),
        addr("/ip4/203.0.113.7/tcp/4001")));
    assertThat(decision.dial()).containsExactly(addr("/ip4/203.0.113.7/tcp/4001"));
  }

  @Test
  void decide_shouldMatchIpv6Requesters_byTheirFullAddress() {
    final AutoNatEngine engine = engine(30, 3);
    final Decision decision = engine.decide(peer(), ip("2001:db8::7"), List.of(
        addr("/ip6/2001:db8::7/tcp/4001"),
        addr("/ip6/2001:db8::8/tcp/4001"),
        addr("/ip4/203.0.113.7/tcp/4001")));
    assertThat(decision.dial()).containsExactly(addr("/ip6/2001:db8::7/tcp/4001"));
  }

  @Test
  void decide_shouldKeepTheFirstMaxAddressesDialable_inRequestOrder() {
    final AutoNatEngine engine = engine(30, 3, 2,
        a -> !a.equals(addr("/ip4/203.0.113.7/tcp/1")));
    final Decision decision = engine.decide(peer(), IP, List.of(
        addr("/ip4/203.0.113.7/tcp/1"),
        addr("/ip4/203.0.113.7/tcp/2"),
        addr("/ip4/203.0.113.7/tcp/3"),
        addr("/ip4/203.0.113.7/tcp/4")));
    assertThat(decision.dial()).containsExactly(addr("/ip4/203.0.113.7/tcp/2"),
        addr("/ip4/203.0.113.7/tcp/3"));
  }

  @Test
  void requestWithoutADialableAddress_shouldBeRefused_andNotCountAgainstTheRates() {
    final AutoNatEngine engine = engine(1, 1, 16, a -> false);
    final PeerId peer = peer();
    for (int i = 0; i < 3; i++) {
      final Decision decision = engine.decide(peer, IP, List.of(addr("/ip4/10.0.0.1/tcp/1")));
      assertThat(decision.refusal()).isEqualTo(Refusal.NO_DIALABLE_ADDRESS);
      assertThat(decision.dial()).isEmpty();
    }
    assertThat(engine.counters()).containsEntry("refused_no_dialable_address", 3L)
        .containsEntry("refused_peer_rate", 0L).containsEntry("refused_global_rate", 0L);
    assertThat(engine.trackedPeers()).isZero();
  }

  @Test
  void aPeer_shouldGetPeerDialsPerWindow_thenBeRefusedUntilTheWindowPasses() {
    final AutoNatEngine engine = engine(30, 3);
    final PeerId peer = peer();
    final List<Multiaddr> request = List.of(addr("/ip4/203.0.113.7/tcp/4001"));
    for (int i = 0; i < 3; i++) {
      assertThat(engine.decide(peer, IP, request).refusal()).isNull();
      clock.advance(Duration.ofSeconds(10));
    }
    assertThat(engine.decide(peer, IP, request).refusal()).isEqualTo(Refusal.PEER_RATE);
    // Another peer is not held back by the first one's requests.
    assertThat(engine.decide(peer(), IP, request).refusal()).isNull();
    assertThat(engine.trackedPeers()).isEqualTo(2);

    // The window started with the engine: at 59.999 s still refused, at 60 s a fresh window.
    clock.advance(Duration.ofSeconds(29).plusMillis(999));
    assertThat(engine.decide(peer, IP, request).refusal()).isEqualTo(Refusal.PEER_RATE);
    clock.advance(Duration.ofMillis(1));
    assertThat(engine.decide(peer, IP, request).refusal()).isNull();
    // The per-peer table holds only peers seen in the current window.
    assertThat(engine.trackedPeers()).isEqualTo(1);
    assertThat(engine.counters()).containsEntry("refused_peer_rate", 2L);
  }

  @Test
  void allPeersTogether_shouldGetGlobalDialsPerWindow() {
    final AutoNatEngine engine = engine(4, 3);
    final List<Multiaddr> request = List.of(addr("/ip4/203.0.113.7/tcp/4001"));
    final List<PeerId> peers = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      peers.add(peer());
      assertThat(engine.decide(peers.get(i), IP, request).refusal()).isNull();
    }
    final PeerId fresh = peer();
    assertThat(engine.decide(fresh, IP, request).refusal()).isEqualTo(Refusal.GLOBAL_RATE);
    // A refused request is not remembered: the table stays bounded by the global rate.
    assertThat(engine.trackedPeers()).isEqualTo(4);
    clock.advance(WINDOW);
    assertThat(engine.decide(fresh, IP, request).refusal()).isNull();
    assertThat(engine.counters()).containsEntry("refused_global_rate", 1L);
  }

  @Test
  void globalRate_shouldBeCheckedBeforeThePeerRate() {
    final AutoNatEngine engine = engine(2, 2);
    final PeerId peer = peer();
    final List<Multiaddr> request = List.of(addr("/ip4/203.0.113.7/tcp/4001"));
    engine.decide(peer, IP, request);
    engine.decide(peer, IP, request);
    assertThat(engine.decide(peer, IP, request).refusal()).isEqualTo(Refusal.GLOBAL_RATE);
  }

  @Test
  void counters_shouldCountBadRequestsAndDialOutcomes() {
    final AutoNatEngine engine = engine(30, 3);
    assertThat(engine.counters()).containsOnlyKeys("dial_ok", "dial_error",
        "refused_bad_request", "refused_global_rate", "refused_peer_rate",
        "refused_no_dialable_address").allSatisfy((name, value) -> assertThat(value).isZero());
    engine.badRequest();
    engine.dialed(true);
    engine.dialed(true);
    engine.dialed(false);
    assertThat(engine.counters()).containsEntry("refused_bad_request", 1L)
        .containsEntry("dial_ok", 2L).containsEntry("dial_error", 1L);
  }

  @Test
  void config_shouldRefuseNonPositiveLimits() {
    assertThatThrownBy(() -> AutoNatConfig.DEFAULT.withRates(0, 3))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> new AutoNatConfig(30, 3, Duration.ZERO, Duration.ofSeconds(15), 16,
        Duration.ofSeconds(60), 4_096)).isInstanceOf(IllegalArgumentException.class);
  }
}
