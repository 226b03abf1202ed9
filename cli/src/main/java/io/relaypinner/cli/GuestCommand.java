package io.relaypinner.cli;

import io.relaypinner.handoff.guest.GuestAgent;
import io.relaypinner.handoff.guest.GuestStateDir;
import io.relaypinner.handoff.guest.PullAgent;
import io.relaypinner.handoff.guest.RegistrationPublisher;
import io.relaypinner.handoff.guest.SetupServer;
import io.relaypinner.handoff.records.RecordStore;
import io.relaypinner.handoff.records.client.HttpRecordStore;
import io.relaypinner.libp2p.crypto.KeyFormatException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
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
            + "learns its deployment (public IPs, mapped ports, proxy hostname, registration id), "
            + "runs the relay in this process, and registers it.",
        "",
        "State directory D: D/relay.env (the relay's settings, written by the configuration; "
            + "'relay-pinner run --env-file D/relay.env' runs the same relay), "
            + "D/keys/publisher.key (the bootstrap publisher key, 0x + 64 hex, mode 0600), D/data "
            + "(the relay's data directory, with its identity key D/data/identity.key). Both keys "
            + "are created on first start and always kept."},
    subcommands = {GuestCommand.SetupServerCommand.class, GuestCommand.PullCommand.class,
        CommandLine.HelpCommand.class})
final class GuestCommand implements Runnable {
  /** The guests' default record store (the public images' ALEPH_API_HOST default). */
  static final String DEFAULT_RECORDS = "https://api.aleph.im";

  @Spec
  private CommandSpec spec;

  @Override
  public void run() {
    throw new CommandLine.ParameterException(spec.commandLine(),
        "missing command: setup-server or pull (see 'relay-pinner guest --help')");
  }

  /** What both guest commands share: state, record store, registration, the relay's lifetime. */
  abstract static class Base implements Callable<Integer> {
    private static final Logger LOG = LoggerFactory.getLogger(GuestCommand.class);

    final Map<String, String> environment;

    @Spec
    CommandSpec spec;

    @Option(names = "--state-dir", required = true, paramLabel = "D",
        description = "The guest state directory (created when missing).")
    Path stateDir;

    @Option(names = "--authorized-keys", paramLabel = "FILE",
        defaultValue = "/root/.ssh/authorized_keys",
        description = "Where the pull locator is read: the SSH key comment "
            + "aleph-bootstrap-config:<owner>:<token> (default ${DEFAULT-VALUE}).")
    Path authorizedKeys;

    @Option(names = "--poll-interval", paramLabel = "MS", defaultValue = "5000",
        description = "Pull: how often the owner's vm-bootstrap-config entry is read "
            + "(default ${DEFAULT-VALUE} ms).")
    long pollMs;

    @Option(names = "--registration-refresh", paramLabel = "MS", defaultValue = "21600000",
        description = "How often the bootstrap registration is republished (default "
            + "${DEFAULT-VALUE} ms = 6 h). Each new one forgets the previous; a clean shutdown "
            + "forgets them all.")
    long refreshMs;

    @Option(names = "--no-register", description = "Do not publish a bootstrap registration.")
    boolean noRegister;

    Base(final Map<String, String> environment) {
      this.environment = environment;
    }

    abstract URI recordsUrl();

    abstract boolean pull();

    /** Runs the command's own part (the setup server) once the agent exists. */
    abstract void startFront(GuestAgent agent, List<AutoCloseable> toClose);

    @Override
    public Integer call() {
      if (pollMs < 1 || refreshMs < 1000) {
        throw new CommandLine.ParameterException(spec.commandLine(),
            "--poll-interval must be >= 1 and --registration-refresh >= 1000 (ms)");
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
      final Clock clock = Clock.systemUTC();
      final GuestAgent agent = new GuestAgent(state, new RelayNodeLauncher(environment),
          GuestAgent.Settings.fromEnvironment(environment), clock);
      // Closed in reverse: the registration is forgotten before the relay stops.
      final List<AutoCloseable> toClose = new ArrayList<>();
      toClose.add(agent);
      final RecordStore store = new HttpRecordStore(recordsUrl());
      final CountDownLatch stopped = new CountDownLatch(1);
      Runtime.getRuntime().addShutdownHook(new Thread(() -> {
        closeAll(toClose);
        stopped.countDown();
      }, "guest-shutdown"));
      try {
        if (!noRegister) {
          final RegistrationPublisher registration = new RegistrationPublisher(agent, store,
              Duration.ofMillis(refreshMs), clock);
          registration.start();
          toClose.add(registration);
        }
        if (state.configured()) {
          LOG.info("{} exists: the guest is configured, starting the relay", state.envFile());
          agent.resumeStored().get();
        } else {
          startFront(agent, toClose);
        }
        if (pull()) {
          final PullAgent pullAgent = new PullAgent(agent, store, authorizedKeys,
              Duration.ofMillis(pollMs), clock);
          pullAgent.start();
          toClose.add(pullAgent);
        }
      } catch (final ExecutionException e) {
        LOG.error("cannot start the relay: {}", e.getCause().getMessage());
        closeAll(toClose);
        return Main.EXIT_FAILURE;
      } catch (final UncheckedIOException e) {
        LOG.error("cannot start: {}", e.getMessage());
        closeAll(toClose);
        return Main.EXIT_FAILURE;
      } catch (final InterruptedException e) {
        Thread.currentThread().interrupt();
        closeAll(toClose);
        return Main.EXIT_FAILURE;
      }
      try {
        stopped.await();
      } catch (final InterruptedException e) {
        Thread.currentThread().interrupt();
        closeAll(toClose);
      }
      return 0;
    }

    private static synchronized void closeAll(final List<AutoCloseable> toClose) {
      for (int i = toClose.size() - 1; i >= 0; i--) {
        try {
          toClose.get(i).close();
        } catch (final Exception e) {
          LOG.warn("shutdown: {}", e.getMessage());
        }
      }
      toClose.clear();
    }
  }

  /** {@code guest setup-server}: the push setup endpoint (and the pull agent), then the relay. */
  @Command(
      name = "setup-server",
      mixinStandardHelpOptions = true,
      versionProvider = Main.Version.class,
      sortOptions = false,
      description = {
          "Serves the push setup endpoint (plain HTTP, unauthenticated by design) until the "
              + "guest is configured, runs the pull agent next to it (unless --no-pull), then runs "
              + "the relay in this process and registers it, until SIGINT/SIGTERM.",
          "",
          "Routes: GET /health (setup state), GET /metadata (peer_id, "
              + "bootstrap_publisher_address, addresses by transport; available before "
              + "configuration so a deployer can sign an owner authorization), POST /configure "
              + "(JSON: public_ipv4, tcp_port, ws_port required; public_ipv6, proxy_url, "
              + "metrics_port, metrics_https_port, webrtc_port, quic_port, "
              + "bootstrap_registration_id, bootstrap_owner_address, "
              + "bootstrap_owner_authorization_b64, no_start). An owner private key field is "
              + "refused (400, nothing written). On success D/relay.env is written atomically, "
              + "the relay starts (unless no_start), the answer is 200 and the setup port closes. "
              + "A pull configuration closes it too.",
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
  static final class SetupServerCommand extends Base {
    @Option(names = "--port", paramLabel = "P", defaultValue = "80",
        description = "Setup endpoint port (default ${DEFAULT-VALUE}; 0 = ephemeral, printed on "
            + "stdout).")
    int port;

    @Option(names = "--host", paramLabel = "ADDR", defaultValue = "0.0.0.0",
        description = "Setup endpoint listen address (default ${DEFAULT-VALUE}).")
    String host;

    @Option(names = "--no-pull",
        description = "Push only: do not poll the record store for a pull configuration.")
    boolean noPull;

    @Option(names = "--records", paramLabel = "URL",
        description = "Record store (Aleph API, or 'relay-pinner records serve') for the pull "
            + "configuration, the acknowledgement and the registration (default: "
            + "$ALEPH_API_HOST, else " + DEFAULT_RECORDS + ").")
    URI records;

    SetupServerCommand(final Map<String, String> environment) {
      super(environment);
    }

    @Override
    URI recordsUrl() {
      return records != null ? records
          : URI.create(environment.getOrDefault("ALEPH_API_HOST", DEFAULT_RECORDS));
    }

    @Override
    boolean pull() {
      return !noPull;
    }

    @Override
    void startFront(final GuestAgent agent, final List<AutoCloseable> toClose) {
      if (port < 0 || port > 65535) {
        throw new CommandLine.ParameterException(spec.commandLine(),
            "--port must be 0-65535, got " + port);
      }
      final SetupServer server = new SetupServer(agent, host, port);
      server.start();
      toClose.add(server);
      spec.commandLine().getOut().println("guest setup server on port " + server.port());
    }
  }

  /** {@code guest pull}: the pull agent alone, then the relay. */
  @Command(
      name = "pull",
      mixinStandardHelpOptions = true,
      versionProvider = Main.Version.class,
      sortOptions = false,
      description = {
          "The pull handoff alone (no setup port): reads the locator "
              + "aleph-bootstrap-config:<owner>:<token> from --authorized-keys, polls the owner's "
              + "vm-bootstrap-config aggregate for the token's pending entry, applies it exactly "
              + "like POST /configure, starts the relay in this process, and publishes the "
              + "acknowledgement (post vm-bootstrap-config-status, ref vm-bootstrap-config, "
              + "signed by the publisher key, with a proof of the relay's PeerId) until it is "
              + "visible. An owner authorization the owner adds to the entry later is verified "
              + "and applied (the registration becomes dual-key-attested). Runs until "
              + "SIGINT/SIGTERM."},
      footer = {"", "Exit codes: 0 stopped cleanly, 1 runtime failure, 2 bad usage."})
  static final class PullCommand extends Base {
    @Option(names = "--records", paramLabel = "URL", required = true,
        description = "Record store (Aleph API, or 'relay-pinner records serve').")
    URI records;

    PullCommand(final Map<String, String> environment) {
      super(environment);
    }

    @Override
    URI recordsUrl() {
      return records;
    }

    @Override
    boolean pull() {
      return true;
    }

    @Override
    void startFront(final GuestAgent agent, final List<AutoCloseable> toClose) {
      // No setup port: the pull agent is the only way in.
    }
  }
}
