package io.relaypinner.libp2p.protocol.kad;

import static org.assertj.core.api.Assertions.assertThat;

import io.relaypinner.multiformats.PeerId;
import io.relaypinner.testkit.MutableClock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

class RoutingTableTest {
  private final Random random = new Random(7);
  private final MutableClock clock = new MutableClock(Instant.parse("2026-11-29T00:00:00Z"));
  private final PeerId self = KadTestPeers.random(random);
  private final KadKey selfKey = KadKey.of(self);

  /** {@code count} peers whose points share no leading bit with ours: all in bucket 0. */
  private List<PeerId> bucketZero(final int count) {
    final List<PeerId> out = new ArrayList<>();
    while (out.size() < count) {
      final PeerId peer = KadTestPeers.random(random);
      if (selfKey.commonPrefixLength(KadKey.of(peer)) == 0) {
        out.add(peer);
      }
    }
    return out;
  }

  @Test
  void commonPrefixLength_shouldCountLeadingEqualBits() {
    final byte[] a = new byte[32];
    final byte[] b = new byte[32];
    b[1] = 0x10;

    assertThat(KadKey.ofPoint(a).commonPrefixLength(KadKey.ofPoint(b))).isEqualTo(11);
    assertThat(KadKey.ofPoint(a).commonPrefixLength(KadKey.ofPoint(a))).isEqualTo(256);
  }

  @Test
  void closest_shouldOrderByXorDistance_whenManyPeersAreKnown() {
    final RoutingTable table = new RoutingTable(self, 20, clock);
    final List<PeerId> peers = new ArrayList<>();
    for (int i = 0; i < 300; i++) {
      final PeerId peer = KadTestPeers.random(random);
      if (table.offer(peer).outcome() == RoutingTable.Outcome.ADDED) {
        peers.add(peer);
      }
    }
    final KadKey target = KadKey.of(KadTestPeers.contentKey(random));
    peers.sort(Comparator.comparing(KadKey::of, target.byDistance()));

    assertThat(table.closest(target, 20)).containsExactlyElementsOf(peers.subList(0, 20));
    assertThat(table.size()).isEqualTo(peers.size());
  }

  @Test
  void offer_shouldAskForALivenessCheck_whenTheBucketIsFull() {
    final RoutingTable table = new RoutingTable(self, 3, clock);
    final List<PeerId> peers = bucketZero(5);
    for (final PeerId peer : peers.subList(0, 3)) {
      assertThat(table.offer(peer).outcome()).isEqualTo(RoutingTable.Outcome.ADDED);
    }

    final RoutingTable.Offer pending = table.offer(peers.get(3));

    assertThat(pending.outcome()).isEqualTo(RoutingTable.Outcome.PENDING);
    assertThat(pending.toCheck()).isEqualTo(peers.get(0));
    assertThat(table.offer(peers.get(4)).outcome()).isEqualTo(RoutingTable.Outcome.DROPPED);
    assertThat(table.contains(peers.get(3))).isFalse();
  }

  @Test
  void livenessChecked_shouldKeepTheLivePeer_andReplaceTheDeadOne() {
    final RoutingTable table = new RoutingTable(self, 2, clock);
    final List<PeerId> peers = bucketZero(4);
    table.offer(peers.get(0));
    table.offer(peers.get(1));

    table.offer(peers.get(2));
    table.livenessChecked(peers.get(0), true);

    assertThat(table.bucket(0)).extracting(RoutingTable.Entry::peer)
        .containsExactly(peers.get(1), peers.get(0));

    final RoutingTable.Offer next = table.offer(peers.get(3));
    assertThat(next.toCheck()).isEqualTo(peers.get(1));
    table.livenessChecked(peers.get(1), false);

    assertThat(table.bucket(0)).extracting(RoutingTable.Entry::peer)
        .containsExactly(peers.get(0), peers.get(3));
    assertThat(table.counters()).containsEntry("evicted", 1L).containsEntry("dropped", 1L);
  }

  @Test
  void offer_shouldRefuseSelf_andRefreshAKnownPeer() {
    final RoutingTable table = new RoutingTable(self, 20, clock);
    final PeerId peer = KadTestPeers.random(random);
    table.offer(peer);
    clock.advance(Duration.ofMinutes(1));

    assertThat(table.offer(self).outcome()).isEqualTo(RoutingTable.Outcome.SELF);
    assertThat(table.offer(peer).outcome()).isEqualTo(RoutingTable.Outcome.UPDATED);
    final int cpl = selfKey.commonPrefixLength(KadKey.of(peer));
    assertThat(table.bucket(cpl).get(0).lastSeen()).isEqualTo(clock.instant());
  }

  @Test
  void refreshDue_shouldNameBucketsNotLookedUpWithinTheInterval() {
    final RoutingTable table = new RoutingTable(self, 20, clock);
    for (final PeerId peer : bucketZero(2)) {
      table.offer(peer);
    }
    assertThat(table.refreshDue(Duration.ofMinutes(10), 15)).isEmpty();

    clock.advance(Duration.ofMinutes(11));
    table.lookedUp(KadKey.of(table.randomKeyForBucket(1, random)));

    assertThat(table.refreshDue(Duration.ofMinutes(10), 15)).containsExactly(0);
  }

  @Test
  void randomKeyForBucket_shouldLandInThatBucket() {
    final RoutingTable table = new RoutingTable(self, 20, clock);
    for (int cpl = 0; cpl <= 10; cpl++) {
      assertThat(selfKey.commonPrefixLength(KadKey.of(table.randomKeyForBucket(cpl, random))))
          .isEqualTo(cpl);
    }
  }
}
