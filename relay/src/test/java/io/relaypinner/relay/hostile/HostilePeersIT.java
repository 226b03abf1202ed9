package io.relaypinner.relay.hostile;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.relaypinner.libp2p.crypto.KeyType;
import io.relaypinner.libp2p.crypto.Keys;
import io.relaypinner.libp2p.crypto.PrivateKey;
import io.relaypinner.libp2p.host.Host;
import io.relaypinner.libp2p.host.PeerBanEngine;
import io.relaypinner.libp2p.netty.EventLoops;
import io.relaypinner.multiformats.PeerId;
import io.relaypinner.multiformats.Multiaddr;
import io.relaypinner.relay.RelayNode;
import io.relaypinner.relay.config.RelayConfig;
import io.relaypinner.relay.identity.NodeIdentity;
import io.relaypinner.relay.pubsub.OrbitDbTopics;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The short variant of the hostile-peer load ({@code bench/hostile.sh} runs the long one and
 * measures): one relay, eight hostile peers (one per {@link HostilePeer.Attack}: subscription
 * floods, PRUNE floods, 64 KiB topics, garbage RPCs, bitswap want floods, heads-protocol garbage,
 * stream opens, slow readers) attacking while three honest peers each replicate a database with
 * a file through it. Correctness only, no timing: every honest reader gets every entry and the
 * file, the relay's bounds were hit and counted, and afterwards the relay still replicates and
 * serves a new database.
 */
class HostilePeersIT {
  private final EventLoops loops = EventLoops.create(2, "hostile-it");
  private RelayNode relay;
  private HostileLoad load;

  @AfterEach
  void close() {
    if (load != null) {
      load.close();
    }
    if (relay != null) {
      relay.close();
    }
    loops.shutdownGracefully(Duration.ofSeconds(3));
  }

  private RelayNode relay(final Path dir) {
    final PrivateKey key = Keys.generate(KeyType.ED25519, new SecureRandom());
    final NodeIdentity identity = new NodeIdentity(key, key.publicKey().peerId(),
        NodeIdentity.servingZone(key.publicKey().peerId(), "libp2p.direct"),
        NodeIdentity.Source.ENVIRONMENT);
    final RelayNode node = new RelayNode(RelayConfig.builder().dataDir(dir)
        .metricsHost("127.0.0.1").metricsPort(0).listenIpv4("127.0.0.1").tcpPort(0).wsPort(0)
        .quicPort(0)
        .ipv6Disabled(true).bootstrapDisabled(true).autoTlsDisabled(true).build(), identity,
        new PrometheusRegistry(), Clock.systemUTC());
    node.start();
    return node;
  }

  private static Multiaddr tcp(final RelayNode relay) {
    final Host host = relay.network().host();
    return host.listenAddresses().stream().filter(a -> !a.toString().endsWith("/ws"))
        .findFirst().orElseThrow().withPeerId(host.peerId());
  }

  @Test
  void honestPeers_shouldGetEveryEntryAndFile_whileHostilePeersAttack(@TempDir final Path dir)
      throws Exception {
    relay = relay(dir);
    load = new HostileLoad(tcp(relay), loops);
    load.startHostile(HostilePeer.Attack.values().length, Duration.ofMillis(200));
    // Every attack is under way before the honest peers start.
    await().atMost(Duration.ofSeconds(20)).until(() ->
        load.attackCounters().get("batches") >= 20);

    final HostileLoad.Round round = load.honestRound(3, 10, 64 * 1024, Duration.ofSeconds(60));

    final Map<String, Long> attacks = load.attackCounters();
    final Map<PeerId, Integer> wantlists = Map.copyOf(relay.content().bitswap()
        .wantlistSizes().get(10, java.util.concurrent.TimeUnit.SECONDS));
    load.stopHostile();
    final Map<String, Long> pubsub = new TreeMap<>(relay.network().pubsub().counters());
    System.out.println("HOSTILE round " + round + "\n attacks " + attacks + "\n pubsub "
        + pubsub + "\n limits " + relay.network().host().limitCounters().byLabel()
        + "\n bitswap " + relay.content().bitswap().stats() + "\n wantlists " + wantlists
        + "\n topics " + relay.replication().topics().counters()
        + "\n replication " + relay.replication().service().counters());
    assertThat(round.peers()).allSatisfy(peer -> {
      assertThat(peer.entriesReceived()).as(peer.database()).isEqualTo(peer.entries());
      assertThat(peer.fileReceived()).as(peer.database()).isTrue();
    });
    // The bounds were hit, and counted: topic length, PRUNEs for topics outside our mesh,
    // streams per protocol, topic admission; wantlists stay within the cap. (Topics tracked per
    // peer, 1,000 guaranteed and up to 10,000 from a shared pool since issue 36, are not reached
    // by this short flood: GossipsubAttackTest performs that bound.)
    assertThat(pubsub.getOrDefault("drop-topic-too-long", 0L)).isPositive();
    assertThat(pubsub.getOrDefault("prune-unknown-topic", 0L)).isPositive();
    assertThat(relay.network().host().limitCounters().byLabel()
        .getOrDefault("max_protocol_streams", 0L)).isPositive();
    // The made-up databases are database addresses (base58btc): each would cost a manifest
    // check, so beyond 4 running per peer (32 in all) they are refused and counted; the checks
    // that run end at their 10 s timeout, after this round.
    final var topics = relay.replication().topics();
    assertThat(topics.counters().getOrDefault("peer-pending-full", 0L)).isPositive();
    assertThat(topics.pendingAdmissions())
        .isLessThanOrEqualTo(OrbitDbTopics.Limits.DEFAULT.maxPending());
    // Garbage and broken bounds are faults of their senders, and the flooders were banned.
    assertThat(relay.network().host().bans().faults())
        .hasEntrySatisfying(PeerBanEngine.Fault.MALFORMED_MESSAGE, n -> assertThat(n).isPositive())
        .hasEntrySatisfying(PeerBanEngine.Fault.PROTOCOL_BOUND, n -> assertThat(n).isPositive());
    assertThat(relay.network().host().limitCounters().byLabel()
        .getOrDefault("peer_banned", 0L)).isPositive();
    assertThat(wantlists.values()).allSatisfy(size -> assertThat(size)
        .isLessThanOrEqualTo(relay.content().bitswap().config().maxWantsPerPeer()));

    // Afterwards: a new database is replicated and served as before.
    final HostileLoad.Round after = load.honestRound(1, 5, 16 * 1024, Duration.ofSeconds(30));
    assertThat(after.complete()).as(after.toString()).isTrue();
  }
}
