package io.relaypinner.libp2p.pubsub.discovery;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.google.protobuf.ByteString;
import io.relaypinner.libp2p.crypto.KeyType;
import io.relaypinner.libp2p.crypto.Keys;
import io.relaypinner.libp2p.crypto.PrivateKey;
import io.relaypinner.libp2p.host.Host;
import io.relaypinner.libp2p.host.HostConfig;
import io.relaypinner.libp2p.netty.EventLoops;
import io.relaypinner.libp2p.pubsub.GossipsubConfig;
import io.relaypinner.libp2p.pubsub.PubSub;
import io.relaypinner.libp2p.pubsub.discovery.pb.DiscoveryProtos;
import io.relaypinner.multiformats.Multiaddr;
import io.relaypinner.multiformats.PeerId;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Pubsub peer discovery between Java peers, with announcements that must be refused. */
class PubsubPeerDiscoveryIT {
  private static final String TOPIC = "todo._peer-discovery._p2p._pubsub";
  private static final SecureRandom RANDOM = new SecureRandom();
  private final EventLoops loops = EventLoops.create(2, "discovery-test");
  private final Host relayHost = host();
  private final Host peerHost = host();
  private PubSub relayPubSub;
  private PubSub peerPubSub;
  private PubsubPeerDiscovery discovery;

  private Host host() {
    return new Host(Keys.generate(KeyType.ED25519, RANDOM), HostConfig.builder()
        .listenAddresses(List.of(Multiaddr.parse("/ip4/127.0.0.1/tcp/0")))
        .agentVersion("relay-pinner/discovery-test").build(), loops, Clock.systemUTC());
  }

  @AfterEach
  void stop() {
    discovery.close();
    relayPubSub.close();
    peerPubSub.close();
    peerHost.close();
    relayHost.close();
    loops.shutdownGracefully(Duration.ofSeconds(3));
  }

  @Test
  void announcements_shouldBeReported_whenValid_andCountedInvalidOtherwise() throws Exception {
    relayHost.start().get(5, TimeUnit.SECONDS);
    peerHost.start().get(5, TimeUnit.SECONDS);
    relayPubSub = PubSub.start(relayHost, GossipsubConfig.DEFAULT, Clock.systemUTC(), RANDOM);
    peerPubSub = PubSub.start(peerHost, GossipsubConfig.DEFAULT, Clock.systemUTC(), RANDOM);
    final List<Multiaddr> many = new java.util.ArrayList<>();
    for (int i = 0; i < 40; i++) {
      many.add(Multiaddr.parse("/ip4/203.0.113.1/tcp/" + (4000 + i)));
    }
    discovery = PubsubPeerDiscovery.start(relayPubSub, List.of(TOPIC),
        relayHost.identity().publicKey(), () -> many, loops.group(), Duration.ofSeconds(1));
    final Map<PeerId, List<Multiaddr>> heard = new ConcurrentHashMap<>();
    discovery.onDiscovered(d -> heard.put(d.peer(), d.addresses()));
    final Map<PeerId, Integer> relayAnnounced = new ConcurrentHashMap<>();
    peerPubSub.addMessageHandler(message -> {
      try {
        final DiscoveryProtos.Peer peer = DiscoveryProtos.Peer.parseFrom(message.data());
        relayAnnounced.put(message.author(), peer.getAddrsCount());
      } catch (final Exception e) {
        throw new IllegalStateException(e);
      }
    });
    peerPubSub.subscribe(TOPIC).get(5, TimeUnit.SECONDS);
    peerHost.dial(relayHost.listenAddresses().get(0).withPeerId(relayHost.peerId()))
        .get(5, TimeUnit.SECONDS);
    await().atMost(Duration.ofSeconds(10)).until(() -> !peerPubSub.meshPeers(TOPIC).isEmpty()
        && !relayPubSub.peers(TOPIC).isEmpty());

    // The relay announces itself, with at most 16 addresses.
    await().atMost(Duration.ofSeconds(10)).until(() -> relayAnnounced.containsKey(
        relayHost.peerId()));
    assertThat(relayAnnounced.get(relayHost.peerId())).isEqualTo(PubsubPeerDiscovery.MAX_ADDRS);

    // Garbage, and another peer's key signed by this peer: refused and counted.
    peerPubSub.publish(TOPIC, new byte[] {1, 2, 3, 4}).get(5, TimeUnit.SECONDS);
    final PrivateKey other = Keys.generate(KeyType.ED25519, RANDOM);
    peerPubSub.publish(TOPIC, DiscoveryProtos.Peer.newBuilder()
        .setPublicKey(ByteString.copyFrom(other.publicKey().marshal())).build().toByteArray())
        .get(5, TimeUnit.SECONDS);
    // Its own announcement: reported.
    final Multiaddr address = Multiaddr.parse("/ip4/198.51.100.4/tcp/4001");
    peerPubSub.publish(TOPIC, DiscoveryProtos.Peer.newBuilder()
        .setPublicKey(ByteString.copyFrom(peerHost.identity().publicKey().marshal()))
        .addAddrs(ByteString.copyFrom(address.bytes())).build().toByteArray())
        .get(5, TimeUnit.SECONDS);
    await().atMost(Duration.ofSeconds(10)).until(() -> heard.containsKey(peerHost.peerId()));
    assertThat(heard.get(peerHost.peerId())).containsExactly(address);
    await().atMost(Duration.ofSeconds(10)).until(() -> discovery.counters().get("invalid") == 2);
    assertThat(heard).doesNotContainKey(other.publicKey().peerId());
  }
}
