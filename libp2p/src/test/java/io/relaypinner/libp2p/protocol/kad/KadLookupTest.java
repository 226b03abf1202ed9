package io.relaypinner.libp2p.protocol.kad;

import static org.assertj.core.api.Assertions.assertThat;

import io.relaypinner.common.budget.LimitListener;
import io.relaypinner.common.budget.Limits;
import io.relaypinner.common.budget.Scope;
import io.relaypinner.multiformats.Multiaddr;
import io.relaypinner.multiformats.PeerId;
import io.relaypinner.testkit.MutableClock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Lookups against a simulated DHT of 200 in-memory server nodes, each a {@link KadServerEngine}
 * with its own routing table that has seen every other node (so far buckets hold k of them).
 */
class KadLookupTest {
  private static final int NODES = 200;
  private static final KadConfig config = KadConfig.builder().peerRate(1_000_000, 1_000_000)
      .globalRequestsPerSecond(1_000_000).build();
  private final Random random = new Random(5);
  private final MutableClock clock = new MutableClock(Instant.parse("2026-11-29T00:00:00Z"));
  private final ManualTimer timer = new ManualTimer(clock);
  /** The simulated network, built once: lookups do not change the servers' tables. */
  private static final Map<PeerId, KadServerEngine> nodes = new HashMap<>();
  private static final List<PeerId> ids = new ArrayList<>();
  /** Peers that never answer (their requests hang until the request timeout). */
  private final Set<PeerId> silent = new HashSet<>();
  private final AtomicInteger requests = new AtomicInteger();
  private final PeerId self = KadTestPeers.random(random);

  private static Multiaddr address(final PeerId peer) {
    return Multiaddr.parse("/ip4/10.0.0.1/tcp/" + (1 + (peer.hashCode() & 0x7fff)));
  }

  @BeforeAll
  static void network() {
    final Random random = new Random(4);
    final MutableClock clock = new MutableClock(Instant.parse("2026-11-29T00:00:00Z"));
    for (int i = 0; i < NODES; i++) {
      ids.add(KadTestPeers.random(random));
    }
    for (final PeerId id : ids) {
      final RoutingTable table = new RoutingTable(id, config.k(), clock);
      for (final PeerId other : ids) {
        table.offer(other);
      }
      nodes.put(id, new KadServerEngine(config, clock, table, new ProviderStore(config, clock,
          Scope.root("dht", Limits.NONE, LimitListener.NONE)), peer -> List.of(address(peer)),
          () -> List.of(address(id))));
    }
  }

  /** Requests are answered synchronously by the node's server engine, as if from {@code from}. */
  private KadLookup.Network network(final PeerId from) {
    return (peer, request) -> {
      requests.incrementAndGet();
      assertThat(peer.addresses()).isNotEmpty();
      if (silent.contains(peer.id())) {
        return new CompletableFuture<>();
      }
      final KadServerEngine node = nodes.get(peer.id());
      if (node == null) {
        return CompletableFuture.failedFuture(new IllegalStateException("no such node"));
      }
      final KadServerEngine.Answer answer = node.handle(from, request);
      return answer.close() ? CompletableFuture.failedFuture(new IllegalStateException("refused"))
          : CompletableFuture.completedFuture(answer.response() != null ? answer.response()
              : request);
    };
  }

  /** A client that knows only {@code seeds} nodes. */
  private KadClient client(final int seeds) {
    final RoutingTable table = new RoutingTable(self, config.k(), clock);
    for (int i = 0; i < seeds; i++) {
      table.offer(ids.get(i));
    }
    return new KadClient(config, table, new ProviderStore(config, clock,
        Scope.root("dht", Limits.NONE, LimitListener.NONE)), network(self), timer,
        KadLookupTest::addresses);
  }

  private static List<Multiaddr> addresses(final PeerId peer) {
    return List.of(address(peer));
  }

  private List<PeerId> trueClosest(final byte[] key, final int count) {
    final List<PeerId> sorted = new ArrayList<>(ids);
    sorted.removeAll(silent);
    sorted.sort(Comparator.comparing(KadKey::of, KadKey.of(key).byDistance()));
    return sorted.subList(0, count);
  }

  @Test
  void closestPeers_shouldFindTheTrueKClosest_fromAFewSeeds() {
    final KadClient client = client(5);
    for (int i = 0; i < 5; i++) {
      final byte[] key = KadTestPeers.contentKey(random);

      final KadLookup.Result result = client.closestPeers(key).join();

      assertThat(result.closest()).extracting(KadPeer::id)
          .containsExactlyElementsOf(trueClosest(key, 20));
      assertThat(result.timedOut()).isFalse();
      assertThat(result.asked()).isLessThan(NODES / 2);
    }
    assertThat(client.table().size()).isGreaterThan(20);
    assertThat(timer.pending()).isZero();
  }

  @Test
  void provide_thenFindProviders_shouldFindTheProvider_fromAnotherClient() {
    final KadClient provider = client(3);
    final byte[] key = KadTestPeers.contentKey(random);
    final KadPeer us = new KadPeer(self, List.of(Multiaddr.parse("/ip4/203.0.113.5/tcp/4001")));

    final KadClient.ProvideResult provided = provider.provide(key, us).join();

    assertThat(provided.sent()).isEqualTo(20);
    final PeerId searcher = KadTestPeers.random(random);
    final RoutingTable other = new RoutingTable(searcher, config.k(), clock);
    for (int i = NODES - 4; i < NODES; i++) {
      other.offer(ids.get(i));
    }
    final KadClient finder = new KadClient(config, other, new ProviderStore(config, clock,
        Scope.root("dht", Limits.NONE, LimitListener.NONE)), network(searcher), timer,
        KadLookupTest::addresses);
    requests.set(0);

    final KadLookup.Result found = finder.findProviders(key, 1).join();

    assertThat(found.providers()).containsExactly(us);
    assertThat(requests.get()).isLessThan(40);
  }

  @Test
  void lookup_shouldSkipSilentPeers_afterTheRequestTimeout() {
    final KadClient client = client(5);
    final byte[] key = KadTestPeers.contentKey(random);
    silent.addAll(trueClosest(key, 3));

    final CompletableFuture<KadLookup.Result> lookup = client.closestPeers(key);
    assertThat(lookup).isNotDone();
    for (int i = 0; i < 10 && !lookup.isDone(); i++) {
      timer.advance(config.requestTimeout());
    }

    final KadLookup.Result result = lookup.join();
    assertThat(result.timedOut()).isFalse();
    assertThat(result.failed()).isGreaterThanOrEqualTo(3);
    final List<PeerId> found = result.closest().stream().map(KadPeer::id).toList();
    assertThat(found).hasSize(20).doesNotContainAnyElementsOf(silent);
    // Without the three best-informed peers a far one may be missed, as in any Kademlia.
    assertThat(found.stream().filter(trueClosest(key, 20)::contains).count())
        .isGreaterThanOrEqualTo(18);
  }

  @Test
  void lookup_shouldEndAtItsDeadline_withWhatItHas() {
    final KadClient client = client(5);
    silent.addAll(ids);
    silent.removeAll(ids.subList(0, 5));
    final KadConfig quick = config.toBuilder().requestTimeout(Duration.ofMinutes(5))
        .lookupTimeout(Duration.ofSeconds(30)).build();
    final KadLookup lookup = new KadLookup(quick, KadMessage.Type.FIND_NODE,
        KadTestPeers.contentKey(random), self, 0, network(self), timer, KadLookup.Listener.NONE);
    final List<KadPeer> seeds = ids.subList(0, 5).stream()
        .map(p -> new KadPeer(p, addresses(p))).toList();

    final CompletableFuture<KadLookup.Result> result = lookup.start(seeds);
    timer.advance(Duration.ofSeconds(31));

    assertThat(result.join().timedOut()).isTrue();
    // The three closest seeds were asked first; their silent closer peers held the lookup.
    assertThat(result.join().closest()).hasSize(3);
    assertThat(timer.pending()).isZero();
  }

  @Test
  void refresh_shouldFillTheTable_fromOneSeed() {
    final KadClient client = client(1);
    clock.advance(config.refreshInterval().plusMinutes(1));

    client.refresh(random).join();

    assertThat(client.table().size()).isGreaterThanOrEqualTo(60);
    assertThat(client.table().refreshDue(config.refreshInterval(), config.maxRefreshCpl()))
        .isEmpty();
    assertThat(client.closestPeers(self.bytes()).join().closest()).extracting(KadPeer::id)
        .containsExactlyElementsOf(trueClosest(self.bytes(), 20));
  }
}
