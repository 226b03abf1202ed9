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
    final byte[] seed = new byte[32];
    seed[0] = (byte) Integer.parseInt(args[1]);
    final PrivateKey key = Ed25519PrivateKey.fromSeed(seed);
    final NodeIdentity identity = new NodeIdentity(key, key.publicKey().peerId(),
        NodeIdentity.servingZone(key.publicKey().peerId(), "libp2p.direct"),
        NodeIdentity.Source.ENVIRONMENT);
    final RelayConfig config = RelayConfig.builder().dataDir(Path.of(args[0]))
        .s3(S3StoreConfig.of(Optional.of(URI.create(args[2])), args[3], args[4], "blocks",
            Optional.of(args[5]), Optional.of(args[6])))
        .postgres(PostgresStoreConfig.of(args[7], Optional.of(args[8]), Optional.of(args[9])))
        .metricsHost("127.0.0.1").metricsPort(0)
        .listenIpv4("127.0.0.1").tcpPort(0).wsPort(0).ipv6Disabled(true).build();
    final RelayNode relay = new RelayNode(config, identity, new PrometheusRegistry(),
        Clock.systemUTC());
    relay.start();
    final String tcp = relay.host().orElseThrow().listenAddresses().stream()
        .filter(a -> !a.toString().endsWith("/ws")).findFirst().orElseThrow()
        .withPeerId(identity.peerId()).toString();
    System.out.println("started " + tcp + " " + relay.httpPort().getAsInt());
    System.out.flush();
    while (System.in.read() >= 0) {
      // Runs until stdin closes (or the process is killed).
    }
    relay.close();
  }
}
