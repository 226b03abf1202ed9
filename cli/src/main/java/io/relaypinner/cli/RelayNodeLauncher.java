package io.relaypinner.cli;

import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.relaypinner.common.EnvFile;
import io.relaypinner.handoff.guest.RelayLauncher;
import io.relaypinner.handoff.guest.RunningRelay;
import io.relaypinner.multiformats.Multiaddr;
import io.relaypinner.relay.RelayNode;
import io.relaypinner.relay.config.RelayConfig;
import io.relaypinner.relay.identity.NodeIdentity;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Clock;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;

/**
 * Starts the relay in this process for the guest agent, exactly as {@code run --env-file FILE}
 * would: the file's settings overlaid by the process environment (which wins), the identity from
 * {@code RELAY_PRIV_KEY} or {@code <DATASTORE_PATH>/identity.key}.
 */
final class RelayNodeLauncher implements RelayLauncher {
  private final Map<String, String> environment;

  RelayNodeLauncher(final Map<String, String> environment) {
    this.environment = Map.copyOf(environment);
  }

  @Override
  public RunningRelay start(final Path envFile) throws Exception {
    final RelayConfig config =
        RelayConfig.fromEnvironment(EnvFile.overlay(EnvFile.read(envFile), environment));
    final NodeIdentity identity = NodeIdentity.load(config.storage().dataDir(),
        config.identity().privateKeyHex(), config.tls().autoTlsDomain(), new SecureRandom());
    final RelayNode node =
        new RelayNode(config, identity, new PrometheusRegistry(), Clock.systemUTC());
    node.start();
    return new Running(node);
  }

  /** The started node as the guest sees it. */
  private record Running(RelayNode node) implements RunningRelay {
    @Override
    public String peerId() {
      return node.identity().peerId().toBase58();
    }

    @Override
    public List<String> multiaddrs() {
      return node.network().advertisedAddresses().stream().map(Multiaddr::toString).toList();
    }

    @Override
    public OptionalInt httpPort() {
      return node.http().port();
    }

    @Override
    public void close() {
      node.close();
    }
  }
}
