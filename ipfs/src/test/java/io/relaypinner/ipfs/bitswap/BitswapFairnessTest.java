package io.relaypinner.ipfs.bitswap;

import static org.assertj.core.api.Assertions.assertThat;

import io.relaypinner.ipfs.bitswap.BitswapEngine.Outgoing;
import io.relaypinner.ipfs.bitswap.BitswapEngine.Turn;
import io.relaypinner.ipfs.bitswap.BitswapFrame.Block;
import io.relaypinner.ipfs.bitswap.BitswapFrame.Want;
import io.relaypinner.ipfs.blockstore.MemoryBlockstore;
import io.relaypinner.libp2p.crypto.KeyType;
import io.relaypinner.libp2p.crypto.Keys;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.multiformats.Multicodec;
import io.relaypinner.multiformats.Multihash;
import io.relaypinner.multiformats.PeerId;
import io.relaypinner.testkit.MutableClock;
import java.security.SecureRandom;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.function.Predicate;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/**
 * The server's turn order, on the engine with a synchronous harness: every test runs the same
 * scenario on the production {@link DeficitRoundRobin} and on a first-come-first-served scheduler,
 * and shows the property holds for the first and fails for the second (so the test cannot pass a
 * FIFO server).
 */
class BitswapFairnessTest {
  private static final int LARGE = 256 * 1024;
  private final Random random = new Random(3);
  private final MemoryBlockstore blocks = new MemoryBlockstore();
  private final MutableClock clock = new MutableClock(Instant.parse("2026-11-24T00:00:00Z"));

  /** First come, first served: the oldest ready peer is served until it has nothing left. */
  private static final class FifoScheduler implements TurnScheduler {
    private final ArrayDeque<PeerId> queue = new ArrayDeque<>();

    @Override
    public void ready(final PeerId peer) {
      if (!queue.contains(peer)) {
        queue.add(peer);
      }
    }

    @Override
    public Grant next(final Predicate<PeerId> canTakeTurn) {
      // Head of line: nobody behind the oldest request is served before it.
      final PeerId head = queue.peek();
      if (head == null || !canTakeTurn.test(head)) {
        return null;
      }
      queue.poll();
      return new Grant(head, Long.MAX_VALUE);
    }

    @Override
    public void done(final PeerId peer, final long bytes, final boolean more) {
      if (more) {
        queue.remove(peer);
        queue.addFirst(peer);
      }
    }

    @Override
    public void remove(final PeerId peer) {
      queue.remove(peer);
    }
  }

  /** Runs turns in the order they start; records each block sent with its peer. */
  private final class Server implements BitswapEngine.Output {
    private final ArrayDeque<Turn> turns = new ArrayDeque<>();
    private final List<Map.Entry<PeerId, Block>> served = new ArrayList<>();
    private final ArrayDeque<Map.Entry<PeerId, Outgoing>> unacked = new ArrayDeque<>();
    private BitswapEngine engine;

    @Override
    public void send(final PeerId peer, final Outgoing message) {
      for (final Block block : message.frame().blocks()) {
        served.add(Map.entry(peer, block));
      }
      unacked.add(Map.entry(peer, message));
    }

    @Override
    public void load(final Turn turn) {
      turns.add(turn);
    }

    @Override
    public void store(final Cid cid, final byte[] data) {}

    @Override
    public boolean canSend(final PeerId peer) {
      return true;
    }

    @Override
    public void flushSoon() {}

    void run() {
      while (!turns.isEmpty() || !unacked.isEmpty()) {
        while (!unacked.isEmpty()) {
          final Map.Entry<PeerId, Outgoing> sent = unacked.poll();
          engine.sent(sent.getKey(), sent.getValue());
        }
        final Turn turn = turns.poll();
        if (turn != null) {
          engine.turnDone(turn, turn.load(blocks));
        }
      }
    }

    /** Block bytes sent to anyone before {@code cid}'s block. */
    long bytesBefore(final Cid cid) {
      long bytes = 0;
      for (final Map.Entry<PeerId, Block> entry : served) {
        if (entry.getValue().cid().equals(cid)) {
          return bytes;
        }
        bytes += entry.getValue().data().length;
      }
      throw new AssertionError(cid + " was never served");
    }

    long bytesTo(final PeerId peer, final int firstBlocks) {
      long bytes = 0;
      for (int i = 0; i < firstBlocks && i < served.size(); i++) {
        if (served.get(i).getKey().equals(peer)) {
          bytes += served.get(i).getValue().data().length;
        }
      }
      return bytes;
    }
  }

  private Server server(final TurnScheduler scheduler) {
    final Server server = new Server();
    server.engine = new BitswapEngine(BitswapConfig.DEFAULT, clock, server, scheduler);
    return server;
  }

  private static PeerId peer() {
    return Keys.generate(KeyType.ED25519, new SecureRandom()).publicKey().peerId();
  }

  private Cid stored(final int size) {
    final byte[] data = new byte[size];
    random.nextBytes(data);
    final Cid cid = Cid.v1(Multicodec.RAW, Multihash.sha2_256(data));
    blocks.put(cid, data);
    return cid;
  }

  private static BitswapFrame wantBlocks(final List<Cid> cids) {
    final List<Want> wants = new ArrayList<>();
    for (final Cid cid : cids) {
      wants.add(Want.block(cid, false));
    }
    return new BitswapFrame(wants, false, List.of(), List.of(), 0);
  }

  /**
   * A greedy peer asks for 100 blocks of 256 KiB (25 MiB); then another peer asks for one small
   * block. Returns the block bytes sent before that small block.
   */
  private long bytesBeforeTheSmallBlock(final Supplier<TurnScheduler> scheduler) {
    final Server server = server(scheduler.get());
    final PeerId greedy = peer();
    final PeerId modest = peer();
    final List<Cid> large = new ArrayList<>();
    for (int i = 0; i < 100; i++) {
      large.add(stored(LARGE));
    }
    final Cid small = stored(100);
    server.engine.peerConnected(greedy);
    server.engine.peerConnected(modest);

    server.engine.received(greedy, wantBlocks(large), 0);
    server.engine.received(modest, wantBlocks(List.of(small)), 0);
    server.run();

    assertThat(server.served).hasSize(101);
    return server.bytesBefore(small);
  }

  @Test
  void smallRequest_shouldBeServedWithinOneQuantum_whenAGreedyPeerAskedFirst() {
    final long limit = BitswapConfig.DEFAULT.bytesPerTurn() + LARGE;

    final long roundRobin = bytesBeforeTheSmallBlock(
        () -> new DeficitRoundRobin(BitswapConfig.DEFAULT.bytesPerTurn()));
    final long fifo = bytesBeforeTheSmallBlock(FifoScheduler::new);

    // Deficit round robin: at most the greedy peer's first quantum (plus one block) first.
    assertThat(roundRobin).isLessThanOrEqualTo(limit);
    // The same check fails for first come, first served: all 25 MiB go first.
    assertThat(fifo).isGreaterThan(limit).isEqualTo(100L * LARGE);
  }

  @Test
  void twoGreedyPeers_shouldGetEqualBytes_whateverTheirBlockSizes() {
    for (final boolean fair : new boolean[] {true, false}) {
      final Server server = server(fair
          ? new DeficitRoundRobin(BitswapConfig.DEFAULT.bytesPerTurn())
          : new FifoScheduler());
      final PeerId bigBlocks = peer();
      final PeerId smallBlocks = peer();
      final List<Cid> big = new ArrayList<>();
      final List<Cid> little = new ArrayList<>();
      for (int i = 0; i < 40; i++) {
        big.add(stored(LARGE));
      }
      for (int i = 0; i < 400; i++) {
        little.add(stored(LARGE / 16));
      }
      server.engine.peerConnected(bigBlocks);
      server.engine.peerConnected(smallBlocks);
      server.engine.received(bigBlocks, wantBlocks(big), 0);
      server.engine.received(smallBlocks, wantBlocks(little), 0);
      server.run();

      // Over the first 8 MiB sent, each got about half the bytes (FIFO: all to one peer).
      final Map<Boolean, Long> shares = new HashMap<>();
      long total = 0;
      int count = 0;
      while (total < 8L * 1024 * 1024) {
        total += server.served.get(count++).getValue().data().length;
      }
      shares.put(true, server.bytesTo(bigBlocks, count));
      shares.put(false, server.bytesTo(smallBlocks, count));
      final long difference = Math.abs(shares.get(true) - shares.get(false));
      if (fair) {
        assertThat(difference).isLessThanOrEqualTo(2L * BitswapConfig.DEFAULT.bytesPerTurn());
      } else {
        assertThat(difference).isGreaterThan(2L * BitswapConfig.DEFAULT.bytesPerTurn());
      }
    }
  }
}
