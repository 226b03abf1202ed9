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
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

class KadServerEngineTest {
  private static final Multiaddr ADDRESS = Multiaddr.parse("/ip4/192.0.2.9/tcp/4001");
  private final Random random = new Random(11);
  private final MutableClock clock = new MutableClock(Instant.parse("2026-11-29T00:00:00Z"));
  private final PeerId self = KadTestPeers.random(random);
  private final RoutingTable table = new RoutingTable(self, 20, clock);

  private KadServerEngine engine(final KadConfig config) {
    final ProviderStore store = new ProviderStore(config, clock,
        Scope.root("dht", Limits.NONE, LimitListener.NONE));
    return new KadServerEngine(config, clock, table, store, peer -> List.of(ADDRESS),
        () -> List.of(Multiaddr.parse("/ip4/198.51.100.1/tcp/4001")));
  }

  private List<PeerId> fill(final int count) {
    final List<PeerId> peers = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      final PeerId peer = KadTestPeers.random(random);
      if (table.offer(peer).outcome() == RoutingTable.Outcome.ADDED) {
        peers.add(peer);
      }
    }
    return peers;
  }

  @Test
  void findNode_shouldAnswerTheKClosestPeers_butNeverTheRequester() {
    final KadServerEngine engine = engine(KadConfig.DEFAULT);
    final List<PeerId> peers = fill(200);
    final byte[] key = KadTestPeers.contentKey(random);
    peers.sort(Comparator.comparing(KadKey::of, KadKey.of(key).byDistance()));
    final PeerId requester = peers.get(0);

    final KadServerEngine.Answer answer = engine.handle(requester,
        KadMessage.request(KadMessage.Type.FIND_NODE, key));

    assertThat(answer.close()).isFalse();
    assertThat(answer.response().closerPeers()).extracting(KadPeer::id)
        .containsExactlyElementsOf(peers.subList(1, 21));
    assertThat(answer.response().closerPeers()).allSatisfy(p ->
        assertThat(p.addresses()).containsExactly(ADDRESS));
  }

  @Test
  void findNode_shouldIncludeUs_whenTheKeyIsOurId() {
    final KadServerEngine answerer = engine(KadConfig.DEFAULT);

    final KadMessage response = answerer.handle(KadTestPeers.random(random),
        KadMessage.request(KadMessage.Type.FIND_NODE, self.bytes())).response();

    assertThat(response.closerPeers()).extracting(KadPeer::id).containsExactly(self);
  }

  @Test
  void addProvider_shouldStoreOnlyTheSender_andGetProvidersShouldReturnIt() {
    final KadServerEngine engine = engine(KadConfig.DEFAULT);
    fill(30);
    final byte[] key = KadTestPeers.contentKey(random);
    final PeerId sender = KadTestPeers.random(random);
    final PeerId other = KadTestPeers.random(random);

    final KadServerEngine.Answer added = engine.handle(sender, new KadMessage(
        KadMessage.Type.ADD_PROVIDER, key, List.of(), List.of(new KadPeer(other, List.of(ADDRESS)),
            new KadPeer(sender, List.of(ADDRESS))), false));
    final KadMessage found = engine.handle(KadTestPeers.random(random),
        KadMessage.request(KadMessage.Type.GET_PROVIDERS, key)).response();

    assertThat(added.response()).isNull();
    assertThat(added.close()).isFalse();
    assertThat(found.providerPeers()).containsExactly(new KadPeer(sender, List.of(ADDRESS)));
    assertThat(found.closerPeers()).hasSize(20);
    assertThat(engine.counters()).containsEntry("refused_not_sender", 1L)
        .containsEntry("provider_added", 1L);
  }

  @Test
  void handle_shouldRefuseValueRecordsAndBadKeys_andAnswerGetValueWithoutARecord() {
    final KadServerEngine engine = engine(KadConfig.DEFAULT);
    fill(10);

    final KadServerEngine.Answer put = engine.handle(KadTestPeers.random(random),
        KadMessage.request(KadMessage.Type.PUT_VALUE, "/ipns/x".getBytes()));
    final KadServerEngine.Answer get = engine.handle(KadTestPeers.random(random),
        KadMessage.request(KadMessage.Type.GET_VALUE, "/ipns/x".getBytes()));
    final KadServerEngine.Answer bad = engine.handle(KadTestPeers.random(random),
        KadMessage.request(KadMessage.Type.GET_PROVIDERS, new byte[] {1, 2, 3}));
    final KadServerEngine.Answer ping = engine.handle(KadTestPeers.random(random),
        KadMessage.request(KadMessage.Type.PING, new byte[0]));

    assertThat(put.close()).isTrue();
    assertThat(put.refusal()).isEqualTo(KadServerEngine.Refusal.VALUE_RECORD);
    assertThat(get.response().hasRecord()).isFalse();
    assertThat(get.response().closerPeers()).isNotEmpty();
    assertThat(bad.refusal()).isEqualTo(KadServerEngine.Refusal.BAD_KEY);
    assertThat(ping.response().type()).isEqualTo(KadMessage.Type.PING);
  }

  @Test
  void handle_shouldRateLimitPerPeerAndInAll_andRecoverWithTime() {
    final KadServerEngine engine = engine(KadConfig.builder().peerRate(2, 5)
        .globalRequestsPerSecond(8).maxRatedPeers(3).build());
    final PeerId storm = KadTestPeers.random(random);
    final KadMessage ping = KadMessage.request(KadMessage.Type.PING, new byte[0]);

    int answered = 0;
    for (int i = 0; i < 10; i++) {
      if (!engine.handle(storm, ping).close()) {
        answered++;
      }
    }
    assertThat(answered).isEqualTo(5);
    for (int i = 0; i < 10; i++) {
      engine.handle(KadTestPeers.random(random), ping);
    }
    assertThat(engine.counters()).containsEntry("refused_peer_rate", 5L)
        .containsEntry("refused_global_rate", 7L);
    assertThat(engine.ratedPeers()).isEqualTo(3);

    clock.advance(Duration.ofSeconds(1));
    assertThat(engine.handle(storm, ping).close()).isFalse();
  }

  @Test
  void floods_shouldStayWithinTheirBounds_whileARoutingTablePeerIsStillAnswered() {
    final KadServerEngine engine = engine(KadConfig.builder().peerRate(5, 5)
        .globalRequestsPerSecond(100).providerLimits(500, 8, 16).maxRatedPeers(256).build());
    final List<PeerId> servers = fill(40);
    final byte[] honestKey = KadTestPeers.contentKey(random);
    engine.handle(servers.get(0), new KadMessage(KadMessage.Type.ADD_PROVIDER, honestKey,
        List.of(), List.of(new KadPeer(servers.get(0), List.of(ADDRESS))), false));

    // 1,000 fresh PeerIds, each announcing 10 random keys and asking FIND_NODE, in one second.
    for (int i = 0; i < 1_000; i++) {
      final PeerId sybil = KadTestPeers.random(random);
      for (int j = 0; j < 10; j++) {
        engine.handle(sybil, new KadMessage(KadMessage.Type.ADD_PROVIDER,
            KadTestPeers.contentKey(random), List.of(), List.of(new KadPeer(sybil,
                List.of(ADDRESS))), false));
      }
      engine.handle(sybil, KadMessage.request(KadMessage.Type.FIND_NODE,
          KadTestPeers.contentKey(random)));
    }
    final KadServerEngine.Answer honest = engine.handle(servers.get(1),
        KadMessage.request(KadMessage.Type.GET_PROVIDERS, honestKey));

    assertThat(honest.close()).isFalse();
    assertThat(honest.response().providerPeers()).extracting(KadPeer::id)
        .containsExactly(servers.get(0));
    // Per peer 5 of 11 pass; of those 5,000 the global bucket lets 100 through.
    assertThat(engine.counters()).containsEntry("refused_peer_rate", 6_000L)
        .containsEntry("refused_global_rate", 4_900L);
    assertThat(engine.counters().get("provider_added")).isLessThanOrEqualTo(1 + 100);
    assertThat(engine.ratedPeers()).isEqualTo(256);
  }

  @Test
  void getProviders_shouldListUsFirst_whenWeHoldTheContent() {
    final KadServerEngine engine = engine(KadConfig.DEFAULT);
    final byte[] held = KadTestPeers.contentKey(random);
    final byte[] other = KadTestPeers.contentKey(random);
    engine.holds(key -> java.util.Arrays.equals(key, held));
    final PeerId provider = KadTestPeers.random(random);
    engine.handle(provider, new KadMessage(KadMessage.Type.ADD_PROVIDER, held, List.of(),
        List.of(new KadPeer(provider, List.of(ADDRESS))), false));

    final KadMessage found = engine.handle(KadTestPeers.random(random),
        KadMessage.request(KadMessage.Type.GET_PROVIDERS, held)).response();
    final KadMessage none = engine.handle(KadTestPeers.random(random),
        KadMessage.request(KadMessage.Type.GET_PROVIDERS, other)).response();

    assertThat(found.providerPeers()).extracting(KadPeer::id).containsExactly(self, provider);
    assertThat(found.providerPeers().get(0).addresses())
        .containsExactly(Multiaddr.parse("/ip4/198.51.100.1/tcp/4001"));
    assertThat(none.providerPeers()).isEmpty();
  }
}
