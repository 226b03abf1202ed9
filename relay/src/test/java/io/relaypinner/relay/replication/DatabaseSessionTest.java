package io.relaypinner.relay.replication;

import static org.assertj.core.api.Assertions.assertThat;

import io.relaypinner.ipfs.dagcbor.DagCbor;
import io.relaypinner.libp2p.crypto.KeyType;
import io.relaypinner.libp2p.crypto.Keys;
import io.relaypinner.multiformats.PeerId;
import io.relaypinner.orbitdb.OrbitDbAddress;
import io.relaypinner.orbitdb.log.Entry;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import org.junit.jupiter.api.Test;

/**
 * The inbox is bounded in bytes per database and in total; oversized payloads never enter; the
 * peers remembered are bounded per database and in total; what a sync waits for is counted.
 */
class DatabaseSessionTest {
  private static OrbitDbAddress address(final String name) {
    return new OrbitDbAddress(DagCbor.cid(name.getBytes(StandardCharsets.UTF_8)));
  }

  @Test
  void offer_shouldDropOversizedPayloads_withoutHoldingThem() {
    final InboxBudget budget = new InboxBudget(1 << 20, 4 << 20);
    final DatabaseSession session = new DatabaseSession(address("a"), budget);

    assertThat(session.offer(new byte[Entry.MAX_BLOCK_SIZE + 1]))
        .isEqualTo(DatabaseSession.Offer.DROPPED_OVERSIZED);
    assertThat(session.inboxBytes()).isZero();
    assertThat(budget.usedBytes()).isZero();
  }

  @Test
  void offer_shouldDropTheOldest_whenTheDatabaseShareIsSpent() {
    final InboxBudget budget = new InboxBudget(1000, 10_000);
    final DatabaseSession session = new DatabaseSession(address("a"), budget);

    for (int i = 0; i < 3; i++) {
      assertThat(session.offer(new byte[400])).isEqualTo(i < 2 ? DatabaseSession.Offer.QUEUED
          : DatabaseSession.Offer.QUEUED_DROPPING_OLDEST);
    }
    assertThat(session.inboxBytes()).isEqualTo(800);
    assertThat(session.takeHeads()).hasSize(2);
    assertThat(budget.usedBytes()).isZero();
  }

  @Test
  void offer_shouldDropNewHeads_whenTheTotalIsSpent() {
    final InboxBudget budget = new InboxBudget(1000, 1500);
    final DatabaseSession a = new DatabaseSession(address("a"), budget);
    final DatabaseSession b = new DatabaseSession(address("b"), budget);

    assertThat(a.offer(new byte[1000])).isEqualTo(DatabaseSession.Offer.QUEUED);
    assertThat(b.offer(new byte[600])).isEqualTo(DatabaseSession.Offer.DROPPED_FULL);
    assertThat(b.offer(new byte[500])).isEqualTo(DatabaseSession.Offer.QUEUED);
    assertThat(budget.usedBytes()).isEqualTo(1500);

    a.close();
    assertThat(budget.usedBytes()).isEqualTo(500);
    assertThat(a.offer(new byte[10])).isEqualTo(DatabaseSession.Offer.DROPPED_FULL);
  }

  @Test
  void scanDue_shouldBeTheFirstTime_thenOnlyAfterFailedPinsAndTheirDelay() {
    final DatabaseSession session = new DatabaseSession(address("a"), InboxBudget.defaults());
    assertThat(session.scanDue(0)).isTrue();
    session.scanned(1_000);
    assertThat(session.scanDue(1_000 + 24 * 3_600_000L)).isFalse();

    session.pinFailed();
    assertThat(session.scanDue(1_000 + DatabaseSession.SCAN_AGAIN_AFTER_MILLIS - 1)).isFalse();
    assertThat(session.scanDue(1_000 + DatabaseSession.SCAN_AGAIN_AFTER_MILLIS)).isTrue();
    session.scanned(1_000 + DatabaseSession.SCAN_AGAIN_AFTER_MILLIS);
    assertThat(session.scanDue(1_000 + 3 * DatabaseSession.SCAN_AGAIN_AFTER_MILLIS)).isFalse();

    // A failed sync (a store outage, a lost lease) may have left pins undone.
    session.scanNext();
    assertThat(session.scanDue(1_000 + 3 * DatabaseSession.SCAN_AGAIN_AFTER_MILLIS)).isTrue();
  }

  private static io.relaypinner.multiformats.PeerId peer() {
    return io.relaypinner.libp2p.crypto.Keys.generate(
        io.relaypinner.libp2p.crypto.KeyType.ED25519, new java.security.SecureRandom())
        .publicKey().peerId();
  }

  @Test
  void rememberedPeers_shouldStayWithinEachSessionsBound_andOneBudgetForAll() {
    final CountBudget peers = new CountBudget(100);
    final DatabaseSession a = new DatabaseSession(address("a"), InboxBudget.defaults(),
        CountBudget.media(), peers, CountBudget.named());
    final DatabaseSession b = new DatabaseSession(address("b"), InboxBudget.defaults(),
        CountBudget.media(), peers, CountBudget.named());

    // One session: its own bound (64 seen, 64 to dial) makes it forget its oldest.
    for (int i = 0; i < 80; i++) {
      assertThat(a.sawPeer(peer(), i % 2 == 0)).isTrue();
    }
    assertThat(a.seenPeers()).hasSize(DatabaseSession.MAX_SEEN_PEERS);
    assertThat(peers.usedCount()).isEqualTo(64 + 36);

    // The budget is spent: another session cannot remember a peer until the first gives back.
    final io.relaypinner.multiformats.PeerId late = peer();
    assertThat(b.sawPeer(late, false)).isFalse();
    assertThat(b.seenPeers()).isEmpty();
    assertThat(a.takeDial()).hasSize(36);
    assertThat(b.sawPeer(late, true)).isTrue();
    a.close();
    assertThat(peers.usedCount()).isEqualTo(2);
    b.close();
    assertThat(peers.usedCount()).isZero();
  }

  private static io.relaypinner.multiformats.Cid media(final int i) {
    return DagCbor.cid(("media " + i).getBytes(StandardCharsets.UTF_8));
  }

  @Test
  void keptMedia_shouldFollowTheJoins_andBeForgottenWhenItCannotBeTrusted() {
    final CountBudget named = new CountBudget(3);
    final DatabaseSession session = new DatabaseSession(address("a"), InboxBudget.defaults(),
        CountBudget.media(), CountBudget.peers(), named);
    assertThat(session.named(0)).isNull();

    session.scannedMedia(java.util.Set.of(media(1)), 10);
    assertThat(session.named(10)).containsExactly(media(1));
    // Entries that came by another path: the counts differ, nothing is answered.
    assertThat(session.named(11)).isNull();
    session.joinedMedia(java.util.List.of(media(2)), 2);
    assertThat(session.named(12)).containsExactlyInAnyOrder(media(1), media(2));
    assertThat(named.usedCount()).isEqualTo(2);

    // A store failure, a failed or follower sync: the next explicit sync reads the log.
    session.storeFailed("postgres");
    assertThat(session.named(12)).isNull();
    assertThat(named.usedCount()).isZero();
    session.scannedMedia(java.util.Set.of(media(1), media(2)), 12);
    session.scanNext();
    assertThat(session.named(12)).isNull();

    // The budget spent: nothing is kept.
    assertThat(session.scannedMedia(java.util.Set.of(media(1), media(2), media(3)), 12)).isTrue();
    assertThat(session.joinedMedia(java.util.List.of(media(4)), 1)).isFalse();
    assertThat(session.named(13)).isNull();
    assertThat(named.usedCount()).isZero();
    assertThat(session.scannedMedia(java.util.Set.of(media(1), media(2), media(3), media(4)), 13))
        .isFalse();
    assertThat(session.named(13)).isNull();
    session.scannedMedia(java.util.Set.of(media(1)), 13);
    session.close();
    assertThat(named.usedCount()).isZero();
  }

  @Test
  void events_shouldCountWhatASyncWaitsFor_soThatNoneIsMissed() throws Exception {
    final DatabaseSession session =
        new DatabaseSession(address("a"), new InboxBudget(1 << 20, 4 << 20));
    final PeerId peer = Keys.generate(KeyType.ED25519, new SecureRandom()).publicKey().peerId();

    long seen = session.events();
    session.offer(new byte[10]);
    assertThat(session.events()).isGreaterThan(seen);
    seen = session.events();
    session.sawPeer(peer, false);
    assertThat(session.events()).as("a peer only remembered changes no decision")
        .isEqualTo(seen);
    session.sawPeer(peer, true);
    assertThat(session.events()).isGreaterThan(seen);
    seen = session.events();
    session.redialStarted();
    session.redialEnded();
    assertThat(session.events()).isGreaterThan(seen);
    seen = session.events();
    session.wake();
    assertThat(session.events()).isGreaterThan(seen);

    // An event that came after the look, before the wait: the wait returns at once.
    session.awaitEvent(seen);
    seen = session.events();
    session.close();
    session.awaitEvent(seen);
  }
}
