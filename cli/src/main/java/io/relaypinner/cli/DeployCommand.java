package io.relaypinner.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import io.relaypinner.handoff.deploy.DeployConfig;
import io.relaypinner.handoff.deploy.DeployController;
import io.relaypinner.handoff.deploy.DeployFailedException;
import io.relaypinner.handoff.deploy.DeployResult;
import io.relaypinner.handoff.deploy.DeployWallet;
import io.relaypinner.handoff.deploy.HandoffMode;
import io.relaypinner.handoff.deploy.ImageManifest;
import io.relaypinner.handoff.deploy.Libp2pPeerHandshake;
import io.relaypinner.handoff.deploy.LocalHostProvider;
import io.relaypinner.handoff.deploy.SshKeys;
import io.relaypinner.handoff.records.MessageVerifier;
import io.relaypinner.handoff.records.RecordStore;
import io.relaypinner.handoff.records.client.HttpRecordStore;
import io.relaypinner.handoff.records.service.LocalRecordStore;
import io.relaypinner.handoff.records.service.MemoryRecordStorage;
import io.relaypinner.handoff.records.service.RecordServer;
import io.relaypinner.handoff.records.service.RecordServiceConfig;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code relay-pinner deploy …}: the deployer side of the handoff (docs/handoff.md). */
@Command(
    name = "deploy",
    mixinStandardHelpOptions = true,
    versionProvider = Main.Version.class,
    sortOptions = false,
    usageHelpAutoWidth = true,
    description = {
        "Deploys one relay: picks at most 5 compatible hosts of the provider, creates a guest on "
            + "one, hands it its deployment (public address, mapped ports, registration id, a "
            + "signed owner authorization) by push or pull, proves the relay's PeerId by a libp2p "
            + "handshake at the instance's port, and waits for the guest's bootstrap "
            + "registration. A "
            + "failed attempt is cleaned up (instance erased, the deployer's records removed "
            + "and forgotten) and the next host is tried.",
        "",
        "With no options: the local provider (each guest is its own 'relay-pinner guest "
            + "setup-server' process on this machine, under ./relay-deployments/<id>/, "
            + "listening on 127.0.0.1 and free ports), a record service embedded in this "
            + "process, the built-in manifest (profile orbitdb-relay, pull).",
        "",
        "Handoff: pull when the manifest declares supportsBootstrapConfigAggregate or the "
            + "profile is uc-go-peer, push otherwise. Push: GET /health on the setup endpoint "
            + "(hard gate), GET /metadata (PeerId, publisher address), POST /configure with the "
            + "owner authorization. Pull: the configuration is published as the token's entry "
            + "of the wallet's vm-bootstrap-config aggregate (the token travels in the SSH key "
            + "comment aleph-bootstrap-config:<owner>:<token>); the guest's acknowledgement "
            + "must be signed by the publisher key it names and prove its PeerId, and only the "
            + "one whose PeerId a libp2p handshake proves at the instance's allocated port "
            + "(never the first to arrive) gets the owner authorization, as a second entry; "
            + "from an --origin https://… page none is published. No private key crosses the "
            + "setup endpoint or the aggregate (unless --derive-publisher-key).",
        "",
        "Output: progress on stderr ('deploy [ NN%%] <stage>: <detail>'); the last line of "
            + "stdout is the JSON result {ok, handoff, deploymentId, attempts, relay: {peerId, "
            + "httpUrl, multiaddrs}, instanceId, publisherAddress, registration, warnings} or, "
            + "on failure, {ok: false, code, error, attempts}.",
        ""},
    subcommands = {DeployCommand.ListCommand.class, DeployCommand.EraseCommand.class,
        DeployConsoleCommand.class,
        CommandLine.HelpCommand.class},
    footer = {"", "Local guests outlive this command: 'relay-pinner deploy list' shows them, "
        + "'relay-pinner deploy erase ID' stops and deletes one; 'relay-pinner deploy console' "
        + "does all three from a web page.", "",
        "Exit codes: 0 deployed, 1 every host failed or a runtime failure, 2 bad usage or "
            + "configuration (including push from an --origin https://… page)."})
final class DeployCommand implements Callable<Integer> {
  private static final ObjectMapper JSON = new ObjectMapper();
  /** How long a cancelled deploy may take to erase its attempt in progress. */
  private static final Duration CANCEL_CLEANUP = Duration.ofSeconds(40);

  private final Map<String, String> environment;

  @Spec
  private CommandSpec spec;

  @CommandLine.Mixin
  private DeployOptions options;

  @CommandLine.Mixin
  private LocalOptions local;

  DeployCommand(final Map<String, String> environment) {
    this.environment = environment;
  }

  @Override
  public Integer call() {
    Logging.configure(environment.getOrDefault("LOG_LEVEL", "warn"),
        "json".equalsIgnoreCase(environment.get("LOG_FORMAT")));
    final PrintWriter out = spec.commandLine().getOut();
    final PrintWriter err = spec.commandLine().getErr();
    final ImageManifest manifest;
    final DeployConfig config;
    final String sshKey;
    try {
      config = options.config();
      manifest = options.manifest();
      sshKey = options.sshKey();
    } catch (final IllegalArgumentException e) {
      throw usage(e.getMessage());
    }
    final SecureRandom random = new SecureRandom();
    final DeployWallet.Loaded wallet;
    try {
      wallet = DeployWallet.load(options.walletKeyFile(), environment,
          local.deploymentsDir, random);
    } catch (final IllegalArgumentException e) {
      throw usage("wallet: " + e.getMessage());
    } catch (final IOException e) {
      err.println("relay-pinner deploy: cannot read or create the wallet key: " + e);
      return Main.EXIT_FAILURE;
    }
    if (wallet.source() == DeployWallet.Source.GENERATED) {
      err.println("deploy: generated a new deploy wallet " + wallet.key().address() + " in "
          + wallet.file().orElseThrow() + " (mode 0600; keep it to manage these deployments)");
    }
    final LocalHostProvider provider = options.localProvider(local.deploymentsDir);
    RecordServer embedded = null;
    try (Libp2pPeerHandshake handshake = new Libp2pPeerHandshake(random,
        Duration.ofSeconds(10))) {
      final URI recordsUrl;
      if (options.records() != null) {
        recordsUrl = options.records();
      } else {
        embedded = new RecordServer(RecordServiceConfig.builder().host("127.0.0.1").port(0)
            .build(), new LocalRecordStore(new MemoryRecordStorage(), new MessageVerifier(),
                RecordServiceConfig.DEFAULT.maxMessages()));
        final InetSocketAddress bound = embedded.start();
        recordsUrl = URI.create("http://127.0.0.1:" + bound.getPort());
        err.println("deploy: embedded record service at " + recordsUrl);
      }
      final RecordStore store = new HttpRecordStore(recordsUrl);
      final DeployController controller = new DeployController(provider, store, wallet.key(),
          config, Clock.systemUTC(), (stage, detail, percent) -> err.printf(Locale.ROOT,
              "deploy [%3d%%] %s: %s%n", percent, stage, detail), random, handshake);
      err.println("deploy: owner " + controller.owner() + ", provider " + provider.name()
          + ", image " + manifest.profile() + " " + manifest.version() + ", handoff "
          + config.handoff().orElse(manifest.handoff()).wireName());
      // Ctrl-C or SIGTERM while deploying: interrupt the deploy so it erases the attempt in
      // progress (its guest would otherwise outlive us half-configured), then let the JVM go.
      final Thread deploying = Thread.currentThread();
      final CountDownLatch finished = new CountDownLatch(1);
      final Thread hook = new Thread(() -> {
        deploying.interrupt();
        try {
          finished.await(CANCEL_CLEANUP.toMillis(), TimeUnit.MILLISECONDS);
        } catch (final InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }, "deploy-cancel");
      Runtime.getRuntime().addShutdownHook(hook);
      try {
        final DeployResult result = controller.deploy(manifest, recordsUrl, sshKey);
        final JsonNode json = result.toJson();
        result.relay().ifPresent(relay -> provider.recordDeployment(relay.instanceId(), json));
        result.warnings().forEach(w -> err.println("deploy: warning: " + w));
        out.println(JSON.writeValueAsString(json));
        return 0;
      } catch (final DeployFailedException e) {
        out.println(JSON.writeValueAsString(e.result().toJson()));
        err.println("relay-pinner deploy: " + e.getMessage());
        return DeployFailedException.MIXED_CONTENT.equals(e.code()) ? Main.EXIT_USAGE
            : Main.EXIT_FAILURE;
      } catch (final IllegalArgumentException e) {
        throw usage(e.getMessage());
      } finally {
        finished.countDown();
        try {
          Runtime.getRuntime().removeShutdownHook(hook);
        } catch (final IllegalStateException e) {
          // Already shutting down: the hook is running and has just been released.
        }
      }
    } catch (final InterruptedException e) {
      err.println("relay-pinner deploy: cancelled; the attempt in progress was cleaned up");
      Thread.currentThread().interrupt();
      return Main.EXIT_FAILURE;
    } catch (final IOException | UncheckedIOException e) {
      err.println("relay-pinner deploy: " + e.getMessage());
      return Main.EXIT_FAILURE;
    } finally {
      if (embedded != null) {
        embedded.close();
      }
    }
  }

  private CommandLine.ParameterException usage(final String message) {
    return new CommandLine.ParameterException(spec.commandLine(), message);
  }

  /** The local provider directory, shared by {@code deploy}, {@code list} and {@code erase}. */
  static class LocalOptions {
    @Option(names = "--deployments-dir", paramLabel = "DIR", defaultValue = "relay-deployments",
        description = "Local provider directory (default ./${DEFAULT-VALUE}): one subdirectory "
            + "per guest, and wallet.key when generated.")
    Path deploymentsDir;

    LocalHostProvider provider() {
      return new LocalHostProvider(LocalHostProvider.Settings.defaults(deploymentsDir),
          Clock.systemUTC());
    }
  }

  /** {@code deploy list}. */
  @Command(name = "list", mixinStandardHelpOptions = true, versionProvider = Main.Version.class,
      description = {"Lists the local guests (one per deployment attempt that was not erased): "
          + "id, deployment, whether its process runs, and for a completed deployment the "
          + "relay's PeerId and HTTP URL."},
      footer = {"", "Exit codes: 0 listed, 2 bad usage."})
  static final class ListCommand implements Callable<Integer> {
    @Spec
    private CommandSpec spec;

    @CommandLine.Mixin
    private LocalOptions options;

    @Option(names = "--json", description = "One JSON array instead of a table.")
    private boolean json;

    @Override
    public Integer call() throws IOException {
      final List<LocalHostProvider.LocalInstance> instances = options.provider().list();
      final PrintWriter out = spec.commandLine().getOut();
      if (json) {
        final ArrayNode array = JSON.createArrayNode();
        for (final LocalHostProvider.LocalInstance i : instances) {
          array.add(i.json().deepCopy().put("running", i.alive()));
        }
        out.println(JSON.writeValueAsString(array));
        return 0;
      }
      if (instances.isEmpty()) {
        out.println("no local deployments in " + options.deploymentsDir);
        return 0;
      }
      out.printf(Locale.ROOT, "%-24s %-8s %-8s %-54s %s%n", "ID", "STATE", "HANDOFF", "PEER",
          "HTTP");
      for (final LocalHostProvider.LocalInstance i : instances) {
        final JsonNode deployment = i.json().path("deployment");
        out.printf(Locale.ROOT, "%-24s %-8s %-8s %-54s %s%n", i.id(),
            i.alive() ? "running" : "stopped", deployment.path("handoff").asText("-"),
            deployment.path("relay").path("peerId").asText("(not deployed)"),
            deployment.path("relay").path("httpUrl").asText("-"));
      }
      return 0;
    }
  }

  /** {@code deploy erase ID}. */
  @Command(name = "erase", mixinStandardHelpOptions = true, versionProvider = Main.Version.class,
      description = {"Stops a local guest (SIGTERM: it forgets its registrations and stops the "
          + "relay; SIGKILL after 20 s) and deletes its directory. ID is an instance id or a "
          + "deployment id (then all of its instances)."},
      footer = {"", "Exit codes: 0 erased, 1 no such deployment or it could not be stopped, "
          + "2 bad usage."})
  static final class EraseCommand implements Callable<Integer> {
    @Spec
    private CommandSpec spec;

    @CommandLine.Mixin
    private LocalOptions options;

    @Parameters(paramLabel = "ID", description = "Instance or deployment id (see deploy list).")
    private String id;

    @Override
    public Integer call() {
      final List<String> erased;
      try {
        erased = options.provider().eraseMatching(id);
      } catch (final IllegalArgumentException e) {
        throw new CommandLine.ParameterException(spec.commandLine(), "ID: " + e.getMessage());
      } catch (final RuntimeException e) {
        spec.commandLine().getErr().println("relay-pinner deploy erase: " + e.getMessage());
        return Main.EXIT_FAILURE;
      }
      if (erased.isEmpty()) {
        spec.commandLine().getErr().println("relay-pinner deploy erase: no local deployment "
            + id + " in " + options.deploymentsDir);
        return Main.EXIT_FAILURE;
      }
      spec.commandLine().getOut().println("erased " + String.join(", ", erased));
      return 0;
    }
  }
}
