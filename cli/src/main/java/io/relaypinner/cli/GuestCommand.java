package io.relaypinner.cli;

import io.relaypinner.handoff.guest.GuestAgent;
import io.relaypinner.handoff.guest.GuestStateDir;
import io.relaypinner.handoff.guest.SetupServer;
import io.relaypinner.libp2p.crypto.KeyFormatException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Clock;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code relay-pinner guest …}: the guest side of the configuration handoff. */
@Command(
    name = "guest",
    mixinStandardHelpOptions = true,
    versionProvider = Main.Version.class,
    description = {
        "The guest side of the configuration handoff (docs/handoff.md): a freshly booted VM "
            + "learns its deployment (public IPs, mapped ports, proxy hostname, registration id) "
            + "and then runs the relay in this process.",
        "",
        "State directory D: D/relay.env (the relay's settings, written by the configuration), "
            + "D/keys/publisher.key (the bootstrap publisher key), D/data (the relay's data "
            + "directory, with its identity key D/data/identity.key). Both keys are created on "
            + "first start and always kept."},
    subcommands = {GuestCommand.SetupServerCommand.class, CommandLine.HelpCommand.class})
final class GuestCommand implements Runnable {
  @Spec
  private CommandSpec spec;

  @Override
  public void run() {
    throw new CommandLine.ParameterException(spec.commandLine(),
        "missing command: setup-server or pull (see 'relay-pinner guest --help')");
  }

  /** {@code guest setup-server}: the push setup endpoint, then the relay. */
  @Command(
      name = "setup-server",
      mixinStandardHelpOptions = true,
      versionProvider = Main.Version.class,
      sortOptions = false,
      description = {
          "Serves the push setup endpoint (plain HTTP, unauthenticated by design) until the "
              + "guest is configured, then runs the relay in this process until SIGINT/SIGTERM.",
          "",
          "Routes: GET /health (setup state), GET /metadata (peer_id, "
              + "bootstrap_publisher_address, addresses; available before configuration so a "
              + "deployer can sign an owner authorization), POST /configure (JSON: public_ipv4, "
              + "tcp_port, ws_port required; public_ipv6, proxy_url, metrics_port, "
              + "metrics_https_port, webrtc_port, quic_port, bootstrap_registration_id, "
              + "bootstrap_owner_address, bootstrap_owner_authorization_b64, no_start). An owner "
              + "private key field is refused (400). On success D/relay.env is written "
              + "atomically, the relay starts (unless no_start), the answer is 200 and the "
              + "setup port closes.",
          "",
          "When D/relay.env already exists the guest is configured: no setup port opens and "
              + "the relay starts with it at once.",
          "",
          "The relay reads D/relay.env overlaid by this process's environment (which wins), as "
              + "'relay-pinner run --env-file D/relay.env' does: set e.g. RELAY_TCP_PORT, "
              + "RELAY_WS_PORT or METRICS_PORT in the environment to move the relay's own "
              + "listeners."},
      footer = {"", "Exit codes: 0 stopped cleanly, 1 runtime failure (e.g. the port is in use, "
          + "a corrupt key file), 2 bad usage."})
  static final class SetupServerCommand implements Callable<Integer> {
    private static final Logger LOG = LoggerFactory.getLogger(SetupServerCommand.class);

    private final Map<String, String> environment;

    @Spec
    private CommandSpec spec;

    @Option(names = "--state-dir", required = true, paramLabel = "D",
        description = "The guest state directory (created when missing).")
    private Path stateDir;

    @Option(names = "--port", paramLabel = "P", defaultValue = "80",
        description = "Setup endpoint port (default ${DEFAULT-VALUE}; 0 = ephemeral, printed in "
            + "the log).")
    private int port;

    @Option(names = "--host", paramLabel = "ADDR", defaultValue = "0.0.0.0",
        description = "Setup endpoint listen address (default ${DEFAULT-VALUE}).")
    private String host;

    SetupServerCommand(final Map<String, String> environment) {
      this.environment = environment;
    }

    @Override
    public Integer call() {
      if (port < 0 || port > 65535) {
        throw new CommandLine.ParameterException(spec.commandLine(),
            "--port must be 0-65535, got " + port);
      }
      Logging.configure(environment.getOrDefault("LOG_LEVEL", "info"),
          "json".equalsIgnoreCase(environment.get("LOG_FORMAT")));
      final GuestStateDir state;
      try {
        state = GuestStateDir.open(stateDir, new SecureRandom());
      } catch (final KeyFormatException | UncheckedIOException e) {
        spec.commandLine().getErr().println("relay-pinner: " + e.getMessage());
        return Main.EXIT_FAILURE;
      }
      final GuestAgent agent = new GuestAgent(state, new RelayNodeLauncher(environment),
          GuestAgent.Settings.fromEnvironment(environment), Clock.systemUTC());
      final SetupServer server = new SetupServer(agent, host, port);
      final CountDownLatch stopped = new CountDownLatch(1);
      final Thread hook = new Thread(() -> {
        server.close();
        agent.close();
        stopped.countDown();
      }, "guest-shutdown");
      Runtime.getRuntime().addShutdownHook(hook);
      try {
        if (state.configured()) {
          LOG.info("{} exists: the guest is configured, starting the relay", state.envFile());
          agent.resumeStored().get();
        } else {
          server.start();
          spec.commandLine().getOut().println("guest setup server on port " + server.port());
        }
      } catch (final ExecutionException e) {
        LOG.error("cannot start the relay: {}", e.getCause().getMessage());
        return Main.EXIT_FAILURE;
      } catch (final UncheckedIOException e) {
        LOG.error("cannot start: {}", e.getMessage());
        return Main.EXIT_FAILURE;
      } catch (final InterruptedException e) {
        Thread.currentThread().interrupt();
        return Main.EXIT_FAILURE;
      }
      try {
        stopped.await();
      } catch (final InterruptedException e) {
        Thread.currentThread().interrupt();
        server.close();
        agent.close();
      }
      return 0;
    }
  }
}
