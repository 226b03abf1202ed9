package io.relaypinner.libp2p.protocol.kad;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.relaypinner.common.budget.LimitListener;
import io.relaypinner.common.budget.Limits;
import io.relaypinner.common.budget.Scope;
import io.relaypinner.libp2p.crypto.KeyType;
import io.relaypinner.libp2p.crypto.Keys;
import io.relaypinner.libp2p.host.Connection;
import io.relaypinner.libp2p.host.Host;
import io.relaypinner.libp2p.host.HostConfig;
import io.relaypinner.libp2p.host.RawExchange;
import io.relaypinner.libp2p.netty.EventLoops;
import io.relaypinner.multiformats.Multiaddr;
import io.relaypinner.multiformats.Multihash;
import io.relaypinner.multiformats.Uvarint;
import java.io.ByteArrayOutputStream;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Six Java nodes over real TCP on loopback, five in server mode and one client: bootstrap,
 * provide on one, find on another; and the server's stream bounds against raw bytes. One
 * network for the class.
 */
class KadDhtIT {
  private static final SecureRandom RANDOM = new SecureRandom();
  private static final KadConfig CONFIG = KadConfig.builder()
      .streamIdleTimeout(Duration.ofMillis(500)).requestTimeout(Duration.ofSeconds(5)).build();
  private static EventLoops loops;
  private static final List<Host> hosts = new ArrayList<>();
  private static final List<KadDht> dhts = new ArrayList<>();

  @BeforeAll
  static void network() throws Exception {
    loops = EventLoops.create(2, "kad-it");
    for (int i = 0; i < 6; i++) {
      final Host host = new Host(Keys.generate(KeyType.ED25519, RANDOM), HostConfig.builder()
          .listenAddresses(List.of(Multiaddr.parse("/ip4/127.0.0.1/tcp/0")))
          .agentVersion("relay-pinner/kad-test").build(), loops, Clock.systemUTC());
      host.start().get(5, TimeUnit.SECONDS);
      hosts.add(host);
      dhts.add(KadDht.start(host, CONFIG, i < 5 ? KadDht.Mode.SERVER : KadDht.Mode.CLIENT,
          Scope.root("dht_providers", Limits.NONE, LimitListener.NONE), host::listenAddresses));
    }
    final Multiaddr first = hosts.get(0).listenAddresses().get(0)
        .withPeerId(hosts.get(0).peerId());
    for (int i = 1; i < 6; i++) {
      dhts.get(i).bootstrap(List.of(first)).get(10, TimeUnit.SECONDS);
    }
    await().atMost(Duration.ofSeconds(10)).until(() -> dhts.get(0).table().size() == 4);
    for (final KadDht dht : dhts) {
      dht.refresh().get(20, TimeUnit.SECONDS);
    }
  }

  @AfterAll
  static void stop() {
    dhts.forEach(KadDht::close);
    hosts.forEach(Host::close);
    loops.shutdownGracefully(Duration.ofSeconds(3));
  }

  @Test
  void provide_thenFindProviders_shouldFindTheProvider_overTcp() throws Exception {
    final byte[] key = Multihash.sha2_256("kad-it content".getBytes()).bytes();

    final KadClient.ProvideResult provided = dhts.get(3).provide(key).get(20, TimeUnit.SECONDS);
    final KadLookup.Result found = dhts.get(5).findProviders(key, 1).get(20, TimeUnit.SECONDS);

    assertThat(provided.sent()).isGreaterThanOrEqualTo(3);
    assertThat(found.providers()).extracting(KadPeer::id).containsExactly(hosts.get(3).peerId());
    assertThat(found.providers().get(0).addresses())
        .containsExactlyElementsOf(hosts.get(3).listenAddresses());
    // The client-mode node does not answer, so it is in nobody's routing table.
    for (int i = 0; i < 5; i++) {
      assertThat(dhts.get(i).table().contains(hosts.get(5).peerId())).isFalse();
    }
  }

  @Test
  void closestPeers_shouldReturnTheServers_overTcp() throws Exception {
    final KadLookup.Result result = dhts.get(5).closestPeers(hosts.get(2).peerId().bytes())
        .get(20, TimeUnit.SECONDS);

    assertThat(result.closest()).extracting(KadPeer::id).contains(hosts.get(2).peerId())
        .doesNotContain(hosts.get(5).peerId());
  }

  @Test
  void serverStream_shouldAnswerSeveralRequests_andCloseOnAnOversizedOne() throws Exception {
    final Connection connection = hosts.get(5).dial(hosts.get(1).listenAddresses().get(0)
        .withPeerId(hosts.get(1).peerId())).get(5, TimeUnit.SECONDS);
    final byte[] ping = KadCodec.encode(KadMessage.request(KadMessage.Type.PING, new byte[0]));
    final ByteArrayOutputStream two = new ByteArrayOutputStream();
    two.write(RawExchange.framed(ping));
    two.write(RawExchange.framed(KadCodec.encode(KadMessage.request(KadMessage.Type.FIND_NODE,
        hosts.get(0).peerId().bytes()))));

    final byte[] answers = RawExchange.exchange(connection, KadConfig.PROTOCOL_ID,
        two.toByteArray());

    final int firstLength = (int) Uvarint.read(answers, 0, answers.length);
    final int second = Uvarint.size(firstLength) + firstLength;
    final KadMessage findNode = KadCodec.decode(RawExchange.unframed(
        java.util.Arrays.copyOfRange(answers, second, answers.length)), CONFIG.codecLimits());
    assertThat(findNode.type()).isEqualTo(KadMessage.Type.FIND_NODE);
    assertThat(findNode.closerPeers()).extracting(KadPeer::id).contains(hosts.get(0).peerId());

    final long malformed = dhts.get(1).counters().get("server_refused_malformed");
    final byte[] oversized = new byte[CONFIG.maxRequestSize() + 10];
    final byte[] closed = RawExchange.exchange(connection, KadConfig.PROTOCOL_ID,
        RawExchange.framed(oversized));
    assertThat(closed).isEmpty();
    assertThat(dhts.get(1).counters().get("server_refused_malformed")).isEqualTo(malformed + 1);
  }
}
