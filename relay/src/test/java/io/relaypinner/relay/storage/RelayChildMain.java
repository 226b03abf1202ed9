package io.relaypinner.relay.storage;

import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.relaypinner.libp2p.crypto.Ed25519PrivateKey;
import io.relaypinner.libp2p.crypto.PrivateKey;
import io.relaypinner.multiformats.Multiaddr;
import io.relaypinner.relay.RelayNode;
import io.relaypinner.relay.config.RelayConfig;
import io.relaypinner.relay.config.StorageLimits;
import io.relaypinner.relay.identity.NodeIdentity;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.HexFormat;
import java.util.concurrent.CountDownLatch;

/**
 * A relay in a child JVM for {@link RelayKillIT}: {@code <data dir> <ed25519 seed hex>}, on
 * loopback with ephemeral ports, no gateway network fallback (so {@code GET /ipfs/} answers 200
 * only for pinned content). Prints {@code READY <http port> <tcp multiaddr>} once started and runs
 * until killed.
 */
public final class RelayChildMain {
  private RelayChildMain() {}

  public static void main(final String[] args) throws InterruptedException {
    final PrivateKey key = Ed25519PrivateKey.fromSeed(HexFormat.of().parseHex(args[1]));
    final NodeIdentity identity = new NodeIdentity(key, key.publicKey().peerId(),
        NodeIdentity.servingZone(key.publicKey().peerId(), "libp2p.direct"),
        NodeIdentity.Source.ENVIRONMENT);
    final RelayNode node = new RelayNode(RelayConfig.builder().dataDir(Path.of(args[0]))
        .metricsHost("127.0.0.1").metricsPort(0).listenIpv4("127.0.0.1").tcpPort(0).wsPort(0)
        .quicPort(0)
        .ipv6Disabled(true).pinningSyncTimeout(Duration.ofSeconds(5)).syncCooldown(Duration.ofSeconds(1))
        .storageLimits(new StorageLimits(0, 0, Duration.ofMinutes(10), Duration.ofMinutes(15)))
        .build(), identity, new PrometheusRegistry(), Clock.systemUTC());
    node.start();
    final Multiaddr tcp = node.network().host().listenAddresses().stream()
        .filter(a -> !a.toString().endsWith("/ws")).findFirst().orElseThrow();
    System.out.println("READY " + node.http().port().getAsInt() + " "
        + tcp.withPeerId(identity.peerId()));
    System.out.flush();
    new CountDownLatch(1).await();
  }
}
