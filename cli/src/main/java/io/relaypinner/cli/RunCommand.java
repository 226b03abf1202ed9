package io.relaypinner.cli;

import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.relaypinner.common.EnvFile;
import io.relaypinner.ipfs.blockstore.StoreUnavailableException;
import io.relaypinner.libp2p.crypto.KeyFormatException;
import io.relaypinner.relay.RelayNode;
import io.relaypinner.relay.RelayVersion;
import io.relaypinner.relay.config.InvalidConfigException;
import io.relaypinner.relay.config.LogFormat;
import io.relaypinner.relay.config.RelayConfig;
import io.relaypinner.relay.identity.NodeIdentity;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Clock;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code relay-pinner run}: starts the relay and runs until SIGINT/SIGTERM. */
@Command(
    name = "run",
    mixinStandardHelpOptions = true,
    versionProvider = Main.Version.class,
    description = {
        "Starts the relay: its identity, the libp2p listeners (TCP and WebSocket, with "
            + "/tls/ws when a certificate is in RELAY_TLS_CERT_DIR), gossipsub, bitswap, OrbitDB "
            + "replication with media pinning, and the HTTP listener (/health, /multiaddrs, "
            + "/metrics, /pinning/*, /ipfs/*, the status page /dashboard). Runs until "
            + "interrupted (SIGINT/SIGTERM); 'relay-pinner status' summarizes a running one.",
        "",
        "Settings come from environment variables (docs/configuration.md), e.g. DATASTORE_PATH "
            + "(default ./relay-data), METRICS_PORT (9090), RELAY_TCP_PORT (9091), "
            + "RELAY_WS_PORT (9092), LOG_LEVEL, LOG_FORMAT. The identity key is created in "
            + "<DATASTORE_PATH>/identity.key on first start unless RELAY_PRIV_KEY is set."},
    footer = {"", "Exit codes: 0 stopped cleanly, 1 runtime failure (e.g. a port in use), "
        + "2 bad configuration (the message names the variable or option)."})
final class RunCommand implements Callable<Integer> {
  private static final Logger LOG = LoggerFactory.getLogger(RunCommand.class);

  private final Map<String, String> environment;
  /** Where usage errors go when run without picocli ({@link Main}); else the spec's. */
  private final PrintWriter err;

  @Spec
  private CommandSpec spec;

  @Option(
      names = "--env-file",
      paramLabel = "FILE",
      description = "Adds KEY=VALUE lines from FILE to the environment; variables already set in "
          + "the process environment win over the file.")
  private Path envFile;

  RunCommand(final Map<String, String> environment) {
    this(environment, null);
  }

  /** For {@code run} without options, parsed by nobody: usage errors go to {@code err}. */
  RunCommand(final Map<String, String> environment, final PrintWriter err) {
    this.environment = environment;
    this.err = err;
  }

  @Override
  public Integer call() {
    final RelayConfig config;
    try {
      final Map<String, String> merged = envFile == null
          ? environment
          : EnvFile.overlay(EnvFile.read(envFile), environment);
      config = RelayConfig.fromEnvironment(merged);
    } catch (final EnvFile.EnvFileException e) {
      return usageError("--env-file: " + e.getMessage());
    } catch (final InvalidConfigException e) {
      return usageError(e.getMessage());
    }
    final Map<String, String> loggerLevels = new LinkedHashMap<>();
    config.logging().loggerLevels().forEach((logger, level) ->
        loggerLevels.put(logger, level.value()));
    Logging.configure(config.logging().level().value(),
        config.logging().format() == LogFormat.JSON, loggerLevels);

    final NodeIdentity identity;
    try {
      identity = NodeIdentity.load(config.storage().dataDir(), config.identity().privateKeyHex(),
          config.tls().autoTlsDomain(), new SecureRandom());
    } catch (final InvalidConfigException e) {
      return usageError(e.getMessage());
    } catch (final KeyFormatException | UncheckedIOException e) {
      LOG.error("cannot load the node identity: {}", e.getMessage());
      return Main.EXIT_FAILURE;
    }
    LOG.info("relay-pinner {} peerId {} ({} identity key, data directory {})",
        RelayVersion.VERSION, identity.peerId(), identity.source().name().toLowerCase(Locale.ROOT), config.storage().dataDir().toAbsolutePath());

    final RelayNode node;
    try {
      node = new RelayNode(config, identity, new PrometheusRegistry(), Clock.systemUTC());
    } catch (final InvalidConfigException e) {
      return usageError(e.getMessage());
    }
    final CountDownLatch stopped = new CountDownLatch(1);
    final Thread hook = new Thread(() -> {
      node.close();
      stopped.countDown();
    }, "relay-shutdown");
    Runtime.getRuntime().addShutdownHook(hook);
    try {
      node.start();
    } catch (final UncheckedIOException | StoreUnavailableException e) {
      LOG.error("cannot start: {}", e.getMessage());
      node.close();
      return Main.EXIT_FAILURE;
    }
    try {
      stopped.await();
    } catch (final InterruptedException e) {
      Thread.currentThread().interrupt();
      node.close();
    }
    return 0;
  }

  private int usageError(final String message) {
    (err != null ? err : spec.commandLine().getErr()).println("relay-pinner: " + message);
    return Main.EXIT_USAGE;
  }
}
