package io.relaypinner.libp2p.protocol.relay;

import static org.assertj.core.api.Assertions.assertThat;

import io.relaypinner.libp2p.crypto.KeyType;
import io.relaypinner.libp2p.crypto.Keys;
import io.relaypinner.libp2p.protocol.relay.CircuitRelayEngine.Circuit;
import io.relaypinner.libp2p.protocol.relay.CircuitRelayEngine.Refused;
import io.relaypinner.libp2p.protocol.relay.CircuitRelayEngine.Reserved;
import io.relaypinner.multiformats.PeerId;
import io.relaypinner.testkit.MutableClock;
import java.security.SecureRandom;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

class CircuitRelayEngineTest {
  private static final SecureRandom RANDOM = new SecureRandom();
  private final MutableClock clock = new MutableClock(Instant.parse("2026-01-01T00:00:00Z"));
  private final Object connection1 = new Object();
  private final Object connection2 = new Object();

  private static PeerId peer() {
    return Keys.generate(KeyType.ED25519, RANDOM).publicKey().peerId();
  }

  private CircuitRelayEngine engine(final CircuitRelayConfig.Builder config) {
    return new CircuitRelayEngine(config.build(), clock);
  }

  @Test
  void reserve_shouldRefreshInPlace_whenThePeerReservesAgainWithTheStoreFull() {
    final CircuitRelayEngine engine = engine(CircuitRelayConfig.builder().maxReservations(1)
        .reservationTtl(Duration.ofMinutes(10)));
    final PeerId a = peer();
    final Reserved first = (Reserved) engine.reserve(a, connection1, "10.0.0.1");
    assertThat(first.refreshed()).isFalse();
    assertThat(first.advertisedExpiry()).isEqualTo(clock.instant().plusSeconds(600)
        .getEpochSecond());

    clock.advance(Duration.ofMinutes(5));
    final Reserved second = (Reserved) engine.reserve(a, connection1, "10.0.0.1");
    assertThat(second.refreshed()).isTrue();
    assertThat(second.advertisedExpiry()).isEqualTo(first.advertisedExpiry() + 300);
    assertThat(engine.reservations()).isEqualTo(1);
    assertThat(engine.reserve(peer(), connection2, "10.0.0.2"))
        .isEqualTo(new Refused(RelayRefusal.RESERVATION_LIMIT));
    assertThat(engine.refusals().get(RelayRefusal.RESERVATION_LIMIT)).isEqualTo(1);
  }

  @Test
  void reserve_shouldRefuse_whenOneIpHoldsItsShare() {
    final CircuitRelayEngine engine = engine(CircuitRelayConfig.builder()
        .maxReservationsPerIp(2));
    assertThat(engine.reserve(peer(), new Object(), "192.0.2.1")).isInstanceOf(Reserved.class);
    assertThat(engine.reserve(peer(), new Object(), "192.0.2.1")).isInstanceOf(Reserved.class);
    assertThat(engine.reserve(peer(), new Object(), "192.0.2.1"))
        .isEqualTo(new Refused(RelayRefusal.IP_RESERVATION_LIMIT));
    assertThat(engine.reserve(peer(), new Object(), "192.0.2.2")).isInstanceOf(Reserved.class);
    assertThat(engine.reservingIps()).isEqualTo(2);
  }

  @Test
  void reserve_shouldBeUnlimited_whenTheCapIsZero() {
    final CircuitRelayEngine engine = engine(CircuitRelayConfig.builder().maxReservations(0)
        .maxReservationsPerIp(1_000));
    for (int i = 0; i < 200; i++) {
      assertThat(engine.reserve(peer(), new Object(), "192.0.2.1")).isInstanceOf(Reserved.class);
    }
    assertThat(engine.reservations()).isEqualTo(200);
  }

  @Test
  void connectionClosed_shouldRelease_onlyTheConnectionThatHoldsTheReservation() {
    final CircuitRelayEngine engine = engine(CircuitRelayConfig.builder());
    final PeerId a = peer();
    engine.reserve(a, connection1, "10.0.0.1");
    // The peer reconnects (a page reload) and reserves before the old connection is closed.
    engine.reserve(a, connection2, "10.0.0.1");
    assertThat(engine.connectionClosed(a, connection1)).isFalse();
    assertThat(engine.reservation(a)).isPresent();
    assertThat(engine.connectionClosed(a, connection2)).isTrue();
    assertThat(engine.reservation(a)).isEmpty();
    assertThat(engine.reservingIps()).isZero();
    assertThat(engine.reservationsReleased()).isEqualTo(1);
  }

  @Test
  void reservations_shouldExpire_afterTheirTtlUnlessRefreshed() {
    final CircuitRelayEngine engine = engine(CircuitRelayConfig.builder()
        .reservationTtl(Duration.ofMinutes(1)));
    final PeerId a = peer();
    final PeerId b = peer();
    engine.reserve(a, connection1, "10.0.0.1");
    engine.reserve(b, connection2, "10.0.0.2");
    clock.advance(Duration.ofSeconds(59));
    engine.reserve(b, connection2, "10.0.0.2");
    clock.advance(Duration.ofSeconds(1));
    assertThat(engine.reservation(a)).isEmpty();
    assertThat(engine.reservation(b)).isPresent();
    assertThat(engine.openCircuit(peer(), a)).isEqualTo(new Refused(RelayRefusal.NO_RESERVATION));
    assertThat(engine.reservationsExpired()).isEqualTo(1);
  }

  @Test
  void reservations_shouldNotExpire_whenTheTtlIsZero() {
    final CircuitRelayEngine engine = engine(CircuitRelayConfig.builder()
        .reservationTtl(Duration.ZERO));
    final PeerId a = peer();
    final Reserved reserved = (Reserved) engine.reserve(a, connection1, "10.0.0.1");
    assertThat(reserved.advertisedExpiry()).isEqualTo(clock.instant().plus(
        CircuitRelayConfig.OPEN_ENDED_ADVERTISED_TTL).getEpochSecond());
    clock.advance(Duration.ofDays(30));
    assertThat(engine.expire()).isZero();
    assertThat(engine.reservation(a)).isPresent();
  }

  @Test
  void openCircuit_shouldRefuse_whenTheDestinationHasNoReservation() {
    final CircuitRelayEngine engine = engine(CircuitRelayConfig.builder());
    assertThat(engine.openCircuit(peer(), peer()))
        .isEqualTo(new Refused(RelayRefusal.NO_RESERVATION));
    assertThat(engine.refusals().get(RelayRefusal.NO_RESERVATION)).isEqualTo(1);
  }

  @Test
  void openCircuit_shouldApplyTheCapsInTotalAndPerPeer_andFreeThemWhenCircuitsEnd() {
    final CircuitRelayEngine engine = engine(CircuitRelayConfig.builder().maxCircuits(3)
        .maxCircuitsPerPeer(2).defaultDataLimit(1_000).defaultDurationLimit(Duration.ofSeconds(9)));
    final PeerId target = peer();
    final PeerId other = peer();
    engine.reserve(target, connection1, "10.0.0.1");
    engine.reserve(other, connection2, "10.0.0.2");
    final Circuit first = (Circuit) engine.openCircuit(peer(), target);
    assertThat(first.dataLimit()).isEqualTo(1_000);
    assertThat(first.durationLimit()).isEqualTo(Duration.ofSeconds(9));
    assertThat(first.destinationHolder()).isSameAs(connection1);
    engine.openCircuit(peer(), target);
    assertThat(engine.openCircuit(peer(), target))
        .isEqualTo(new Refused(RelayRefusal.PEER_CIRCUIT_LIMIT));
    engine.openCircuit(peer(), other);
    assertThat(engine.openCircuit(peer(), other))
        .isEqualTo(new Refused(RelayRefusal.CIRCUIT_LIMIT));
    assertThat(engine.openCircuits()).isEqualTo(3);

    engine.circuitEnded(first, CircuitEnd.DATA_LIMIT);
    assertThat(engine.openCircuit(peer(), target)).isInstanceOf(Circuit.class);
    assertThat(engine.circuitsEnded().get(CircuitEnd.DATA_LIMIT)).isEqualTo(1);
    assertThat(engine.circuitsOpened()).isEqualTo(4);
  }

  @Test
  void openCircuit_shouldCapCircuitsPerIpKey_whateverThePeerIds_andFreeThemWhenCircuitsEnd() {
    final CircuitRelayEngine engine = engine(CircuitRelayConfig.builder().maxCircuitsPerIp(2));
    final PeerId target = peer();
    final PeerId honestTarget = peer();
    engine.reserve(target, connection1, "198.51.100.1/32");
    engine.reserve(honestTarget, connection2, "192.0.2.9/32");
    // Fresh PeerIds from one IP key: the key's share, then refused whoever asks.
    final Circuit first = (Circuit) engine.openCircuit(peer(), "203.0.113.7/32", target);
    assertThat(first.sourceIp()).isEqualTo("203.0.113.7/32");
    assertThat(first.destinationIp()).isEqualTo("198.51.100.1/32");
    assertThat(engine.openCircuit(peer(), "203.0.113.7/32", target)).isInstanceOf(Circuit.class);
    assertThat(engine.openCircuit(peer(), "203.0.113.7/32", honestTarget))
        .isEqualTo(new Refused(RelayRefusal.IP_CIRCUIT_LIMIT));
    // The destination's key is full too: nobody opens more circuits to it.
    assertThat(engine.openCircuit(peer(), "192.0.2.1/32", target))
        .isEqualTo(new Refused(RelayRefusal.IP_CIRCUIT_LIMIT));
    assertThat(engine.refusals().get(RelayRefusal.IP_CIRCUIT_LIMIT)).isEqualTo(2);
    // Another key still gets its circuits; a trusted proxy's connections (null) are not keyed.
    assertThat(engine.openCircuit(peer(), "192.0.2.1/32", honestTarget))
        .isInstanceOf(Circuit.class);
    assertThat(engine.openCircuit(peer(), null, honestTarget)).isInstanceOf(Circuit.class);
    assertThat(engine.ipsWithCircuits()).isEqualTo(4);

    engine.circuitEnded(first, CircuitEnd.CLOSED);
    assertThat(engine.openCircuit(peer(), "203.0.113.7/32", target)).isInstanceOf(Circuit.class);
  }

  @Test
  void openCircuit_shouldCountACircuitOnce_whenBothEndsShareAnIpKey() {
    final CircuitRelayEngine engine = engine(CircuitRelayConfig.builder().maxCircuitsPerIp(2));
    final PeerId a = peer();
    final PeerId b = peer();
    engine.reserve(a, connection1, "203.0.113.7/32");
    engine.reserve(b, connection2, "203.0.113.7/32");
    final Circuit circuit = (Circuit) engine.openCircuit(peer(), "203.0.113.7/32", a);
    assertThat(circuit.destinationIp()).isNull();
    assertThat(engine.openCircuit(peer(), "203.0.113.7/32", b)).isInstanceOf(Circuit.class);
    assertThat(engine.openCircuit(peer(), "203.0.113.7/32", b))
        .isEqualTo(new Refused(RelayRefusal.IP_CIRCUIT_LIMIT));
    engine.circuitEnded(circuit, CircuitEnd.RESET);
    assertThat(engine.ipsWithCircuits()).isEqualTo(1);
  }

  @Test
  void reserve_shouldNotCapAnUnkeyedConnectionPerIp() {
    final CircuitRelayEngine engine = engine(CircuitRelayConfig.builder().maxReservationsPerIp(1));
    for (int i = 0; i < 3; i++) {
      assertThat(engine.reserve(peer(), new Object(), null)).isInstanceOf(Reserved.class);
    }
    assertThat(engine.reservingIps()).isZero();
    final PeerId moving = peer();
    engine.reserve(moving, connection1, null);
    assertThat(engine.reserve(moving, connection2, "10.0.0.1")).isInstanceOf(Reserved.class);
    assertThat(engine.reservingIps()).isEqualTo(1);
  }

  /**
   * With the node budget's scopes: 64 fresh PeerIds from one IP key get that key's 32 circuits
   * (the scope's streams), each refusal counted by the budget as well as by reason; the scopes
   * of ended circuits and released reservations are given back (no key left held).
   */
  @Test
  void budgetScopes_shouldCapCircuitsAndReservationsPerIpKey_andCountEachRefusal() {
    final java.util.List<String> hits = new java.util.ArrayList<>();
    final io.relaypinner.common.budget.Scope parent = io.relaypinner.common.budget.Scope.root(
        "circuit_relay", io.relaypinner.common.budget.Limits.NONE,
        (scope, resource) -> hits.add(scope.kind() + "/" + resource.label()));
    final CircuitRelayConfig config = CircuitRelayConfig.builder().maxReservationsPerIp(2)
        .maxCircuitsPerPeer(64).build();
    final CircuitRelayEngine.IpScopes scopes = CircuitRelayEngine.IpScopes.of(parent, config,
        io.relaypinner.common.budget.LimitListener.NONE);
    final CircuitRelayEngine engine = new CircuitRelayEngine(config, clock, scopes);
    final PeerId target = peer();
    final PeerId other = peer();
    engine.reserve(target, connection1, "198.51.100.1/32");
    engine.reserve(other, connection2, "198.51.100.1/32");
    assertThat(engine.reserve(peer(), new Object(), "198.51.100.1/32"))
        .isEqualTo(new Refused(RelayRefusal.IP_RESERVATION_LIMIT));
    assertThat(hits).containsExactly("reservation_ip/work");

    final java.util.List<Circuit> open = new java.util.ArrayList<>();
    int refused = 0;
    for (int i = 0; i < 64; i++) {
      final CircuitRelayEngine.CircuitOutcome outcome =
          engine.openCircuit(peer(), "203.0.113.7/32", i % 2 == 0 ? target : other);
      if (outcome instanceof Circuit circuit) {
        open.add(circuit);
      } else {
        assertThat(outcome).isEqualTo(new Refused(RelayRefusal.IP_CIRCUIT_LIMIT));
        refused++;
      }
    }
    assertThat(open).hasSize(CircuitRelayConfig.DEFAULT_MAX_CIRCUITS_PER_IP);
    assertThat(refused).isEqualTo(64 - CircuitRelayConfig.DEFAULT_MAX_CIRCUITS_PER_IP);
    assertThat(hits.stream().filter("circuit_ip/streams"::equals)).hasSize(refused);
    assertThat(scopes.circuits().peek("203.0.113.7/32").used(
        io.relaypinner.common.budget.Resource.STREAMS)).isEqualTo(32);
    assertThat(parent.used(io.relaypinner.common.budget.Resource.STREAMS)).isEqualTo(64);

    open.forEach(circuit -> engine.circuitEnded(circuit, CircuitEnd.CLOSED));
    assertThat(engine.connectionClosed(target, connection1)).isTrue();
    clock.advance(CircuitRelayConfig.DEFAULT_RESERVATION_TTL);
    assertThat(engine.expire()).isEqualTo(1);
    assertThat(parent.used(io.relaypinner.common.budget.Resource.STREAMS)).isZero();
    assertThat(parent.used(io.relaypinner.common.budget.Resource.WORK)).isZero();
    assertThat(scopes.circuits().size()).isZero();
    assertThat(scopes.reservations().size()).isZero();
  }

  @Test
  void config_shouldRejectOutOfRangeLimits() {
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> CircuitRelayConfig.builder()
        .hopTimeout(Duration.ZERO).build()).hasMessageContaining("hopTimeout");
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> CircuitRelayConfig.builder()
        .defaultDataLimit(-1).build()).hasMessageContaining("defaultDataLimit");
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> CircuitRelayConfig.builder()
        .maxReservations(-1).build()).hasMessageContaining("maxReservations");
  }
}
