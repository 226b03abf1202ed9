// Soak (issue 36): honest replication and HTTP load alongside the hostile load of
// docs/hardening.md, for a long time (default one hour), against a relay started by
// bench/soak.sh through ./relay-pinner (the launcher's memory settings). Every 10 s it samples
// the relay process: RSS (/proc), heap after a full GC (jcmd GC.run, then GC.heap_info), open
// file descriptors (/proc/<pid>/fd), threads (/proc/<pid>/status) and libp2p connections
// (/health). At the end: per series its range and least-squares slope per hour over the
// samples after a 5-minute warm-up, the honest clients' errors, a CSV and an SVG plot.
//   java -cp cli/target/relay-pinner.jar:relay/target/test-classes:orbitdb/target/test-classes \
//       bench/SoakBench.java <http port> <relay pid> <out dir> [seconds] [honest] [hostile]
import io.relaypinner.libp2p.netty.EventLoops;
import io.relaypinner.multiformats.Multiaddr;
import io.relaypinner.relay.hostile.HostileLoad;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

public final class SoakBench {
  private static final String[] SERIES = {"rss_mib", "heap_after_gc_mib", "fds", "threads",
      "connections", "followed_databases"};
  /**
   * Samples before this are left out of the slopes: the JVM's warm-up, and (each honest peer
   * writes a new database) the time the followed databases take to reach the bound the heap
   * gives them, after which idle ones make room for new ones. {@code -Dsoak.warmup=<seconds>}.
   */
  private static final long WARM_UP_SECONDS = Long.getLong("soak.warmup", 300);
  /**
   * How many databases the honest peers write to, taking turns ({@code -Dsoak.databases}):
   * each peer appends to the next one, as an app's users keep writing to their databases, so
   * the relay follows a fixed set inside its capacity. 0: each peer makes a new database (the
   * followed databases then grow to the heap's bound and idle ones make room).
   */
  private static final int DATABASES = Integer.getInteger("soak.databases", 200);

  public static void main(final String[] args) throws Exception {
    final int port = Integer.parseInt(args[0]);
    final long pid = Long.parseLong(args[1]);
    final Path out = Path.of(args[2]);
    final long seconds = args.length > 3 ? Long.parseLong(args[3]) : 3600;
    final int honest = args.length > 4 ? Integer.parseInt(args[4]) : 4;
    final int hostile = args.length > 5 ? Integer.parseInt(args[5]) : 8;
    Files.createDirectories(out);
    final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    final Multiaddr relay = relayAddress(http, port);
    System.out.printf(Locale.ROOT, "soak: relay %s (pid %d), %d s, %d honest peers per round"
        + " writing to %s, %d hostile peers%n", relay, pid, seconds, honest,
        DATABASES == 0 ? "a new database each" : DATABASES + " databases", hostile);

    final List<double[]> samples = new ArrayList<>();
    final long start = System.nanoTime();
    final ScheduledExecutorService sampler = Executors.newSingleThreadScheduledExecutor();
    sampler.scheduleAtFixedRate(() -> {
      final double[] row = sample(http, port, pid, (System.nanoTime() - start) / 1e9);
      synchronized (samples) {
        samples.add(row);
      }
      System.out.printf(Locale.ROOT, "%6.0f s  RSS %.1f MiB  heap after GC %.1f MiB  fds %.0f"
          + "  threads %.0f  connections %.0f  followed %.0f%n", row[0], row[1], row[2], row[3],
          row[4], row[5], row[6]);
    }, 0, 10, TimeUnit.SECONDS);

    // Honest HTTP clients: the API and status routes a dashboard and apps poll, 10 per second.
    final AtomicLong httpOk = new AtomicLong();
    final AtomicLong httpFailed = new AtomicLong();
    final ScheduledExecutorService poller = Executors.newSingleThreadScheduledExecutor();
    final String[] paths = {"/health", "/multiaddrs", "/pinning/stats", "/dashboard/status",
        "/metrics"};
    final AtomicLong turn = new AtomicLong();
    poller.scheduleAtFixedRate(() -> {
      final String path = paths[(int) (turn.getAndIncrement() % paths.length)];
      try {
        final int status = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
            + port + path)).timeout(Duration.ofSeconds(10)).build(),
            HttpResponse.BodyHandlers.discarding()).statusCode();
        (status == 200 ? httpOk : httpFailed).incrementAndGet();
      } catch (final Exception e) {
        httpFailed.incrementAndGet();
      }
    }, 0, 100, TimeUnit.MILLISECONDS);

    int rounds = 0;
    int incomplete = 0;
    final EventLoops loops = EventLoops.create(2, "soak");
    final HostileLoad.DatabasePool pool = DATABASES == 0 ? null
        : new HostileLoad.DatabasePool(Math.max(DATABASES, honest));
    try (HostileLoad load = new HostileLoad(relay, loops)) {
      load.startHostile(hostile, Duration.ofMillis(100));
      while (System.nanoTime() - start < TimeUnit.SECONDS.toNanos(seconds)) {
        final HostileLoad.Round round = load.honestRound(honest, 20, 256 * 1024,
            Duration.ofMinutes(5), pool);
        rounds++;
        final long missing = round.peers().stream().filter(p -> !p.complete()).count();
        incomplete += (int) missing;
        System.out.printf(Locale.ROOT, "round %d: %d/%d honest peers complete, median %.1f s%n",
            rounds, round.peers().size() - missing, round.peers().size(),
            round.median().toMillis() / 1000.0);
      }
      System.out.printf("attack counters: %s%n", load.attackCounters());
      load.stopHostile();
    } finally {
      poller.shutdownNow();
      // Not shutdownNow: an interrupted sample (jcmd cut short) would read as zeros.
      sampler.shutdown();
      sampler.awaitTermination(60, TimeUnit.SECONDS);
      loops.shutdownGracefully(Duration.ofSeconds(3));
    }

    final List<double[]> rows;
    synchronized (samples) {
      rows = List.copyOf(samples);
    }
    writeCsv(out.resolve("soak.csv"), rows);
    System.out.printf(Locale.ROOT, "%nhonest: %d replication rounds, %d incomplete peers; HTTP"
        + " %d ok, %d failed%n", rounds, incomplete, httpOk.get(), httpFailed.get());
    System.out.printf(Locale.ROOT, "| series | first | last | min | max | range | slope per hour"
        + " (after %d s) |%n", WARM_UP_SECONDS);
    System.out.println("|---|---|---|---|---|---|---|");
    for (int s = 0; s < SERIES.length; s++) {
      final int col = s + 1;
      double min = Double.MAX_VALUE;
      double max = -Double.MAX_VALUE;
      for (final double[] r : rows) {
        min = Math.min(min, r[col]);
        max = Math.max(max, r[col]);
      }
      System.out.printf(Locale.ROOT, "| %s | %.1f | %.1f | %.1f | %.1f | %.1f | %+.2f |%n",
          SERIES[s], rows.get(0)[col], rows.get(rows.size() - 1)[col], min, max, max - min,
          slopePerHour(rows, col));
    }
    writeSvg(out.resolve("soak.svg"), rows);
    System.out.println("samples: " + out.resolve("soak.csv") + ", plot: " + out.resolve("soak.svg"));
    System.exit(0);
  }

  private static double[] sample(final HttpClient http, final int port, final long pid,
      final double at) {
    return new double[] {at, status(pid, "VmRSS:") / 1024.0, heapAfterGcMib(pid), fds(pid),
        status(pid, "Threads:"), connections(http, port), followed(http, port)};
  }

  private static double status(final long pid, final String key) {
    try {
      for (final String line : Files.readAllLines(Path.of("/proc/" + pid + "/status"))) {
        if (line.startsWith(key)) {
          return Double.parseDouble(line.replaceAll("[^0-9]", ""));
        }
      }
    } catch (final IOException e) {
      // gone: 0
    }
    return 0;
  }

  private static double fds(final long pid) {
    try (var list = Files.list(Path.of("/proc/" + pid + "/fd"))) {
      return list.count();
    } catch (final IOException e) {
      return 0;
    }
  }

  /** Heap in use right after a full collection (the live set), from jcmd. */
  private static double heapAfterGcMib(final long pid) {
    final Path jcmd = Path.of(System.getProperty("java.home"), "bin", "jcmd");
    try {
      run(jcmd.toString(), Long.toString(pid), "GC.run");
      final String info = run(jcmd.toString(), Long.toString(pid), "GC.heap_info");
      long usedKiB = 0;
      for (final String line : info.split("\n")) {
        if (line.contains("Metaspace") || line.contains("class space")) {
          continue;
        }
        final Matcher m = Pattern.compile("used (\\d+)K").matcher(line);
        if (m.find() && (line.contains("generation") || line.contains("heap"))) {
          usedKiB += Long.parseLong(m.group(1));
        }
      }
      return usedKiB / 1024.0;
    } catch (final Exception e) {
      return 0;
    }
  }

  private static String run(final String... command) throws Exception {
    final Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    final String text = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    p.waitFor(30, TimeUnit.SECONDS);
    return text;
  }

  private static double connections(final HttpClient http, final int port) {
    try {
      final String body = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port
          + "/health")).timeout(Duration.ofSeconds(5)).build(),
          HttpResponse.BodyHandlers.ofString()).body();
      final Matcher m = Pattern.compile("\"active\"\\s*:\\s*(\\d+)").matcher(body);
      return m.find() ? Double.parseDouble(m.group(1)) : 0;
    } catch (final Exception e) {
      return 0;
    }
  }

  /** The relay's followed databases ({@code relay_orbitdb_topics_followed}). */
  private static double followed(final HttpClient http, final int port) {
    try {
      final String body = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port
          + "/metrics")).timeout(Duration.ofSeconds(5)).build(),
          HttpResponse.BodyHandlers.ofString()).body();
      final Matcher m = Pattern.compile("(?m)^relay_orbitdb_topics_followed ([0-9.eE+]+)$")
          .matcher(body);
      return m.find() ? Double.parseDouble(m.group(1)) : 0;
    } catch (final Exception e) {
      return 0;
    }
  }

  /** Least-squares slope of column {@code col} against time, per hour, after the warm-up. */
  private static double slopePerHour(final List<double[]> rows, final int col) {
    double n = 0;
    double sx = 0;
    double sy = 0;
    double sxx = 0;
    double sxy = 0;
    for (final double[] r : rows) {
      if (r[0] < WARM_UP_SECONDS && rows.get(rows.size() - 1)[0] > 2 * WARM_UP_SECONDS) {
        continue;
      }
      final double x = r[0] / 3600.0;
      n++;
      sx += x;
      sy += r[col];
      sxx += x * x;
      sxy += x * r[col];
    }
    final double d = n * sxx - sx * sx;
    return n < 2 || d == 0 ? 0 : (n * sxy - sx * sy) / d;
  }

  private static void writeCsv(final Path file, final List<double[]> rows) throws IOException {
    final StringBuilder csv = new StringBuilder("seconds," + String.join(",", SERIES) + "\n");
    for (final double[] r : rows) {
      for (int i = 0; i < r.length; i++) {
        csv.append(i == 0 ? "" : ",").append(String.format(Locale.ROOT, "%.1f", r[i]));
      }
      csv.append('\n');
    }
    Files.writeString(file, csv);
  }

  /** One small chart per series, time on x, stacked: no plotting library needed. */
  private static void writeSvg(final Path file, final List<double[]> rows) throws IOException {
    final int w = 720;
    final int h = 120;
    final double end = Math.max(1, rows.get(rows.size() - 1)[0]);
    final StringBuilder svg = new StringBuilder(String.format(Locale.ROOT,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
            + "font-family=\"sans-serif\" font-size=\"11\">%n", w + 80, SERIES.length * (h + 30)));
    for (int s = 0; s < SERIES.length; s++) {
      final int col = s + 1;
      double max = 1;
      for (final double[] r : rows) {
        max = Math.max(max, r[col]);
      }
      final int top = s * (h + 30) + 20;
      svg.append(String.format(Locale.ROOT, "<text x=\"0\" y=\"%d\">%s (max %.1f)</text>%n",
          top - 5, SERIES[s], max));
      svg.append(String.format(Locale.ROOT, "<rect x=\"40\" y=\"%d\" width=\"%d\" height=\"%d\""
          + " fill=\"none\" stroke=\"#ccc\"/>%n", top, w, h));
      svg.append("<polyline fill=\"none\" stroke=\"#1f77b4\" points=\"");
      for (final double[] r : rows) {
        svg.append(String.format(Locale.ROOT, "%.1f,%.1f ", 40 + r[0] / end * w,
            top + h - r[col] / (max * 1.1) * h));
      }
      svg.append("\"/>\n");
    }
    svg.append(String.format(Locale.ROOT, "<text x=\"40\" y=\"%d\">0 s</text><text x=\"%d\" "
        + "y=\"%d\">%.0f s</text>%n</svg>%n", SERIES.length * (h + 30) - 2, w, SERIES.length
        * (h + 30) - 2, end));
    Files.writeString(file, svg);
  }

  private static Multiaddr relayAddress(final HttpClient http, final int port) throws Exception {
    final String record = http.send(HttpRequest.newBuilder(
        URI.create("http://127.0.0.1:" + port + "/multiaddrs")).build(),
        HttpResponse.BodyHandlers.ofString()).body();
    final Matcher tcp = Pattern.compile("/ip4/127\\.0\\.0\\.1/tcp/[0-9]+/p2p/[1-9A-Za-z]+")
        .matcher(record);
    if (!tcp.find()) {
      throw new IllegalStateException("no loopback TCP address in " + record);
    }
    return Multiaddr.parse(tcp.group());
  }
}
