package io.relaypinner.libp2p.protocol.kad;

import static org.assertj.core.api.Assertions.assertThat;

import io.relaypinner.common.budget.LimitListener;
import io.relaypinner.common.budget.Limits;
import io.relaypinner.common.budget.Resource;
import io.relaypinner.common.budget.Scope;
import io.relaypinner.multiformats.Multiaddr;
import io.relaypinner.multiformats.PeerId;
import io.relaypinner.testkit.MutableClock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class ProviderStoreTest {
  private final Random random = new Random(3);
  private final MutableClock clock = new MutableClock(Instant.parse("2026-11-29T00:00:00Z"));
  private final Scope memory = Scope.root("dht_providers", Limits.NONE, LimitListener.NONE);

  private KadPeer provider() {
    return new KadPeer(KadTestPeers.random(random),
        List.of(Multiaddr.parse("/ip4/192.0.2.1/tcp/4001")));
  }

  @Test
  void providers_shouldExpireAfterTheTtl_unlessRefreshed() {
    final ProviderStore store = new ProviderStore(KadConfig.DEFAULT, clock, memory);
    final byte[] key = KadTestPeers.contentKey(random);
    final KadPeer a = provider();
    final KadPeer b = provider();
    store.add(key, a);
    store.add(key, b);

    clock.advance(Duration.ofHours(47));
    assertThat(store.add(key, b)).isEqualTo(ProviderStore.Result.REFRESHED);
    clock.advance(Duration.ofHours(2));

    assertThat(store.providers(key, 20)).containsExactly(b);
    assertThat(store.expire()).isEqualTo(1);
    assertThat(store.size()).isEqualTo(1);
    clock.advance(Duration.ofHours(48));
    store.expire();
    assertThat(store.keys()).isZero();
    assertThat(memory.used(Resource.MEMORY)).isZero();
  }

  @Test
  void add_shouldRefuseAndCount_whenABoundIsReached() {
    final KadConfig config = KadConfig.builder().providerLimits(5, 2, 3).build();
    final ProviderStore store = new ProviderStore(config, clock, memory);
    final byte[] key = KadTestPeers.contentKey(random);
    final KadPeer flooder = provider();

    assertThat(store.add(key, provider())).isEqualTo(ProviderStore.Result.ADDED);
    assertThat(store.add(key, flooder)).isEqualTo(ProviderStore.Result.ADDED);
    assertThat(store.add(key, provider())).isEqualTo(ProviderStore.Result.REFUSED_PER_KEY);
    store.add(KadTestPeers.contentKey(random), flooder);
    store.add(KadTestPeers.contentKey(random), flooder);
    assertThat(store.add(KadTestPeers.contentKey(random), flooder))
        .isEqualTo(ProviderStore.Result.REFUSED_PER_PROVIDER);
    store.add(KadTestPeers.contentKey(random), provider());
    assertThat(store.add(KadTestPeers.contentKey(random), provider()))
        .isEqualTo(ProviderStore.Result.REFUSED_TOTAL);

    assertThat(store.size()).isEqualTo(5);
    assertThat(store.counters()).containsEntry("refused_per_key", 1L)
        .containsEntry("refused_per_provider", 1L).containsEntry("refused_total", 1L);
  }

  @Test
  void add_shouldRefuse_whenTheMemoryScopeIsFull() {
    final AtomicInteger hits = new AtomicInteger();
    final Scope small = Scope.root("dht_providers", Limits.NONE.with(Resource.MEMORY, 2_000),
        (scope, resource) -> hits.incrementAndGet());
    final ProviderStore store = new ProviderStore(KadConfig.DEFAULT, clock, small);
    int stored = 0;
    for (int i = 0; i < 20; i++) {
      if (store.add(KadTestPeers.contentKey(random), provider()).stored()) {
        stored++;
      }
    }

    assertThat(stored).isBetween(1, 6);
    assertThat(hits.get()).isEqualTo(20 - stored);
    assertThat(store.counters()).containsEntry("refused_memory", (long) (20 - stored));
    assertThat(small.used(Resource.MEMORY)).isLessThanOrEqualTo(2_000);
  }

  @Test
  void providers_shouldBeKeyedByTheExactKeyBytes() {
    final ProviderStore store = new ProviderStore(KadConfig.DEFAULT, clock, memory);
    final byte[] key = KadTestPeers.contentKey(random);
    final KadPeer a = provider();
    store.add(key, a);
    final PeerId other = KadTestPeers.random(random);

    assertThat(store.providers(key.clone(), 20)).containsExactly(a);
    assertThat(store.providers(other.bytes(), 20)).isEmpty();
  }
}
