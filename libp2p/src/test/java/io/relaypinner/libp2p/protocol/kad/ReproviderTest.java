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
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The reprovider on the simulated DHT of {@link KadLookupTest} (200 in-memory server nodes that
 * store provider records), on one manual clock shared with the servers so that records expire.
 */
class ReproviderTest {
  private static final int NODES = 200;
  private static final int KEYS = 2_000;
  private static final KadConfig config = KadConfig.builder().peerRate(1_000_000, 1_000_000)
      .globalRequestsPerSecond(1_000_000).build();
  private final Random random = new Random(7);
  /** One clock for the servers and the reprovider, so that records expire as time passes. */
  private static final MutableClock clock =
      new MutableClock(Instant.parse("2026-11-29T00:00:00Z"));
  private static final ManualTimer timer = new ManualTimer(clock);
  /** The simulated network, built once (each test provides its own random keys). */
  private static final Map<PeerId, KadServerEngine> nodes = new HashMap<>();
  private static final List<PeerId> ids = new ArrayList<>();
  private static final List<ProviderStore> stores = new ArrayList<>();
  private static final List<KadKey> points = new ArrayList<>();
  private static final AtomicInteger addProviders = new AtomicInteger();
  private Reprovider reprovider;
  private final PeerId self = KadTestPeers.random(random);
  private final KadPeer us = new KadPeer(self,
      List.of(Multiaddr.parse("/ip4/203.0.113.5/tcp/4001")));

  private static Multiaddr address(final PeerId peer) {
    return Multiaddr.parse("/ip4/10.0.0.1/tcp/" + (1 + (peer.hashCode() & 0x7fff)));
  }

  @BeforeAll
  static void network() {
    final Random seeds = new Random(4);
    for (int i = 0; i < NODES; i++) {
      ids.add(KadTestPeers.random(seeds));
    }
    for (final PeerId id : ids) {
      points.add(KadKey.of(id));
      final RoutingTable table = new RoutingTable(id, config.k(), clock);
      for (final PeerId other : ids) {
        table.offer(other);
      }
      final ProviderStore store = new ProviderStore(config, clock,
          Scope.root("dht", Limits.NONE, LimitListener.NONE));
      stores.add(store);
      nodes.put(id, new KadServerEngine(config, clock, table, store,
          peer -> List.of(address(peer)), () -> List.of(address(id))));
    }
  }

  @BeforeEach
  void reset() {
    addProviders.set(0);
  }

  @AfterEach
  void close() {
    if (reprovider != null) {
      reprovider.close();
    }
  }

  private static KadLookup.Network network(final PeerId from) {
    return (peer, request) -> {
      if (request.type() == KadMessage.Type.ADD_PROVIDER) {
        addProviders.incrementAndGet();
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

  private static KadClient client(final PeerId id, final int firstSeed) {
    final RoutingTable table = new RoutingTable(id, config.k(), clock);
    for (int i = firstSeed; i < firstSeed + 4; i++) {
      table.offer(ids.get(i));
    }
    return new KadClient(config, table, new ProviderStore(config, clock,
        Scope.root("dht", Limits.NONE, LimitListener.NONE)), network(id), timer,
        peer -> List.of(address(peer)));
  }

  private Reprovider reprovider(final KadClient client, final int sendsPerSecond) {
    reprovider = new Reprovider(client, config, clock, timer, () -> us,
        new Reprovider.Settings(Duration.ofHours(22), Duration.ofSeconds(10), 10_000, 4, 32,
            sendsPerSecond));
    return reprovider;
  }

  private boolean findable(final KadClient finder, final byte[] key) {
    return finder.findProviders(key, 1).join().providers().contains(us);
  }

  /** How many of the k nodes truly closest to {@code key} hold our record for it. */
  private int holders(final byte[] key) {
    final KadKey point = KadKey.of(key);
    final List<Integer> order = new ArrayList<>();
    for (int i = 0; i < NODES; i++) {
      order.add(i);
    }
    order.sort(Comparator.comparing(points::get, point.byDistance()));
    int holding = 0;
    for (final int i : order.subList(0, config.k())) {
      if (stores.get(i).providers(key, 64).contains(us)) {
        holding++;
      }
    }
    return holding;
  }

  /** Advances in steps so that the rate limiter's wake-ups run. */
  private void advance(final Duration total, final Duration step) {
    for (Duration done = Duration.ZERO; done.compareTo(total) < 0; done = done.plus(step)) {
      timer.advance(step);
    }
  }

  @Test
  void keys_shouldBeProvidedInRegionBatches_andFindable() {
    reprovider(client(self, 0), 1_000_000);
    final List<byte[]> keys = new ArrayList<>();
    for (int i = 0; i < KEYS; i++) {
      keys.add(KadTestPeers.contentKey(random));
      assertThat(reprovider.add(keys.get(i))).isTrue();
    }
    assertThat(reprovider.backlog()).isEqualTo(KEYS);

    timer.advance(Duration.ofSeconds(10));

    final Map<String, Long> counters = reprovider.counters();
    assertThat(counters).containsEntry("provided", (long) KEYS).containsEntry("failed", 0L)
        .containsEntry("backlog", 0L).containsEntry("batches", 1L);
    // About NODES / k leaf regions, one lookup each: far below one lookup per key.
    assertThat(counters.get("lookups")).isLessThanOrEqualTo(2L * NODES / config.k() + 8);
    assertThat(addProviders.get()).isEqualTo(KEYS * config.k());
    // Every key is held by most of its true k closest nodes, so any lookup finds it (the peers
    // outside a leaf region are those closest to the region's looked-up key: nearly right).
    int held = 0;
    int min = config.k();
    for (final byte[] key : keys) {
      final int atClosest = holders(key);
      min = Math.min(min, atClosest);
      held += atClosest;
    }
    assertThat(min).isGreaterThanOrEqualTo(config.k() / 2);
    assertThat(held).isGreaterThan(KEYS * config.k() * 9 / 10);
    final KadClient finder = client(KadTestPeers.random(random), NODES - 4);
    for (final byte[] key : keys.subList(0, 200)) {
      assertThat(findable(finder, key)).isTrue();
    }
  }

  @Test
  void sweep_shouldReprovideBeforeExpiry_andNotRemovedKeys() {
    reprovider(client(self, 0), 1_000_000);
    reprovider.start();
    final List<byte[]> keys = new ArrayList<>();
    for (int i = 0; i < 300; i++) {
      keys.add(KadTestPeers.contentKey(random));
      reprovider.add(keys.get(i));
    }
    timer.advance(Duration.ofSeconds(10));
    final List<byte[]> removed = keys.subList(0, 50);
    removed.forEach(reprovider::remove);
    addProviders.set(0);

    // Sweeps at 22 h and 44 h renew the 250 kept keys; the removed ones expire at 48 h.
    advance(Duration.ofHours(50), Duration.ofHours(1));
    stores.forEach(ProviderStore::expire);

    assertThat(reprovider.counters()).containsEntry("sweeps", 2L)
        .containsEntry("provided", 300L + 2 * 250L).containsEntry("backlog", 0L);
    assertThat(addProviders.get()).isEqualTo(2 * 250 * config.k());
    final KadClient finder = client(KadTestPeers.random(random), NODES - 4);
    for (final byte[] key : keys.subList(50, 300)) {
      assertThat(findable(finder, key)).isTrue();
    }
    for (final byte[] key : removed) {
      assertThat(findable(finder, key)).isFalse();
    }
  }

  @Test
  void sends_shouldKeepTheRate_andTheBacklogShrinks() {
    reprovider(client(self, 0), 100);
    for (int i = 0; i < 20; i++) {
      reprovider.add(KadTestPeers.contentKey(random));
    }
    timer.advance(Duration.ofSeconds(10));
    // 20 keys x 20 peers = 400 sends at 100/s: a burst of 100, then 100 a second.
    assertThat(addProviders.get()).isLessThanOrEqualTo(100);
    assertThat(reprovider.backlog()).isGreaterThan(0);

    advance(Duration.ofSeconds(4), Duration.ofMillis(100));

    assertThat(addProviders.get()).isEqualTo(400);
    assertThat(reprovider.counters()).containsEntry("provided", 20L)
        .containsEntry("backlog", 0L);
  }

  @Test
  void keys_shouldWait_whileNoPeerIsKnown() {
    final KadClient lonely = new KadClient(config, new RoutingTable(self, config.k(), clock),
        new ProviderStore(config, clock, Scope.root("dht", Limits.NONE, LimitListener.NONE)),
        network(self), timer, peer -> List.of(address(peer)));
    reprovider(lonely, 1_000_000);
    reprovider.add(KadTestPeers.contentKey(random));

    timer.advance(Duration.ofSeconds(10));
    assertThat(reprovider.counters()).containsEntry("lookups", 0L).containsEntry("backlog", 1L);
    ids.subList(0, 4).forEach(lonely.table()::offer);
    timer.advance(Duration.ofSeconds(10));

    assertThat(reprovider.counters()).containsEntry("provided", 1L)
        .containsEntry("backlog", 0L);
  }

  @Test
  void add_shouldRefuseKeys_pastTheBound() {
    reprovider = new Reprovider(client(self, 0), config, clock, timer,
        () -> us, new Reprovider.Settings(Duration.ofHours(22), Duration.ofSeconds(10), 2, 1, 1,
            1));

    assertThat(reprovider.add(KadTestPeers.contentKey(random))).isTrue();
    assertThat(reprovider.add(KadTestPeers.contentKey(random))).isTrue();
    assertThat(reprovider.add(KadTestPeers.contentKey(random))).isFalse();

    assertThat(reprovider.counters()).containsEntry("refused_full", 1L)
        .containsEntry("keys", 2L);
  }
}
