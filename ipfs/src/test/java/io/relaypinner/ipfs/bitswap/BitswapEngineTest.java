package io.relaypinner.ipfs.bitswap;

import static org.assertj.core.api.Assertions.assertThat;

import io.relaypinner.ipfs.bitswap.BitswapEngine.Outgoing;
import io.relaypinner.ipfs.bitswap.BitswapEngine.Turn;
import io.relaypinner.ipfs.bitswap.BitswapFrame.Block;
import io.relaypinner.ipfs.bitswap.BitswapFrame.Presence;
import io.relaypinner.ipfs.bitswap.BitswapFrame.Want;
import io.relaypinner.ipfs.bitswap.BitswapFrame.WantType;
import io.relaypinner.ipfs.blockstore.MemoryBlockstore;
import io.relaypinner.libp2p.crypto.KeyType;
import io.relaypinner.libp2p.crypto.Keys;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.multiformats.Multicodec;
import io.relaypinner.multiformats.Multihash;
import io.relaypinner.multiformats.PeerId;
import io.relaypinner.testkit.MutableClock;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

class BitswapEngineTest {
  private final Random random = new Random(5);
  private final MutableClock clock = new MutableClock(Instant.parse("2026-11-24T00:00:00Z"));
  private final MemoryBlockstore blocks = new MemoryBlockstore();
  private final PeerId alice = peer();
  private final PeerId bob = peer();

  /** A sent message and the peer it went to. */
  private record Sent(PeerId peer, Outgoing message) {}

  /** Runs the engine synchronously: turns read from {@link #blocks}, writes succeed. */
  private final class Harness implements BitswapEngine.Output {
    private final ArrayDeque<Turn> turns = new ArrayDeque<>();
    private final ArrayDeque<Sent> unacked = new ArrayDeque<>();
    private final List<Sent> sent = new ArrayList<>();
    private final List<Cid> storeRequests = new ArrayList<>();
    private final Set<PeerId> blocked = new HashSet<>();
    private boolean flushWanted;
    /** Whether writes are acknowledged by {@link #run()} (else the test decides). */
    private boolean autoAck = true;
    private BitswapEngine engine;

    @Override
    public void send(final PeerId peer, final Outgoing message) {
      final Sent record = new Sent(peer, message);
      sent.add(record);
      unacked.add(record);
    }

    @Override
    public void load(final Turn turn) {
      turns.add(turn);
    }

    @Override
    public void store(final Cid cid, final byte[] data) {
      storeRequests.add(cid);
    }

    @Override
    public boolean canSend(final PeerId peer) {
      return !blocked.contains(peer);
    }

    @Override
    public void flushSoon() {
      flushWanted = true;
    }

    /** Handles everything pending until nothing moves. */
    void run() {
      boolean moved = true;
      while (moved) {
        moved = false;
        if (flushWanted) {
          flushWanted = false;
          engine.flush();
          moved = true;
        }
        while (autoAck && !unacked.isEmpty()) {
          final Sent record = unacked.poll();
          engine.sent(record.peer(), record.message());
          moved = true;
        }
        final Turn turn = turns.poll();
        if (turn != null) {
          engine.turnDone(turn, turn.load(blocks));
          moved = true;
        }
      }
    }

    List<Block> blocksTo(final PeerId peer) {
      return sentTo(peer, BitswapFrame::blocks);
    }

    List<Presence> presencesTo(final PeerId peer) {
      return sentTo(peer, BitswapFrame::presences);
    }

    List<Want> wantsTo(final PeerId peer) {
      return sentTo(peer, BitswapFrame::wants);
    }

    /** {@code part} of every message sent to {@code peer}, in order. */
    private <T> List<T> sentTo(final PeerId peer,
        final Function<BitswapFrame, List<T>> part) {
      final List<T> result = new ArrayList<>();
      for (final Sent record : sent) {
        if (record.peer().equals(peer)) {
          result.addAll(part.apply(record.message().frame()));
        }
      }
      return result;
    }
  }

  private Harness harness(final BitswapConfig config) {
    final Harness harness = new Harness();
    harness.engine = new BitswapEngine(config, clock, harness);
    return harness;
  }

  private Harness harness() {
    return harness(BitswapConfig.DEFAULT);
  }

  private PeerId peer() {
    return Keys.generate(KeyType.ED25519, new java.security.SecureRandom()).publicKey().peerId();
  }

  private static Cid raw(final byte[] data) {
    return Cid.v1(Multicodec.RAW, Multihash.sha2_256(data));
  }

  private Cid stored(final int size) {
    final byte[] data = new byte[size];
    random.nextBytes(data);
    final Cid cid = raw(data);
    blocks.put(cid, data);
    return cid;
  }

  private static Cid missing(final String name) {
    return raw(name.getBytes(StandardCharsets.UTF_8));
  }

  private static BitswapFrame wants(final Want... wants) {
    return new BitswapFrame(List.of(wants), false, List.of(), List.of(), 0);
  }

  private static BitswapFrame wantBlocks(final List<Cid> cids) {
    final List<Want> wants = new ArrayList<>();
    for (final Cid cid : cids) {
      wants.add(Want.block(cid, false));
    }
    return new BitswapFrame(wants, false, List.of(), List.of(), 0);
  }

  // ------------------------------------------------------------------------- ledger

  @Test
  void wantBlock_shouldBeAnsweredWithTheBlock_andLeaveTheLedgerOnlyOnceWritten() {
    final Harness h = harness();
    h.autoAck = false;
    final Cid cid = stored(100);
    h.engine.peerConnected(alice);

    h.engine.received(alice, wants(Want.block(cid, true)), 0);
    h.run();

    assertThat(h.blocksTo(alice)).extracting(Block::cid).containsExactly(cid);
    assertThat(h.engine.wantlistSizes()).containsEntry(alice, 1);
    final Sent record = h.unacked.poll();
    h.engine.sent(record.peer(), record.message());
    assertThat(h.engine.wantlistSizes()).doesNotContainKey(alice);
    assertThat(h.engine.stats().blocksSent()).isEqualTo(1);
  }

  @Test
  void wantHave_shouldGetTheSmallBlockItself_andHaveForALargeOne() {
    final Harness h = harness();
    final Cid small = stored(500);
    final Cid large = stored(5_000);
    h.engine.peerConnected(alice);

    h.engine.received(alice, wants(Want.have(small, true), Want.have(large, true)), 0);
    h.run();

    assertThat(h.blocksTo(alice)).extracting(Block::cid).containsExactly(small);
    assertThat(h.presencesTo(alice)).containsExactly(new Presence(large, true));
    assertThat(h.engine.wantlistSizes()).isEmpty();
  }

  @Test
  void missingBlock_shouldGetDontHaveOnce_stayInTheLedger_andBeServedWhenItArrives() {
    final Harness h = harness();
    final byte[] data = "later".getBytes(StandardCharsets.UTF_8);
    final Cid cid = raw(data);
    h.engine.peerConnected(alice);

    h.engine.received(alice, wants(Want.block(cid, true)), 0);
    h.run();
    h.engine.received(alice, wants(Want.block(cid, true)), 0);
    h.run();
    assertThat(h.presencesTo(alice)).containsExactly(new Presence(cid, false),
        new Presence(cid, false));
    // Asked again after the DONT_HAVE: said again (once per want), and still kept.
    assertThat(h.engine.wantlistSizes()).containsEntry(alice, 1);

    blocks.put(cid, data);
    h.engine.blockAdded(cid.multihash());
    h.run();
    assertThat(h.blocksTo(alice)).extracting(Block::cid).containsExactly(cid);
    assertThat(h.engine.wantlistSizes()).isEmpty();
  }

  @Test
  void serveTimes_shouldCountFromReadyToWritten_notTheWaitForABlockWeLacked() {
    final Harness h = harness();
    h.autoAck = false;
    h.engine.peerConnected(alice);
    final Cid here = stored(100);
    final byte[] data = "arrives later".getBytes(StandardCharsets.UTF_8);
    final Cid later = raw(data);

    h.engine.received(alice, wants(Want.block(here, false), Want.block(later, false)), 0);
    h.run();
    clock.advance(Duration.ofMillis(3));
    final Sent first = h.unacked.poll();
    h.engine.sent(first.peer(), first.message());

    // The other block comes 10 s later and is written 20 ms after that: 20 ms, not 10 s.
    clock.advance(Duration.ofSeconds(10));
    blocks.put(later, data);
    h.engine.blockAdded(later.multihash());
    h.run();
    clock.advance(Duration.ofMillis(20));
    final Sent second = h.unacked.poll();
    h.engine.sent(second.peer(), second.message());

    final ServeTimes.Snapshot times = h.engine.stats().serveTimes();
    final double[] bounds = ServeTimes.Snapshot.upperBounds();
    assertThat(times.count()).isEqualTo(2);
    assertThat(times.sumSeconds()).isCloseTo(0.023, org.assertj.core.data.Offset.offset(1e-9));
    final long[] counts = times.counts();
    for (int i = 0; i < counts.length; i++) {
      final boolean holdsThree = bounds[i] == 0.005;
      final boolean holdsTwenty = bounds[i] == 0.025;
      assertThat(counts[i]).as("bucket <= %s", bounds[i])
          .isEqualTo(holdsThree || holdsTwenty ? 1 : 0);
    }
  }

  @Test
  void cancel_shouldRemoveTheWant_andAFullWantlistShouldReplaceTheOldOne() {
    final Harness h = harness();
    h.engine.peerConnected(alice);
    final Cid a = missing("a");
    final Cid b = missing("b");
    final Cid c = missing("c");

    h.engine.received(alice, wants(Want.block(a, false), Want.block(b, false)), 0);
    h.run();
    assertThat(h.engine.wantlistSizes()).containsEntry(alice, 2);
    h.engine.received(alice, wants(Want.cancel(a)), 0);
    assertThat(h.engine.wantlistSizes()).containsEntry(alice, 1);
    h.engine.received(alice, new BitswapFrame(List.of(Want.block(c, false)), true, List.of(),
        List.of(), 0), 0);
    h.run();

    assertThat(h.engine.wantlistSizes()).containsEntry(alice, 1);
    assertThat(h.engine.stats().wantlistEntries()).isEqualTo(1);
  }

  @Test
  void ledger_shouldIgnoreAndCountWants_beyondThePerPeerCap() {
    final Harness h = harness(BitswapConfig.builder().maxWantsPerPeer(3).build());
    h.engine.peerConnected(alice);
    final List<Cid> cids = new ArrayList<>();
    for (int i = 0; i < 10; i++) {
      cids.add(missing("w" + i));
    }

    h.engine.received(alice, wantBlocks(cids), 0);
    h.run();

    assertThat(h.engine.wantlistSizes()).containsEntry(alice, 3);
    assertThat(h.engine.stats().rejected()).containsEntry("wantlist-full", 1L);
  }

  @Test
  void turn_shouldReadHigherPrioritiesFirst() {
    final Harness h = harness();
    final Cid low = stored(10);
    final Cid high = stored(10);
    h.engine.peerConnected(alice);

    h.engine.received(alice, wants(new Want(low, 1, false, WantType.BLOCK, false),
        new Want(high, 9, false, WantType.BLOCK, false)), 0);
    h.run();

    assertThat(h.blocksTo(alice)).extracting(Block::cid).containsExactly(high, low);
  }

  // ------------------------------------------------------------------------- never lost

  @Test
  void droppedMessage_shouldBeServedAgain_notLost() {
    final Harness h = harness();
    h.autoAck = false;
    final Cid cid = stored(100);
    h.engine.peerConnected(alice);
    h.engine.received(alice, wants(Want.block(cid, false)), 0);
    h.run();

    final Sent first = h.unacked.poll();
    h.engine.unsent(alice, first.message(), BitswapReject.SEND_QUEUE_FULL, false);
    h.run();

    assertThat(h.blocksTo(alice)).extracting(Block::cid).containsExactly(cid, cid);
    assertThat(h.engine.wantlistSizes()).containsEntry(alice, 1);
    assertThat(h.engine.stats().rejected()).containsEntry("send-queue-full", 1L);
    final Sent second = h.unacked.poll();
    h.engine.sent(alice, second.message());
    assertThat(h.engine.wantlistSizes()).isEmpty();
  }

  @Test
  void unopenableStream_shouldParkTheServedWant_untilThePeersNextMessage() {
    final Harness h = harness();
    h.autoAck = false;
    final Cid cid = stored(100);
    h.engine.peerConnected(alice);
    h.engine.received(alice, wants(Want.block(cid, false)), 0);
    h.run();

    h.engine.unsent(alice, h.unacked.poll().message(), BitswapReject.STREAM_OPEN_FAILED, true);
    h.run();
    assertThat(h.blocksTo(alice)).hasSize(1);
    assertThat(h.engine.wantlistSizes()).containsEntry(alice, 1);

    h.engine.received(alice, BitswapFrame.EMPTY, 0);
    h.run();
    assertThat(h.blocksTo(alice)).hasSize(2);
  }

  @Test
  void blockedStream_shouldGetNoTurn_untilItDrains() {
    final Harness h = harness();
    final Cid cid = stored(100);
    h.engine.peerConnected(alice);
    h.blocked.add(alice);

    h.engine.received(alice, wants(Want.block(cid, false)), 0);
    h.run();
    assertThat(h.blocksTo(alice)).isEmpty();

    h.blocked.remove(alice);
    h.engine.drained(alice);
    h.run();
    assertThat(h.blocksTo(alice)).extracting(Block::cid).containsExactly(cid);
  }

  // ------------------------------------------------------------------------- our wants

  @Test
  void want_shouldBeSharedByWaiters_storedOnce_andCompleteThemAll() throws Exception {
    final Harness h = harness();
    h.engine.peerConnected(alice);
    final byte[] data = "wanted".getBytes(StandardCharsets.UTF_8);
    final Cid cid = raw(data);
    final CompletableFuture<byte[]> first = new CompletableFuture<>();
    final CompletableFuture<byte[]> second = new CompletableFuture<>();

    h.engine.want(cid, first, Duration.ofSeconds(30), true);
    h.engine.want(cid, second, Duration.ofSeconds(30), false);
    h.run();
    // The only peer is asked for the block itself, once.
    assertThat(h.wantsTo(alice)).containsExactly(Want.block(cid, true));

    h.engine.received(alice, new BitswapFrame(List.of(), false, List.of(new Block(cid, data)),
        List.of(), 0), 0);
    assertThat(h.storeRequests).containsExactly(cid);
    assertThat(first).isNotDone();
    h.engine.stored(cid, null);

    assertThat(first.get()).isEqualTo(data);
    assertThat(second.get()).isEqualTo(data);
    assertThat(h.engine.openWants()).isZero();
  }

  @Test
  void want_shouldAskOneProviderForTheBlock_andTheOthersForHave_thenMoveOnDontHave() {
    final Harness h = harness();
    h.engine.peerConnected(alice);
    h.engine.peerConnected(bob);
    final Cid cid = missing("x");

    h.engine.want(cid, new CompletableFuture<>(), Duration.ofSeconds(30), true);
    h.run();
    assertThat(h.wantsTo(alice)).containsExactly(Want.have(cid, true));
    assertThat(h.wantsTo(bob)).containsExactly(Want.have(cid, true));

    h.engine.received(bob, new BitswapFrame(List.of(), false, List.of(),
        List.of(new Presence(cid, true)), 0), 0);
    h.run();
    assertThat(h.wantsTo(bob)).containsExactly(Want.have(cid, true), Want.block(cid, true));

    h.engine.received(alice, new BitswapFrame(List.of(), false, List.of(),
        List.of(new Presence(cid, true)), 0), 0);
    h.engine.received(bob, new BitswapFrame(List.of(), false, List.of(),
        List.of(new Presence(cid, false)), 0), 0);
    h.run();
    assertThat(h.wantsTo(alice)).containsExactly(Want.have(cid, true), Want.block(cid, true));
  }

  @Test
  void want_shouldTimeOutOnTheClock_andCancelAtThePeer() {
    final Harness h = harness();
    h.engine.peerConnected(alice);
    final Cid cid = missing("never");
    final CompletableFuture<byte[]> waiter = new CompletableFuture<>();
    h.engine.want(cid, waiter, Duration.ofSeconds(3), true);
    h.run();

    clock.advance(Duration.ofMillis(2_999));
    h.engine.tick();
    assertThat(waiter).isNotDone();
    clock.advance(Duration.ofMillis(1));
    h.engine.tick();
    h.run();

    assertThat(waiter).isCompletedExceptionally();
    assertThat(waiter.handle((d, e) -> e).join()).isInstanceOf(TimeoutException.class);
    assertThat(h.engine.openWants()).isZero();
    assertThat(h.wantsTo(alice)).last().isEqualTo(Want.cancel(cid));
  }

  @Test
  void rebroadcast_shouldBackOff_doublingWhileNobodyAnswers() {
    final Harness h = harness();
    h.engine.peerConnected(alice);
    final Cid cid = missing("rare");
    h.engine.want(cid, new CompletableFuture<>(), Duration.ofHours(1), true);
    h.run();
    final int[] expectedAt = {5, 15, 35, 75, 115};
    int asked = 1;
    for (int second = 1; second <= 115; second++) {
      oneSecond(h, null);
      final int now = second;
      final boolean due = java.util.Arrays.stream(expectedAt).anyMatch(t -> t == now);
      if (due) {
        asked++;
      }
      assertThat(h.wantsTo(alice)).as("wants sent by second %d", second).hasSize(asked);
    }
  }

  /** One second passes: {@code fromAlice} (when not null) arrives, then the engine ticks. */
  private void oneSecond(final Harness h, final BitswapFrame fromAlice) {
    clock.advance(Duration.ofSeconds(1));
    if (fromAlice != null) {
      h.engine.received(alice, fromAlice, 0);
    }
    h.engine.tick();
    h.run();
  }

  @Test
  void rebroadcast_shouldWait_whileTheBlockPeerDeliversOurOtherBlocks_andAskOnceItStops() {
    final Harness h = harness();
    h.engine.peerConnected(alice);
    final Cid slow = missing("slow");
    h.engine.want(slow, new CompletableFuture<>(), Duration.ofHours(1), false);
    final List<byte[]> others = new ArrayList<>();
    for (int i = 0; i < 8; i++) {
      final byte[] data = ("other " + i).getBytes(StandardCharsets.UTF_8);
      others.add(data);
      h.engine.want(raw(data), new CompletableFuture<>(), Duration.ofHours(1), false);
    }
    h.run();
    // Alice is busy: one of our other blocks a second, for 8 s (past the 5 s interval).
    for (final byte[] data : others) {
      oneSecond(h, new BitswapFrame(List.of(), false, List.of(new Block(raw(data), data)),
          List.of(), 0));
    }
    assertThat(h.wantsTo(alice)).filteredOn(Want.block(slow, true)::equals).hasSize(1);

    // She stopped answering: the want that never came is asked again within an interval.
    for (int second = 0; second < 5; second++) {
      oneSecond(h, null);
    }
    assertThat(h.wantsTo(alice)).filteredOn(Want.block(slow, true)::equals).hasSize(2);
  }

  @Test
  void rebroadcast_shouldAskAgain_aPeerThatOnlySendsItsOwnWants() {
    final Harness h = harness();
    h.engine.peerConnected(alice);
    final Cid lost = missing("lost at alice");
    h.engine.want(lost, new CompletableFuture<>(), Duration.ofHours(1), false);
    h.run();
    // Alice talks every second, but only about what she wants: she may have lost our want.
    for (int second = 1; second <= 5; second++) {
      oneSecond(h, wants(Want.block(missing("alice wants " + second), false)));
    }
    assertThat(h.wantsTo(alice)).filteredOn(Want.block(lost, true)::equals).hasSize(2);
  }

  @Test
  void rebroadcast_shouldAskAgain_aPeerThatOnlySendsDuplicates() {
    final Harness h = harness();
    h.engine.peerConnected(alice);
    final byte[] data = "had it".getBytes(StandardCharsets.UTF_8);
    h.engine.want(raw(data), new CompletableFuture<>(), Duration.ofHours(1), false);
    h.run();
    final BitswapFrame again = new BitswapFrame(List.of(), false,
        List.of(new Block(raw(data), data)), List.of(), 0);
    h.engine.received(alice, again, 0);
    final Cid withheld = missing("withheld");
    h.engine.want(withheld, new CompletableFuture<>(), Duration.ofHours(1), false);
    h.run();
    // A block we already have is no answer: sending it again does not make her "busy".
    for (int second = 1; second <= 5; second++) {
      oneSecond(h, again);
    }
    assertThat(h.wantsTo(alice)).filteredOn(Want.block(withheld, true)::equals).hasSize(2);
  }

  @Test
  void wantInALostMessage_shouldBeAskedAgainAtTheNextTick_evenWhileThePeerIsBusy() {
    final Harness h = harness();
    h.engine.peerConnected(alice);
    h.autoAck = false;
    final Cid lost = missing("in a message that failed");
    h.engine.want(lost, new CompletableFuture<>(), Duration.ofHours(1), false);
    h.run();
    final Sent failed = h.unacked.poll();
    assertThat(failed.message().frame().wants()).containsExactly(Want.block(lost, true));
    h.engine.unsent(alice, failed.message(), BitswapReject.SEND_FAILED, false);
    h.autoAck = true;
    final byte[] data = "busy with this".getBytes(StandardCharsets.UTF_8);
    h.engine.want(raw(data), new CompletableFuture<>(), Duration.ofHours(1), false);
    h.run();

    // Alice answers our other want (she is busy), yet the lost one goes out again at once.
    oneSecond(h, new BitswapFrame(List.of(), false, List.of(new Block(raw(data), data)),
        List.of(), 0));
    assertThat(h.wantsTo(alice)).filteredOn(Want.block(lost, true)::equals).hasSize(2);
    assertThat(h.engine.stats().rejected()).containsEntry(BitswapReject.SEND_FAILED.label(), 1L);
  }

  @Test
  void wants_shouldBeHeld_whileThePeerStillOwesUsBlocks_andSentWhenItDelivers() {
    final Harness h = harness();
    h.engine.peerConnected(alice);
    final byte[] data = "first".getBytes(StandardCharsets.UTF_8);
    final Cid first = raw(data);
    final Cid second = missing("second");
    h.engine.want(first, new CompletableFuture<>(), Duration.ofMinutes(1), false);
    h.run();

    h.engine.want(second, new CompletableFuture<>(), Duration.ofMinutes(1), false);
    h.run();
    assertThat(h.wantsTo(alice)).containsExactly(Want.block(first, true));

    h.engine.received(alice, new BitswapFrame(List.of(), false, List.of(new Block(first, data)),
        List.of(), 0), 0);
    h.run();
    assertThat(h.wantsTo(alice)).containsExactly(Want.block(first, true),
        Want.block(second, true));
  }

  @Test
  void close_shouldFailEveryWaiter_andLaterWants() {
    final Harness h = harness();
    h.engine.peerConnected(alice);
    final CompletableFuture<byte[]> waiter = new CompletableFuture<>();
    h.engine.want(missing("a"), waiter, Duration.ofHours(1), true);

    h.engine.close();
    final CompletableFuture<byte[]> late = new CompletableFuture<>();
    h.engine.want(missing("b"), late, Duration.ofHours(1), true);

    assertThat(waiter).isCompletedExceptionally();
    assertThat(late).isCompletedExceptionally();
    assertThat(waiter.handle((d, e) -> e).join()).isInstanceOf(IllegalStateException.class);
  }

  @Test
  void newPeer_shouldBeAskedForEveryOpenWant() throws ExecutionException {
    final Harness h = harness();
    h.engine.peerConnected(alice);
    final Cid cid = missing("open");
    h.engine.want(cid, new CompletableFuture<>(), Duration.ofHours(1), true);
    h.run();

    h.engine.peerConnected(bob);
    h.run();

    assertThat(h.wantsTo(bob)).containsExactly(Want.have(cid, true));
  }
}
