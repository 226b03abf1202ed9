package io.relaypinner.libp2p.host;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.relaypinner.libp2p.crypto.KeyType;
import io.relaypinner.libp2p.crypto.Keys;
import io.relaypinner.libp2p.netty.EventLoops;
import io.relaypinner.multiformats.Multiaddr;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Identify push (libp2p/specs identify/README.md) when the addresses a host advertises change. */
class IdentifyPushOnAddressChangeIT {
  private final EventLoops loops = EventLoops.create(2, "push-test");
  private final Host relay = host();
  private final Host peer = host();

  private Host host() {
    return new Host(Keys.generate(KeyType.ED25519, new SecureRandom()), HostConfig.builder()
        .listenAddresses(List.of(Multiaddr.parse("/ip4/127.0.0.1/tcp/0")))
        .agentVersion("relay-pinner/push-test").build(), loops, Clock.systemUTC());
  }

  @AfterEach
  void stop() {
    relay.close();
    peer.close();
    loops.shutdownGracefully(Duration.ofSeconds(3));
  }

  @Test
  void addressesChanged_shouldPushTheNewAddressesToConnectedPeers() throws Exception {
    relay.start().get(5, TimeUnit.SECONDS);
    peer.start().get(5, TimeUnit.SECONDS);
    final Multiaddr bound = relay.listenAddresses().get(0);
    final AtomicReference<List<Multiaddr>> advertised = new AtomicReference<>(List.of(bound));
    relay.advertise(advertised::get);
    final Connection connection = peer.dial(bound.withPeerId(relay.peerId()))
        .get(5, TimeUnit.SECONDS);
    peer.identify(connection).get(5, TimeUnit.SECONDS);
    await().atMost(Duration.ofSeconds(5)).until(() -> relay.peerStore().get(peer.peerId())
        .isPresent());
    assertThat(peer.peerStore().get(relay.peerId()).orElseThrow().addresses()).contains(bound);

    final Multiaddr learned = Multiaddr.parse("/ip4/203.0.113.7/tcp/4001");
    advertised.set(List.of(learned, bound));
    relay.addressesChanged();
    await().atMost(Duration.ofSeconds(10)).until(() -> peer.peerStore().get(relay.peerId())
        .orElseThrow().addresses().contains(learned));
  }
}
