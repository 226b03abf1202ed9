package io.relaypinner.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.relaypinner.libp2p.crypto.KeyType;
import io.relaypinner.libp2p.crypto.Keys;
import io.relaypinner.libp2p.host.Connection;
import io.relaypinner.libp2p.host.Host;
import io.relaypinner.libp2p.host.HostConfig;
import io.relaypinner.libp2p.netty.EventLoops;
import io.relaypinner.libp2p.protocol.relay.CircuitRelayConfig;
import io.relaypinner.libp2p.protocol.relay.HopClient;
import io.relaypinner.libp2p.protocol.relay.pb.CircuitProtos.Status;
import io.relaypinner.libp2p.pubsub.GossipsubConfig;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.multiformats.Multiaddr;
import io.relaypinner.multiformats.Multicodec;
import io.relaypinner.multiformats.Multihash;
import io.relaypinner.multiformats.PeerId;
import io.relaypinner.orbitdb.OrbitDbAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 36's attacks on libp2p surfaces that need more than one peer: a relay following 1,001
 * databases seen by a second relay-pinner (gossipsub subscriptions), and 64 PeerIds from one IP
 * opening circuits (circuit relay v2). Two relays started as an operator starts them
 * ({@link RelayProcess}: the launcher, {@code packaging/jvm.options}, -Xmx160m), shared by the
 * attacks: the <em>follower</em>, which follows 1,001 databases, and the <em>peer</em>, a
 * relay-pinner with the shipped defaults and the circuit relay the PeerIds attack; the two dial
 * each other at start ({@code RELAY_BOOTSTRAP_PEERS}). After each
 * attack an honest client is served ({@link HonestClient}, with a round of one honest JS client
 * that dials each relay it checks) and the heap after a full
 * collection stays under {@link SurfaceAttackIT#HEAP_AFTER_ATTACK} (measured: the follower
 * 15 MiB with its 1,001 databases, the peer 12 to 13 MiB holding 33 circuits; JDK 17, 2026-11).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class Libp2pAttackIT {
  /** One more than a relay-pinner reads in one RPC: the first RPC must be split. */
  private static final int FOLLOWED = GossipsubConfig.MAX_SUBSCRIPTIONS_PER_RPC + 1;
  private static final int ATTACKERS = 64;
  /** Gossipsub's subscription events that are the sender's fault (GossipsubEngine.FAULTS). */
  private static final List<String> SUBSCRIPTION_FAULTS = List.of(
      "drop-subscriptions-over-limit", "drop-topics-over-limit", "drop-topic-too-long");
  private static final SecureRandom RANDOM = new SecureRandom();

  private final EventLoops loops = EventLoops.create(2, "attack-clients");
  private final List<Host> hosts = new ArrayList<>();
  private final HonestJsClient js = HonestJsClient.shared();
  private RelayProcess follower;
  private RelayProcess peer;
  private SourceAddressProxy proxy;

  @BeforeAll
  void start(@TempDir final Path dir) throws Exception {
    // The follower's 1,001 databases as a long run leaves them: followed records in its
    // datastore (as an explicit sync or import writes them), resubscribed at start. Made-up
    // manifests: what the peer does with them (a check, then no more checks for this peer) is
    // topic admission's business; here it is the subscriptions that must arrive.
    final RelayProcess.Builder followerSettings = RelayProcess.builder(dir.resolve("follower"))
        .logDir(dir.resolve("follower-logs")).identity(Keys.generate(KeyType.ED25519, RANDOM))
        .seedFile("an honest file".getBytes(StandardCharsets.UTF_8));
    for (int i = 0; i < FOLLOWED; i++) {
      final Cid manifest = Cid.v1(Multicodec.DAG_CBOR,
          Multihash.sha2_256(("followed database " + i).getBytes(StandardCharsets.UTF_8)));
      followerSettings.seedDatastore("/relay/topics" + new OrbitDbAddress(manifest),
          new byte[] {'r'});
    }
    final RelayProcess.Builder peerSettings = RelayProcess.builder(dir.resolve("peer"))
        .logDir(dir.resolve("peer-logs")).identity(Keys.generate(KeyType.ED25519, RANDOM))
        .seedFile("another honest file".getBytes(StandardCharsets.UTF_8));
    // Both start at once (a start costs seconds) and each dials the other at start: a relay
    // dials once its own listeners are bound, so the later dial of the two finds the other
    // listening.
    followerSettings.env("RELAY_BOOTSTRAP_PEERS", peerSettings.tcpMultiaddr());
    peerSettings.env("RELAY_BOOTSTRAP_PEERS", followerSettings.tcpMultiaddr());
    final CompletableFuture<RelayProcess> peerStart = CompletableFuture.supplyAsync(() -> {
      try {
        return peerSettings.start();
      } catch (final Exception e) {
        throw new IllegalStateException(e);
      }
    });
    try {
      follower = followerSettings.start();
    } finally {
      peer = peerStart.join();
    }
  }

  @AfterAll
  void stop() throws Exception {
    hosts.forEach(Host::close);
    loops.shutdownGracefully(Duration.ofSeconds(2));
    if (proxy != null) {
      proxy.close();
    }
    if (peer != null) {
      peer.close();
    }
    if (follower != null) {
      follower.close();
    }
  }

  /** Honest client served, heap bounded, no OutOfMemoryError exit. */
  private void assertSurvived(final RelayProcess relay) throws Exception {
    assertThat(relay.isAlive()).as("relay alive; stderr:\n%s", relay.stderr()).isTrue();
    HonestClient.assertServed(relay, js);
    assertThat(relay.heapAfterGcBytes()).isLessThan(SurfaceAttackIT.HEAP_AFTER_ATTACK);
    assertThat(relay.metric("relay_unclean_exits_total")).hasValue(0);
  }

  /** The value of one series of {@code /metrics} as written there (name and labels); 0 if none. */
  private static double series(final RelayProcess relay, final String series) throws Exception {
    for (final String line : relay.metrics().split("\n")) {
      if (line.startsWith(series + " ")) {
        return Double.parseDouble(line.substring(series.length() + 1).trim());
      }
    }
    return 0;
  }

  @Test
  @Order(1)
  void aRelayFollowing1001Databases_isReadWholly_byASecondRelayPinner_withoutAFault()
      throws Exception {
    await().atMost(Duration.ofSeconds(20))
        .until(() -> series(follower, "relay_orbitdb_topics_followed") == FOLLOWED);
    // Every subscription of the follower reached the peer's topic admission: each is counted
    // there once it has an outcome (deferred, refused, checked), or is being checked now. A
    // first RPC dropped whole would leave the peer one subscription to see.
    await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(250)).until(() ->
        peer.metric("relay_orbitdb_topic_admissions_total").orElse(0)
            + peer.metric("relay_orbitdb_topic_admissions_pending").orElse(0) >= FOLLOWED);
    // The follower split its first RPC: at most 1,000 subscriptions each.
    assertThat(series(follower, "relay_pubsub_events_total{event=\"subscriptions-rpc-sent\"}"))
        .isGreaterThanOrEqualTo(2);
    // The peer counted no fault of the follower's and still holds its connection to it.
    for (final String fault : SUBSCRIPTION_FAULTS) {
      assertThat(series(peer, "relay_pubsub_events_total{event=\"" + fault + "\"}"))
          .as(fault).isZero();
    }
    assertThat(peer.metric("libp2p_peer_faults_total").orElse(0)).isZero();
    assertThat(follower.metric("libp2p_peer_faults_total").orElse(0)).isZero();
    assertThat(peer.metric("libp2p_connections").orElse(0)).isGreaterThanOrEqualTo(1);
    assertThat(follower.metric("libp2p_connections").orElse(0)).isGreaterThanOrEqualTo(1);
    assertSurvived(follower);
    assertSurvived(peer);
  }

  private Host client() {
    final Host host = new Host(Keys.generate(KeyType.ED25519, RANDOM), HostConfig.DEFAULT,
        loops, Clock.systemUTC());
    hosts.add(host);
    HopClient.acceptCircuits(host);
    return host;
  }

  @Test
  @Order(2)
  void manyPeerIdsFromOneIp_holdOnlyTheIpsCircuits_whileAnHonestPairGetsOne() throws Exception {
    // 64 fresh PeerIds, all from 127.0.0.2 (through a forwarder bound there), each reserve;
    // then each asks for a circuit to the next. PeerIds are free: only the IP's cap holds them.
    proxy = new SourceAddressProxy("127.0.0.2",
        new InetSocketAddress("127.0.0.1", peer.tcpPort()));
    final Multiaddr viaProxy = Multiaddr.parse("/ip4/127.0.0.1/tcp/" + proxy.port() + "/p2p/"
        + peer.peerId());
    final List<Host> attackers = new ArrayList<>();
    final List<CompletableFuture<Connection>> dials = new ArrayList<>();
    for (int i = 0; i < ATTACKERS; i++) {
      final Host attacker = client();
      attackers.add(attacker);
      dials.add(attacker.dial(viaProxy));
    }
    final List<Connection> connections = new ArrayList<>();
    for (final CompletableFuture<Connection> dial : dials) {
      connections.add(dial.get(30, TimeUnit.SECONDS));
    }
    final ExecutorService requests = Executors.newFixedThreadPool(16);
    final List<Status> statuses = new ArrayList<>();
    try {
      final List<Future<Status>> reserved = new ArrayList<>();
      for (final Connection connection : connections) {
        reserved.add(requests.submit(() -> HopClient.reserve(connection)));
      }
      for (final Future<Status> status : reserved) {
        assertThat(status.get(30, TimeUnit.SECONDS)).isEqualTo(Status.OK);
      }
      final List<Future<Status>> circuits = new ArrayList<>();
      for (int i = 0; i < ATTACKERS; i++) {
        final Connection connection = connections.get(i);
        final PeerId next = attackers.get((i + 1) % ATTACKERS).peerId();
        circuits.add(requests.submit(() -> HopClient.connect(connection, next)));
      }
      for (final Future<Status> status : circuits) {
        statuses.add(status.get(30, TimeUnit.SECONDS));
      }
    } finally {
      requests.shutdownNow();
    }
    int admitted = 0;
    int refused = 0;
    for (final Status status : statuses) {
      if (status == Status.OK) {
        admitted++;
      } else {
        assertThat(status).isEqualTo(Status.RESOURCE_LIMIT_EXCEEDED);
        refused++;
      }
    }
    final int perIp = CircuitRelayConfig.DEFAULT_MAX_CIRCUITS_PER_IP;
    assertThat(admitted).isEqualTo(perIp);
    assertThat(refused).isEqualTo(ATTACKERS - perIp);
    assertThat(series(peer, "relay_circuit_refusals_total{reason=\"ip_circuit_limit\"}"))
        .isEqualTo(refused);
    assertThat(series(peer, "relay_circuit_circuits_open")).isEqualTo(perIp);

    // An honest pair from 127.0.0.1, while the attackers hold their circuits: the destination
    // reserves, the source gets its circuit.
    final Multiaddr direct = Multiaddr.parse(peer.tcpMultiaddr());
    final Host destination = client();
    final Host source = client();
    assertThat(HopClient.reserve(destination.dial(direct).get(15, TimeUnit.SECONDS)))
        .isEqualTo(Status.OK);
    assertThat(HopClient.connect(source.dial(direct).get(15, TimeUnit.SECONDS),
        destination.peerId())).isEqualTo(Status.OK);
    assertThat(series(peer, "relay_circuit_circuits_open")).isEqualTo(perIp + 1);
    assertThat(series(peer, "relay_circuit_refusals_total{reason=\"ip_circuit_limit\"}"))
        .isEqualTo(refused);
    assertSurvived(peer);
  }
}
