package io.relaypinner.cli;

import io.relaypinner.handoff.records.RecordStoreException;
import io.relaypinner.handoff.records.service.MvStoreRecordStorage;
import io.relaypinner.handoff.records.service.RecordServer;
import io.relaypinner.handoff.records.service.RecordServiceConfig;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code relay-pinner records serve}: the embedded record service, until SIGINT/SIGTERM. */
@Command(
    name = "serve",
    mixinStandardHelpOptions = true,
    versionProvider = Main.Version.class,
    sortOptions = false,
    description = {
        "Runs the embedded record service: the subset of the Aleph API that the pull handoff "
            + "uses, for deployments that do not use a public Aleph node.",
        "",
        "Routes: POST /api/v0/messages (body {\"sync\":true,\"message\":{...}}), "
            + "GET /api/v0/aggregates/<address>.json?keys=a,b, "
            + "GET /api/v0/posts.json?types=&refs=&addresses=&channels=&hashes=&pagination=&page=, "
            + "GET /health.",
        "",
        "Every message must be an ETH message with item_type inline, item_hash = SHA-256 of "
            + "item_content, and an EIP-191 signature of \"ETH\\n<sender>\\n<type>\\n<item_hash>\" "
            + "by the sender; anything else is refused with a JSON error {ok:false, code, error}. "
            + "An aggregate entry set to null is deleted. A FORGET may only name the sender's own "
            + "messages (another key gets 403).",
        "",
        "Messages are kept in <data-dir>/" + MvStoreRecordStorage.FILE_NAME + " (written and "
            + "synced to disk before each answer), so a restart keeps everything. Logs one line "
            + "with the listening address once the port accepts connections. LOG_LEVEL and "
            + "LOG_FORMAT apply as for 'run'."},
    footer = {"", "Exit codes: 0 stopped cleanly, 1 runtime failure (port in use, data directory "
        + "locked or unreadable), 2 bad option or variable."})
final class RecordsServeCommand implements Callable<Integer> {
  private static final Logger LOG = LoggerFactory.getLogger(RecordsServeCommand.class);
  private static final Set<String> LEVELS = Set.of("trace", "debug", "info", "warn", "error");

  private final Map<String, String> environment;

  @Spec
  private CommandSpec spec;

  @Option(names = "--host", paramLabel = "HOST", defaultValue = "127.0.0.1",
      description = "Listen address (default ${DEFAULT-VALUE}; 0.0.0.0 for all interfaces).")
  private String host;

  @Option(names = "--port", paramLabel = "P", defaultValue = "8181",
      description = "Listen port (default ${DEFAULT-VALUE}; 0 picks a free port, logged at start).")
  private int port;

  @Option(names = "--data-dir", paramLabel = "D", defaultValue = "./records-data",
      description = "Directory of the record store file (default ${DEFAULT-VALUE}); created if "
          + "missing. One service per directory: a second one fails (locked).")
  private Path dataDir;

  @Option(names = "--max-body-bytes", paramLabel = "N", defaultValue = "262144",
      description = "Largest request body; larger ones get 413 (default ${DEFAULT-VALUE}). "
          + "item_content may use at most half of it.")
  private int maxBodyBytes;

  @Option(names = "--idle-timeout-ms", paramLabel = "MS", defaultValue = "30000",
      description = "Close connections idle this long (default ${DEFAULT-VALUE}).")
  private long idleTimeoutMs;

  RecordsServeCommand(final Map<String, String> environment) {
    this.environment = environment;
  }

  @Override
  public Integer call() {
    final String level = environment.getOrDefault("LOG_LEVEL", "info").trim()
        .toLowerCase(Locale.ROOT);
    if (!LEVELS.contains(level)) {
      return usageError("LOG_LEVEL: \"" + level + "\" is not one of trace, debug, info, warn, "
          + "error");
    }
    final String format = environment.getOrDefault("LOG_FORMAT", "text").trim()
        .toLowerCase(Locale.ROOT);
    if (!format.equals("text") && !format.equals("json")) {
      return usageError("LOG_FORMAT: \"" + format + "\" is not text or json");
    }
    final RecordServiceConfig config;
    try {
      config = RecordServiceConfig.builder().host(host).port(port).maxBodyBytes(maxBodyBytes)
          .maxItemContentBytes(Math.max(1, maxBodyBytes / 2))
          .idleTimeout(Duration.ofMillis(idleTimeoutMs)).build();
    } catch (final IllegalArgumentException e) {
      return usageError(optionOf(e.getMessage()) + e.getMessage());
    }
    Logging.configure(level, format.equals("json"));

    final RecordServer server;
    try {
      server = RecordServer.open(config, dataDir);
    } catch (final RecordStoreException e) {
      LOG.error("cannot open the record store: {}", e.getMessage());
      return Main.EXIT_FAILURE;
    }
    final CountDownLatch stopped = new CountDownLatch(1);
    final Thread hook = new Thread(() -> {
      // Runs on SIGINT/SIGTERM; the JVM halts right after the hooks, so log from here.
      server.close();
      LOG.info("record service stopped");
      stopped.countDown();
    }, "records-shutdown");
    Runtime.getRuntime().addShutdownHook(hook);
    final InetSocketAddress address;
    try {
      address = server.start();
    } catch (final UncheckedIOException e) {
      LOG.error("cannot start: {}", e.getMessage());
      server.close();
      return Main.EXIT_FAILURE;
    }
    LOG.info("record service listening on http://{}:{} (data directory {})",
        host.indexOf(':') >= 0 ? "[" + host + "]" : host, address.getPort(),
        dataDir.toAbsolutePath().normalize());
    try {
      stopped.await();
    } catch (final InterruptedException e) {
      Thread.currentThread().interrupt();
      server.close();
    }
    return 0;
  }

  private static String optionOf(final String message) {
    if (message.startsWith("port")) {
      return "--port: ";
    }
    if (message.startsWith("maxBodyBytes") || message.startsWith("maxItemContentBytes")) {
      return "--max-body-bytes: ";
    }
    if (message.startsWith("idleTimeout")) {
      return "--idle-timeout-ms: ";
    }
    return "";
  }

  private int usageError(final String message) {
    spec.commandLine().getErr().println("relay-pinner: " + message);
    return Main.EXIT_USAGE;
  }
}
