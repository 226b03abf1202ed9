package io.relaypinner.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.PrintWriter;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Iterator;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code relay-pinner status}: a human summary of a running relay, from its JSON routes. */
@Command(
    name = "status",
    mixinStandardHelpOptions = true,
    versionProvider = Main.Version.class,
    usageHelpAutoWidth = true,
    description = {"Prints a summary of a running relay: identity, addresses, connections by "
        + "transport, the sync queue, pins and disk, followed databases and recent problems. "
        + "Reads GET /health, /multiaddrs, /pinning/stats and /dashboard/status (the status "
        + "page's data; skipped when the relay is older)."},
    footer = {"", "Exit codes: 0 the relay answered, 1 it did not, 2 bad usage."})
final class StatusCommand implements Callable<Integer> {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final int MAX_DATABASES = 10;

  private final Map<String, String> environment;

  @Spec
  private CommandSpec spec;

  @Option(names = "--url", paramLabel = "URL",
      description = "The relay's HTTP listener. Default: http://127.0.0.1:$METRICS_PORT "
          + "(9090 when unset).")
  private URI url;

  StatusCommand(final Map<String, String> environment) {
    this.environment = environment;
  }

  @Override
  public Integer call() {
    final URI base = url != null ? url
        : URI.create("http://127.0.0.1:" + environment.getOrDefault("METRICS_PORT", "9090"));
    if (base.getScheme() == null || !base.getScheme().matches("https?")) {
      throw new CommandLine.ParameterException(spec.commandLine(),
          "--url: an http:// or https:// URL is needed, got " + base);
    }
    final PrintWriter out = spec.commandLine().getOut();
    final HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5))
        .build();
    final JsonNode health;
    final JsonNode addrs;
    final JsonNode stats;
    final JsonNode status;
    try {
      health = get(client, base, "/health", true);
      addrs = get(client, base, "/multiaddrs", true);
      stats = get(client, base, "/pinning/stats", true);
      status = get(client, base, "/dashboard/status", false);
    } catch (final IOException e) {
      spec.commandLine().getErr().println("relay-pinner status: no answer from " + base + ": "
          + (e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage()));
      return Main.EXIT_FAILURE;
    } catch (final InterruptedException e) {
      Thread.currentThread().interrupt();
      return Main.EXIT_FAILURE;
    }
    print(out, base, health, addrs, stats, status);
    return 0;
  }

  static void print(final PrintWriter out, final URI base, final JsonNode health,
      final JsonNode addrs, final JsonNode stats, final JsonNode status) {
    out.printf(Locale.ROOT, "relay-pinner %s at %s: %s%n", health.path("version").asText("?"),
        base, health.path("status").asText("?"));
    out.println("  peer id      " + health.path("peerId").asText());
    if (!health.path("autoTlsServingZone").isNull()
        && !health.path("autoTlsServingZone").asText().isEmpty()) {
      out.println("  autotls      " + health.path("autoTlsServingZone").asText());
    }
    out.println("  mode         " + (addrs.path("deployedMode").asBoolean() ? "deployed"
        : "development"));
    out.println("  addresses    " + addrs.path("all").size());
    for (final JsonNode a : addrs.path("all")) {
      out.println("    " + a.asText());
    }
    if (status != null) {
      final JsonNode c = status.path("connections");
      final StringBuilder by = new StringBuilder();
      for (final Iterator<Map.Entry<String, JsonNode>> it = c.path("byTransport").fields();
          it.hasNext();) {
        final Map.Entry<String, JsonNode> e = it.next();
        if (e.getValue().asInt() > 0) {
          by.append(by.isEmpty() ? " (" : ", ").append(e.getKey()).append(' ')
              .append(e.getValue().asInt());
        }
      }
      out.println("  connections  " + c.path("total").asInt() + (by.isEmpty() ? "" : by + ")"));
    } else {
      out.println("  connections  " + health.path("connections").path("active").asInt());
    }
    final JsonNode q = stats.path("syncQueue");
    out.printf(Locale.ROOT, "  sync         %d active%s, %d waiting, %d in cooldown; %d "
            + "operations, %d failed, %d timed out%n", q.path("active").asInt(),
        status == null ? "" : " of " + status.path("sync").path("slots").asInt() + " slots",
        q.path("waiting").asInt(), q.path("cooldownTopics").asInt(),
        stats.path("syncOperations").asLong(), stats.path("failedSyncs").asLong(),
        q.path("timedOutSyncs").asLong());
    if (status == null) {
      out.println("  pins         " + stats.path("totalPinned").asLong()
          + " media CIDs pinned since start");
      return;
    }
    final JsonNode s = status.path("storage");
    final long total = s.path("dataDirTotalBytes").asLong();
    final long free = s.path("dataDirUsableBytes").asLong();
    out.printf(Locale.ROOT, "  pins         %d roots; %d media CIDs pinned since start%n",
        s.path("pinnedRoots").asInt(), stats.path("totalPinned").asLong());
    out.printf(Locale.ROOT, "  disk         %s free of %s%s%n", bytes(free), bytes(total),
        s.path("quotaBytes").isNull() ? "" : ", quota " + bytes(s.path("quotaBytes").asLong()));
    out.println("  databases    " + status.path("databasesTotal").asInt());
    int shown = 0;
    for (final JsonNode d : status.path("databases")) {
      if (shown++ == MAX_DATABASES) {
        out.println("    … (" + (status.path("databasesTotal").asInt() - MAX_DATABASES)
            + " more; see /dashboard)");
        break;
      }
      final String held = d.path("entries").isNull() ? "not held"
          : d.path("entries").asInt() + " entries, " + d.path("heads").asInt() + " heads, "
              + (d.path("complete").asBoolean() ? "complete"
                  : d.path("missing").asInt() + " missing");
      out.println("    " + d.path("address").asText() + "  " + held + ", last sync "
          + d.path("lastSyncedAt").asText("never"));
    }
    final JsonNode problems = status.path("sync").path("recentProblems");
    out.println("  problems     " + (problems.isEmpty() ? "none" : problems.size() + " recent"));
    int listed = 0;
    for (final JsonNode p : problems) {
      if (listed++ == 5) {
        break;
      }
      out.println("    " + p.path("at").asText() + " " + p.path("kind").asText() + " "
          + p.path("subject").asText("") + ": " + p.path("message").asText());
    }
  }

  private static String bytes(final long n) {
    final String[] units = {"B", "KiB", "MiB", "GiB", "TiB"};
    double v = n;
    int i = 0;
    while (v >= 1024 && i < units.length - 1) {
      v /= 1024;
      i++;
    }
    return i == 0 ? n + " B" : String.format(Locale.ROOT, "%.1f %s", v, units[i]);
  }

  /** The JSON body; {@code null} for a 404 when the route is optional. */
  private static JsonNode get(final HttpClient client, final URI base, final String path,
      final boolean required) throws IOException, InterruptedException {
    final String root = base.toString().replaceAll("/+$", "");
    final HttpResponse<String> response = client.send(HttpRequest.newBuilder(
        URI.create(root + path)).timeout(Duration.ofSeconds(10)).build(),
        HttpResponse.BodyHandlers.ofString());
    if (response.statusCode() == 404 && !required) {
      return null;
    }
    if (response.statusCode() != 200) {
      throw new IOException("GET " + path + " answered " + response.statusCode());
    }
    return JSON.readTree(response.body());
  }
}
