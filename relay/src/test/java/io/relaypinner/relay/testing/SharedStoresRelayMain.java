package io.relaypinner.relay.testing;

import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.relaypinner.libp2p.crypto.Ed25519PrivateKey;
import io.relaypinner.libp2p.crypto.PrivateKey;
import io.relaypinner.relay.RelayNode;
import io.relaypinner.relay.config.RelayConfig;
import io.relaypinner.relay.identity.NodeIdentity;
import io.relaypinner.stores.PostgresStoreConfig;
import io.relaypinner.stores.S3StoreConfig;
import java.net.URI;
import java.nio.file.Path;
import java.time.Clock;
import java.util.List;
import java.util.Optional;

/**
 * A relay on shared stores in a process of its own, so that a test can kill it with SIGKILL:
 * {@code SharedStoresRelayMain <dataDir> <seed byte> <s3 endpoint> <bucket> <region> <access>
 * <secret> <jdbc url> <user> <password>}. Prints one line {@code started <tcp multiaddr>
 * <http port>} once it serves, and stops when its stdin closes.
 */
public final class SharedStoresRelayMain {
  private SharedStoresRelayMain() {
  }

  public static void main(final String[] args) throws Exception {
    final RelayNode relay = relay(Path.of(args[0]), Integer.parseInt(args[1]),
        List.of(args).subList(2, args.length));
    relay.start();
    final String tcp = relay.network().host().listenAddresses().stream()
        .filter(a -> !a.toString().endsWith("/ws")).findFirst().orElseThrow()
        .withPeerId(relay.identity().peerId()).toString();
    System.out.println("started " + tcp + " " + relay.http().port().getAsInt());
    System.out.flush();
    while (System.in.read() >= 0) {
      // Runs until stdin closes (or the process is killed).
    }
    relay.close();
  }

  /**
   * A relay on shared stores, not started: identity from {@code seed} (its first byte), loopback
   * only, ports picked by the system; {@code stores}: the arguments after dir and seed.
   */
  public static RelayNode relay(final Path dataDir, final int seed, final List<String> stores) {
    final byte[] bytes = new byte[32];
    bytes[0] = (byte) seed;
    final PrivateKey key = Ed25519PrivateKey.fromSeed(bytes);
    final NodeIdentity identity = new NodeIdentity(key, key.publicKey().peerId(),
        NodeIdentity.servingZone(key.publicKey().peerId(), "libp2p.direct"),
        NodeIdentity.Source.ENVIRONMENT);
    final RelayConfig config = RelayConfig.builder().dataDir(dataDir)
        .s3(S3StoreConfig.of(Optional.of(URI.create(stores.get(0))), stores.get(1),
            stores.get(2), "blocks", Optional.of(stores.get(3)), Optional.of(stores.get(4))))
        .postgres(PostgresStoreConfig.of(stores.get(5), Optional.of(stores.get(6)),
            Optional.of(stores.get(7))))
        .metricsHost("127.0.0.1").metricsPort(0)
        .listenIpv4("127.0.0.1").tcpPort(0).wsPort(0).quicPort(0).ipv6Disabled(true).build();
    return new RelayNode(config, identity, new PrometheusRegistry(), Clock.systemUTC());
  }
}
