package io.relaypinner.libp2p.host;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.relaypinner.libp2p.crypto.KeyType;
import io.relaypinner.libp2p.crypto.Keys;
import io.relaypinner.libp2p.host.PeerBanEngine.Fault;
import io.relaypinner.multiformats.PeerId;
import io.relaypinner.testkit.MutableClock;
import java.security.SecureRandom;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/** {@link PeerBanEngine} on a {@link MutableClock}: fault budget, bans, IP bans, bounds. */
class PeerBanEngineTest {
  private static final SecureRandom RANDOM = new SecureRandom();
  private final MutableClock clock = new MutableClock(Instant.parse("2026-11-25T00:00:00Z"));
  private final ConnectionLimits limits = ConnectionLimits.builder().peerFaults(4)
      .peerFaultWindow(Duration.ofMinutes(1)).peerBanDuration(Duration.ofMinutes(1))
      .maxPeerBanDuration(Duration.ofMinutes(8)).ipBanPeers(3).maxTrackedPeers(100).build();
  private final PeerBanEngine engine = new PeerBanEngine(limits, clock);

  private static PeerId peer() {
    return Keys.generate(KeyType.ED25519, RANDOM).publicKey().peerId();
  }

  @Test
  void faultBeyondTheBudget_bansThePeer_forPeerBanDuration() {
    final PeerId peer = peer();
    for (int i = 0; i < 4; i++) {
      assertThat(engine.fault(peer, "203.0.113.1", Fault.MALFORMED_MESSAGE)).isFalse();
    }
    assertThat(engine.isBanned(peer)).isFalse();
    assertThat(engine.fault(peer, "203.0.113.1", Fault.MALFORMED_MESSAGE)).isTrue();
    assertThat(engine.isBanned(peer)).isTrue();
    assertThat(engine.bannedUntil(peer)).isEqualTo(clock.instant().plus(Duration.ofMinutes(1)));
    // Faults while banned change nothing (the connections are closing anyway).
    assertThat(engine.fault(peer, "203.0.113.1", Fault.MALFORMED_MESSAGE)).isFalse();
    clock.advance(Duration.ofSeconds(61));
    assertThat(engine.isBanned(peer)).isFalse();
    assertThat(engine.faults()).containsEntry(Fault.MALFORMED_MESSAGE, 6L);
    assertThat(engine.bans()).isEqualTo(1);
  }

  @Test
  void rareFaults_ofAnHonestPeer_neverAddUpToABan() {
    final PeerId peer = peer();
    // 4 a minute is the refill rate: one every 15 s for an hour stays within the budget.
    for (int i = 0; i < 240; i++) {
      assertThat(engine.fault(peer, "203.0.113.1", Fault.PROTOCOL_BOUND)).isFalse();
      clock.advance(Duration.ofSeconds(15));
    }
    assertThat(engine.isBanned(peer)).isFalse();
  }

  @Test
  void repeatedBans_doubleUpToTheMaximum_andStartOverAfterAQuietSpell() {
    final PeerId peer = peer();
    final long[] expectedMinutes = {1, 2, 4, 8, 8};
    for (final long minutes : expectedMinutes) {
      banNow(peer);
      assertThat(engine.bannedUntil(peer))
          .isEqualTo(clock.instant().plus(Duration.ofMinutes(minutes)));
      clock.advance(Duration.ofMinutes(minutes).plusSeconds(1));
    }
    // Quiet for longer than twice the longest ban: the next ban is short again.
    clock.advance(Duration.ofMinutes(17));
    banNow(peer);
    assertThat(engine.bannedUntil(peer)).isEqualTo(clock.instant().plus(Duration.ofMinutes(1)));
  }

  @Test
  void anIp_isBannedOnceIpBanPeersOfItsPeersAreBanned_butNeverLoopback() {
    for (int i = 0; i < 2; i++) {
      banNow(peer(), "198.51.100.7");
    }
    assertThat(engine.isBanned("198.51.100.7")).isFalse();
    banNow(peer(), "198.51.100.7");
    assertThat(engine.isBanned("198.51.100.7")).isTrue();
    assertThat(engine.isBanned("198.51.100.8")).isFalse();
    clock.advance(Duration.ofMinutes(1).plusSeconds(1));
    assertThat(engine.isBanned("198.51.100.7")).isFalse();

    for (int i = 0; i < 10; i++) {
      banNow(peer(), "127.0.0.1");
      banNow(peer(), "::1");
    }
    assertThat(engine.isBanned("127.0.0.1")).isFalse();
    assertThat(engine.isBanned("::1")).isFalse();
  }

  @Test
  void peerBansFromOneIp_spreadOverTime_doNotBanTheIp() {
    for (int i = 0; i < 6; i++) {
      banNow(peer(), "198.51.100.9");
      // Each ban has ended before the next one: never 3 at once.
      clock.advance(Duration.ofMinutes(2));
    }
    assertThat(engine.isBanned("198.51.100.9")).isFalse();
  }

  @Test
  void trackedPeersAndIps_stayWithinMaxTrackedPeers() {
    for (int i = 0; i < 1_000; i++) {
      engine.fault(peer(), "203.0.113." + (i % 250), Fault.STREAM_OVER_LIMIT);
    }
    for (int i = 0; i < 400; i++) {
      banNow(peer(), "192.0.2." + (i % 250) + (i / 250));
    }
    assertThat(engine.trackedPeers()).isLessThanOrEqualTo(100);
    assertThat(engine.trackedIps()).isLessThanOrEqualTo(100);
    assertThat(engine.evictions()).isPositive();
  }

  @Test
  void limits_areValidated() {
    assertThatThrownBy(() -> ConnectionLimits.builder().peerFaults(0).build())
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> ConnectionLimits.builder().peerBanDuration(Duration.ofHours(2))
        .maxPeerBanDuration(Duration.ofHours(1)).build())
        .isInstanceOf(IllegalArgumentException.class);
    assertThat(ConnectionLimits.builder().peerBanDuration(Duration.ZERO).build().banning())
        .isFalse();
    assertThat(ConnectionLimits.DEFAULT.banning()).isTrue();
  }

  private void banNow(final PeerId peer) {
    banNow(peer, "203.0.113.5");
  }

  private void banNow(final PeerId peer, final String ip) {
    boolean banned = false;
    for (int i = 0; i < 10 && !banned; i++) {
      banned = engine.fault(peer, ip, Fault.MALFORMED_MESSAGE);
    }
    assertThat(banned).isTrue();
  }
}
