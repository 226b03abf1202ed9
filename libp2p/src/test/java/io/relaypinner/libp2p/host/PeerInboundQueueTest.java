package io.relaypinner.libp2p.host;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.util.concurrent.MockTicker;
import io.netty.util.concurrent.Ticker;
import io.relaypinner.libp2p.host.LimitCounters.Limit;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The per-peer inbound budget is shared by all of a peer's streams: a peer cannot multiply its
 * backlog by opening streams of several protocols (the per-stream limits before it allowed 32
 * bitswap messages per stream times 128 streams, and 64 more per gossipsub stream).
 */
class PeerInboundQueueTest {
  private final LimitCounters counters = new LimitCounters();
  private final MockTicker ticker = Ticker.newMockTicker();

  @Test
  void budget_isSharedAcrossStreamsOfSeveralProtocols() {
    final PeerInboundQueue queue = new PeerInboundQueue(8, 1 << 20, counters, ticker);
    final List<EmbeddedChannel> streams = new ArrayList<>();
    final List<Runnable> releases = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      streams.add(new EmbeddedChannel());
    }
    // Two messages per stream: 8 in all, the budget. The stream delivering the 8th pauses.
    for (final EmbeddedChannel stream : streams) {
      releases.add(queue.admit(stream, 10));
      releases.add(queue.admit(stream, 10));
    }
    assertThat(queue.messages()).isEqualTo(8);
    assertThat(streams.get(3).config().isAutoRead()).isFalse();
    assertThat(streams.subList(0, 3)).allSatisfy(s -> assertThat(s.config().isAutoRead()).isTrue());
    // Any other stream of the peer delivering while the budget is full pauses as well.
    releases.add(queue.admit(streams.get(0), 10));
    assertThat(streams.get(0).config().isAutoRead()).isFalse();
    assertThat(queue.pausedStreams()).isEqualTo(2);
    assertThat(counters.get(Limit.PEER_INBOUND_QUEUE)).isEqualTo(2);
    // Drained to a quarter: every paused stream reads again.
    for (int i = 0; i < 7; i++) {
      releases.get(i).run();
    }
    streams.forEach(EmbeddedChannel::runPendingTasks);
    assertThat(queue.messages()).isEqualTo(2);
    assertThat(streams).allSatisfy(s -> assertThat(s.config().isAutoRead()).isTrue());
  }

  @Test
  void bytes_pauseToo_andAReleaseCountsOnce() {
    final PeerInboundQueue queue = new PeerInboundQueue(1_000, 4 << 20, counters, ticker);
    final EmbeddedChannel bitswap = new EmbeddedChannel();
    final EmbeddedChannel pubsub = new EmbeddedChannel();
    final Runnable big = queue.admit(bitswap, 4 << 20);
    assertThat(bitswap.config().isAutoRead()).isFalse();
    queue.admit(pubsub, 100);
    assertThat(pubsub.config().isAutoRead()).isFalse();
    big.run();
    big.run();
    assertThat(queue.bytes()).isEqualTo(100);
    assertThat(queue.messages()).isEqualTo(1);
    bitswap.runPendingTasks();
    pubsub.runPendingTasks();
    assertThat(bitswap.config().isAutoRead()).isTrue();
    assertThat(pubsub.config().isAutoRead()).isTrue();
  }

  /**
   * The node's queue reserves every message's bytes from the node budget's libp2p memory: when
   * other surfaces hold that memory, a stream whose message finds no room pauses (the message
   * is counted as held, and the refusal by the budget), and every byte is given back once
   * handled.
   */
  @Test
  void nodeBudget_reservesFromTheMemoryScope_andPausesTheStreamWhenItRefuses() {
    final List<String> hits = new ArrayList<>();
    final io.relaypinner.common.budget.Scope memory = io.relaypinner.common.budget.Scope.root(
        "libp2p", io.relaypinner.common.budget.Limits.NONE.with(
            io.relaypinner.common.budget.Resource.MEMORY, 1_000),
        (scope, resource) -> hits.add(scope.kind() + "/" + resource.label()));
    final PeerInboundQueue node = PeerInboundQueue.node(1_000, 1 << 20, counters, ticker,
        memory);
    final PeerInboundQueue peer = new PeerInboundQueue(1_000, 1 << 20, counters, node);
    final EmbeddedChannel stream = new EmbeddedChannel();
    final Runnable first = peer.admit(stream, 600);
    assertThat(stream.config().isAutoRead()).isTrue();
    assertThat(memory.used(io.relaypinner.common.budget.Resource.MEMORY)).isEqualTo(600);
    final Runnable second = peer.admit(stream, 600);
    assertThat(stream.config().isAutoRead()).isFalse();
    assertThat(hits).containsExactly("libp2p/memory");
    assertThat(memory.used(io.relaypinner.common.budget.Resource.MEMORY)).isEqualTo(1_200);
    first.run();
    second.run();
    stream.runPendingTasks();
    assertThat(stream.config().isAutoRead()).isTrue();
    assertThat(memory.used(io.relaypinner.common.budget.Resource.MEMORY)).isZero();
  }

  @Test
  void nodeBudget_pausesPeersThatAreEachWithinTheirOwn_andResumesOnceBothDrain() {
    // Many peers each within their budget filled the relay's heap together (40 hostile peers,
    // 16 MiB each, on a 160 MiB heap): the node's budget bounds them all.
    final PeerInboundQueue node = PeerInboundQueue.node(1_000, 100, counters, ticker);
    final List<PeerInboundQueue> peers = new ArrayList<>();
    final List<EmbeddedChannel> streams = new ArrayList<>();
    final List<Runnable> releases = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      peers.add(new PeerInboundQueue(1_000, 60, counters, node));
      streams.add(new EmbeddedChannel());
    }
    for (int i = 0; i < 4; i++) {
      releases.add(peers.get(i).admit(streams.get(i), 25));
    }
    assertThat(node.bytes()).isEqualTo(100);
    assertThat(streams.get(3).config().isAutoRead()).isFalse();
    assertThat(streams.subList(0, 3)).allSatisfy(s -> assertThat(s.config().isAutoRead()).isTrue());
    assertThat(counters.get(Limit.NODE_INBOUND_QUEUE)).isEqualTo(1);
    assertThat(counters.get(Limit.PEER_INBOUND_QUEUE)).isZero();
    // Peer 0 also fills its own budget; then the node drains, but peer 0's own backlog holds it.
    releases.add(peers.get(0).admit(streams.get(0), 40));
    assertThat(streams.get(0).config().isAutoRead()).isFalse();
    assertThat(counters.get(Limit.PEER_INBOUND_QUEUE)).isEqualTo(1);
    releases.get(1).run();
    releases.get(2).run();
    releases.get(3).run();
    streams.forEach(EmbeddedChannel::runPendingTasks);
    assertThat(node.bytes()).isEqualTo(65);
    assertThat(streams.get(3).config().isAutoRead()).isFalse();
    releases.get(0).run();
    streams.forEach(EmbeddedChannel::runPendingTasks);
    // Node at 40 of 100 and peer 0 at 40 of 60: both above a quarter, still paused.
    assertThat(streams.get(0).config().isAutoRead()).isFalse();
    releases.get(4).run();
    streams.forEach(EmbeddedChannel::runPendingTasks);
    assertThat(node.bytes()).isZero();
    assertThat(streams).allSatisfy(s -> assertThat(s.config().isAutoRead()).isTrue());
  }

  @Test
  void fullForNanos_countsFromTheFirstPause_andRestartsAfterTheBudgetDrained() {
    final PeerInboundQueue node = PeerInboundQueue.node(1_000, 1 << 20, counters, ticker);
    final PeerInboundQueue queue = new PeerInboundQueue(2, 1 << 20, counters, node);
    final EmbeddedChannel stream = new EmbeddedChannel();
    final Runnable first = queue.admit(stream, 10);
    ticker.advance(5, TimeUnit.SECONDS);
    assertThat(queue.fullForNanos(ticker.nanoTime())).isZero();

    final Runnable second = queue.admit(stream, 10);
    ticker.advance(3, TimeUnit.SECONDS);
    // A third message while full does not restart the count.
    final Runnable third = queue.admit(stream, 10);
    ticker.advance(1, TimeUnit.SECONDS);
    assertThat(queue.fullForNanos(ticker.nanoTime())).isEqualTo(TimeUnit.SECONDS.toNanos(4));

    first.run();
    second.run();
    third.run();
    stream.runPendingTasks();
    assertThat(queue.fullForNanos(ticker.nanoTime())).isZero();
    queue.admit(stream, 10);
    queue.admit(stream, 10);
    ticker.advance(2, TimeUnit.SECONDS);
    assertThat(queue.fullForNanos(ticker.nanoTime())).isEqualTo(TimeUnit.SECONDS.toNanos(2));
  }

  @Test
  void defaults_limitBitswapAndGossipsubStreamsPerConnection() {
    assertThat(ConnectionLimits.DEFAULT.protocolLimit("/ipfs/bitswap/1.2.0").getValue())
        .isEqualTo(32);
    assertThat(ConnectionLimits.DEFAULT.protocolLimit("/ipfs/bitswap").getKey())
        .isEqualTo(ConnectionLimits.DEFAULT.protocolLimit("/ipfs/bitswap/1.1.0").getKey());
    assertThat(ConnectionLimits.DEFAULT.protocolLimit("/meshsub/1.2.0").getValue()).isEqualTo(2);
  }
}
