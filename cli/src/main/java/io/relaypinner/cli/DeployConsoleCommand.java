package io.relaypinner.cli;

import io.relaypinner.handoff.console.ConsoleTls;
import io.relaypinner.handoff.console.DeployConsole;
import io.relaypinner.handoff.deploy.DeployConfig;
import io.relaypinner.handoff.deploy.DeployController;
import io.relaypinner.handoff.deploy.DeployWallet;
import io.relaypinner.handoff.deploy.ImageManifest;
import io.relaypinner.handoff.deploy.Libp2pPeerHandshake;
import io.relaypinner.handoff.deploy.LocalHostProvider;
import io.relaypinner.handoff.records.MessageVerifier;
import io.relaypinner.handoff.records.client.HttpRecordStore;
import io.relaypinner.handoff.records.service.LocalRecordStore;
import io.relaypinner.handoff.records.service.MemoryRecordStorage;
import io.relaypinner.handoff.records.service.RecordServer;
import io.relaypinner.handoff.records.service.RecordServiceConfig;
import java.io.IOException;
import java.io.PrintWriter;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import javax.net.ssl.SSLContext;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code relay-pinner deploy console}: the deployer as a web page (docs/operators.md). */
@Command(
    name = "console",
    mixinStandardHelpOptions = true,
    versionProvider = Main.Version.class,
    sortOptions = false,
    usageHelpAutoWidth = true,
    description = {
        "Serves the deploy console: a page from which an operator deploys relays with the local "
            + "provider by push or pull (showing the progress 'deploy' prints), lists them and "
            + "erases them. Over HTTPS with --tls-cert-dir, else plain HTTP.",
        "",
        "The page's origin is the deployment's --origin: from an https:// page a push is "
            + "refused before any host is created (the browser would block plain-HTTP requests "
            + "to the guest as mixed content) and a pull works. The other deploy options apply "
            + "to every deployment started from the page. Runs until interrupted."},
    footer = {"", "Exit codes: 0 stopped, 1 runtime failure (e.g. the port is in use), 2 bad "
        + "usage."})
final class DeployConsoleCommand implements Callable<Integer> {
  private final Map<String, String> environment;

  @Spec
  private CommandSpec spec;

  @Option(names = "--port", paramLabel = "P", defaultValue = "8787",
      description = "Port (default ${DEFAULT-VALUE}; 0 = any free port).")
  private int port;

  @Option(names = "--host", paramLabel = "H", defaultValue = "127.0.0.1",
      description = "Address to listen on (default ${DEFAULT-VALUE}). The console creates and "
          + "erases guests: keep it on loopback or behind authentication.")
  private String host;

  @Option(names = "--tls-cert-dir", paramLabel = "D",
      description = "Serve HTTPS with D/cert.pem (leaf first, then chain) and D/key.pem (PKCS#8 "
          + "EC, RSA or Ed25519).")
  private Path tlsCertDir;

  @CommandLine.Mixin
  private DeployOptions options;

  @CommandLine.Mixin
  private DeployCommand.LocalOptions local;

  DeployConsoleCommand(final Map<String, String> environment) {
    this.environment = environment;
  }

  @Override
  public Integer call() throws Exception {
    Logging.configure(environment.getOrDefault("LOG_LEVEL", "info"),
        "json".equalsIgnoreCase(environment.get("LOG_FORMAT")));
    final PrintWriter err = spec.commandLine().getErr();
    final PrintWriter out = spec.commandLine().getOut();
    final ImageManifest manifest;
    final String sshKey;
    final Optional<SSLContext> tls;
    try {
      options.config();
      manifest = options.manifest();
      sshKey = options.sshKey();
      tls = tlsCertDir == null ? Optional.empty()
          : Optional.of(ConsoleTls.fromDirectory(tlsCertDir));
      if (port < 0 || port > 65535) {
        throw new IllegalArgumentException("--port must be 0-65535");
      }
    } catch (final IllegalArgumentException e) {
      throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
    }
    final SecureRandom random = new SecureRandom();
    final DeployWallet.Loaded wallet;
    try {
      wallet = DeployWallet.load(options.walletKeyFile(), environment, local.deploymentsDir,
          random);
    } catch (final IllegalArgumentException e) {
      throw new CommandLine.ParameterException(spec.commandLine(), "wallet: " + e.getMessage());
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
        recordsUrl = URI.create("http://127.0.0.1:" + embedded.start().getPort());
      }
      final HttpRecordStore store = new HttpRecordStore(recordsUrl);
      try (DeployConsole console = new DeployConsole((handoff, origin, progress) -> {
        final DeployConfig config = options.config(handoff.orElse(null), origin);
        final DeployController controller = new DeployController(provider, store,
            wallet.key(), config, Clock.systemUTC(), (stage, detail, percent) -> {
              err.printf(Locale.ROOT, "deploy [%3d%%] %s: %s%n", percent, stage, detail);
              progress.event(stage, detail, percent);
            }, random, handshake);
        final var result = controller.deploy(manifest, recordsUrl, sshKey);
        result.relay().ifPresent(relay ->
            provider.recordDeployment(relay.instanceId(), result.toJson()));
        return result;
      }, provider, tls, Clock.systemUTC())) {
        final InetSocketAddress bound;
        try {
          bound = console.start(host, port);
        } catch (final IOException e) {
          err.println("relay-pinner deploy console: cannot listen on " + host + ":" + port + ": "
              + e.getMessage());
          return Main.EXIT_FAILURE;
        }
        final String hostPart = host.contains(":") ? "[" + host + "]" : host;
        out.println("deploy console: " + console.scheme() + "://" + hostPart + ":"
            + bound.getPort() + "/ (owner " + wallet.key().address() + ", records "
            + recordsUrl + ")");
        out.flush();
        final CountDownLatch stop = new CountDownLatch(1);
        final Thread hook = new Thread(stop::countDown, "deploy-console-stop");
        Runtime.getRuntime().addShutdownHook(hook);
        stop.await();
        return 0;
      }
    } finally {
      if (embedded != null) {
        embedded.close();
      }
    }
  }
}
