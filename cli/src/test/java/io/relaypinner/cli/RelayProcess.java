package io.relaypinner.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.relaypinner.ipfs.blockstore.FlatFsBlockstore;
import io.relaypinner.ipfs.datastore.MvStoreDatastore;
import io.relaypinner.ipfs.pin.CodecLinkResolver;
import io.relaypinner.ipfs.pin.PinHolder;
import io.relaypinner.ipfs.pin.PinResult;
import io.relaypinner.ipfs.pin.PinStore;
import io.relaypinner.libp2p.crypto.PrivateKey;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.multiformats.Multicodec;
import io.relaypinner.multiformats.Multihash;
import io.relaypinner.multiformats.PeerId;
import io.relaypinner.testkit.Sigkill;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ConnectException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A relay started the way an operator starts it: {@code ./relay-pinner run} (the launcher at the
 * repository root, the shaded jar of this build, the JVM options of
 * {@code packaging/jvm.options}) as a child process on 127.0.0.1, for attack tests that must see
 * the shipped heap (issue 36). The launcher {@code exec}s the JVM, so the child is the relay's
 * JVM: {@link #pid()} is what {@code jcmd} attaches to.
 *
 * <pre>
 *   try (RelayProcess relay = RelayProcess.builder(dir.resolve("data"))
 *       .env("RELAY_API_TOKEN", "secret")        // any setting of docs/configuration.md
 *       .jvmOptions("-Xmx96m")                   // RELAY_JAVA_OPTS: after the launcher's own
 *       .seedFile("hello".getBytes(UTF_8))       // a pinned raw block, before the start
 *       .start()) {                              // returns once /health answers 200
 *     ... attack relay.url("/ipfs/..."), relay.tcpMultiaddr() ...
 *     HonestClient.assertServed(relay, HonestJsClient.shared()); // /health, the seeded /ipfs
 *                                                // GET, a libp2p dial; a JS writer's round
 *     assertThat(relay.heapAfterGcBytes()).isLessThan(96L << 20);
 *   }                                            // close(): SIGKILL to the process tree
 * </pre>
 *
 * <p>Each start picks free ports for HTTP, TCP and WebSocket and keeps them across
 * {@link #restart()}; stdout and stderr of every run go to {@code <logDir>/relay-<n>.stdout.txt}
 * and {@code .stderr.txt} ({@link #stderr()}).
 *
 * <p>No relay outlives its test: {@link #close()} kills the launcher's whole process tree (before
 * its {@code exec} the launcher may be running a Maven build of a stale jar or the start-up
 * archive's training relay), a start that fails closes what it started, and a JVM shutdown hook
 * kills every relay not closed yet when the test JVM ends first.
 */
public final class RelayProcess implements AutoCloseable {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Duration START_TIMEOUT = Duration.ofSeconds(90);
  /** How long {@link #close()} waits for each killed process to be gone. */
  private static final Duration KILL_TIMEOUT = Duration.ofSeconds(20);
  /**
   * Relays started and not closed yet: what the shutdown hook kills when the test JVM ends
   * before a test closed its relay (an {@code @AfterAll} that never ran, a fork ended by
   * failsafe's timeout).
   */
  private static final Set<RelayProcess> OPEN = ConcurrentHashMap.newKeySet();
  /** One heap space of {@code GC.heap_info}: "def new generation total 14784K, used 563K". */
  private static final Pattern HEAP_SPACE = Pattern.compile("total (\\d+)K, used (\\d+)K");

  static {
    Runtime.getRuntime().addShutdownHook(
        new Thread(RelayProcess::closeAll, "relay-process-reaper"));
  }

  private final Builder settings;
  private final int run;
  private final Process process;
  private final HttpClient http = HttpClient.newBuilder()
      .connectTimeout(Duration.ofSeconds(2)).build();
  private JsonNode health;

  private RelayProcess(final Builder settings, final int run) throws IOException {
    this.settings = settings;
    this.run = run;
    final ProcessBuilder builder = new ProcessBuilder(settings.launcher.toString(), "run");
    builder.environment().putAll(settings.environment());
    builder.redirectOutput(log("stdout").toFile());
    builder.redirectError(log("stderr").toFile());
    this.process = builder.start();
    OPEN.add(this);
  }

  /** Closes every relay not closed yet: the shutdown hook's last resort. */
  static void closeAll() {
    for (final RelayProcess relay : List.copyOf(OPEN)) {
      relay.close();
    }
  }

  /** Settings for a relay whose data directory is {@code dataDir} (created when missing). */
  public static Builder builder(final Path dataDir) {
    return new Builder(dataDir);
  }

  /** How a {@link RelayProcess} starts; {@link #start()} may be called again for a second one. */
  public static final class Builder {
    private final Path dataDir;
    private final Map<String, String> env = new LinkedHashMap<>();
    private final List<String> jvmOptions = new ArrayList<>();
    private final List<byte[]> seeds = new ArrayList<>();
    private final List<Cid> seeded = new ArrayList<>();
    private final Map<Cid, Map<Cid, byte[]>> dags = new LinkedHashMap<>();
    private final Map<String, byte[]> entries = new LinkedHashMap<>();
    private Path logDir;
    private Path launcher = LauncherWarmUp.LAUNCHER;
    private Duration startTimeout = START_TIMEOUT;
    private PeerId peerId;
    private int httpPort;
    private int tcpPort;
    private int wsPort;
    private int runs;

    private Builder(final Path dataDir) {
      this.dataDir = dataDir.toAbsolutePath();
      this.logDir = this.dataDir.getParent();
    }

    /** A setting of docs/configuration.md; wins over the harness's loopback defaults. */
    public Builder env(final String name, final String value) {
      env.put(Objects.requireNonNull(name, "name"), Objects.requireNonNull(value, "value"));
      return this;
    }

    /**
     * JVM options added through {@code RELAY_JAVA_OPTS}, after {@code packaging/jvm.options}
     * (so e.g. {@code -Xmx96m} overrides the shipped heap). Calls add up; of two values of one
     * option, the later wins.
     */
    public Builder jvmOptions(final String... options) {
      jvmOptions.addAll(List.of(options));
      return this;
    }

    /**
     * A file of {@code content} stored as one raw block and pinned in the data directory before
     * the relay starts (the stores are opened in this JVM, then closed), so an honest
     * {@code /ipfs/<cid>} GET has something to fetch; {@link RelayProcess#seeded()}.
     */
    public Builder seedFile(final byte[] content) {
      seeds.add(content.clone());
      return this;
    }

    /**
     * A DAG of {@code blocks} (any codecs, the root among them) stored and pinned from
     * {@code root} in the data directory before the relay starts, like {@link #seedFile}: a
     * relay that serves it from its own stores, no network fallback needed.
     */
    public Builder seedDag(final Cid root, final Map<Cid, byte[]> blocks) {
      dags.put(Objects.requireNonNull(root, "root"), new LinkedHashMap<>(blocks));
      return this;
    }

    /**
     * A datastore entry written in the data directory before the relay starts, like
     * {@link #seedFile}: state a long run would have left, e.g. the records of followed
     * databases ({@code /relay/topics/orbitdb/...}), without the work that made it.
     */
    public Builder seedDatastore(final String key, final byte[] value) {
      entries.put(Objects.requireNonNull(key, "key"), value.clone());
      return this;
    }

    /**
     * The relay's key ({@code RELAY_PRIV_KEY}), so that its PeerId and {@link #tcpMultiaddr()}
     * are known before it starts: e.g. for two relays that dial each other at start.
     */
    public Builder identity(final PrivateKey key) {
      peerId = key.publicKey().peerId();
      return env("RELAY_PRIV_KEY", HexFormat.of().formatHex(key.marshal()));
    }

    /**
     * {@code /ip4/127.0.0.1/tcp/<port>/p2p/<peerId>} of the relay these settings start (its ports
     * are chosen now if they were not yet); needs {@link #identity}.
     */
    public String tcpMultiaddr() throws IOException, InterruptedException {
      if (peerId == null) {
        throw new IllegalStateException("no identity: the PeerId is known only after the start");
      }
      choosePorts();
      return "/ip4/127.0.0.1/tcp/" + tcpPort + "/p2p/" + peerId.toBase58();
    }

    /** Where the runs' stdout and stderr go; default: the data directory's parent. */
    public Builder logDir(final Path dir) {
      this.logDir = dir.toAbsolutePath();
      return this;
    }

    /**
     * Another launcher than {@code ./relay-pinner} (run with {@code run}, these settings'
     * environment), for tests of this harness; no warm-up of the real launcher then.
     */
    Builder launcher(final Path script) {
      this.launcher = script.toAbsolutePath();
      return this;
    }

    /** How long {@link #start()} waits for {@code /health}; default 90 s. */
    Builder startTimeout(final Duration timeout) {
      this.startTimeout = Objects.requireNonNull(timeout, "timeout");
      return this;
    }

    /**
     * Starts a relay with these settings and waits until {@code /health} answers 200. A start
     * that fails (no 200 in time, the process ended, interrupted) leaves no process behind.
     */
    public RelayProcess start() throws IOException, InterruptedException {
      final RelayProcess relay = launch();
      boolean started = false;
      try {
        relay.awaitHealth();
        started = true;
      } catch (final RuntimeException | Error e) {
        throw new IllegalStateException(
            "relay did not start; stderr:\n" + relay.stderrTail(), e);
      } finally {
        if (!started) {
          relay.close();
        }
      }
      return relay;
    }

    /**
     * Starts a relay with these settings and returns at once, for tests of a relay that must not
     * come up ({@link RelayProcess#awaitExit}); {@link RelayProcess#peerId()} is unknown then.
     */
    public RelayProcess launch() throws IOException, InterruptedException {
      choosePorts();
      Files.createDirectories(dataDir);
      Files.createDirectories(logDir);
      seed();
      return new RelayProcess(this, ++runs);
    }

    /** Free ports for this relay, once the launcher's warm-up is over (it takes ports too). */
    private void choosePorts() throws IOException, InterruptedException {
      if (launcher.equals(LauncherWarmUp.LAUNCHER)) {
        LauncherWarmUp.once();
      }
      if (httpPort == 0) {
        httpPort = freePort();
        tcpPort = freePort();
        wsPort = freePort();
      }
    }

    private void seed() {
      if (seeds.isEmpty() && dags.isEmpty() && entries.isEmpty()) {
        return;
      }
      final FlatFsBlockstore blocks = new FlatFsBlockstore(dataDir.resolve("blocks"));
      try (MvStoreDatastore datastore = new MvStoreDatastore(dataDir.resolve("datastore.mv"))) {
        final PinStore pins = new PinStore(datastore, blocks, CodecLinkResolver.standard());
        for (final byte[] content : seeds) {
          final Cid cid = Cid.v1(Multicodec.RAW, Multihash.sha2_256(content));
          blocks.put(cid, content);
          assertThat(pins.pin(cid, PinHolder.of("test", "seeded")))
              .isInstanceOf(PinResult.Pinned.class);
          seeded.add(cid);
        }
        for (final Map.Entry<Cid, Map<Cid, byte[]>> dag : dags.entrySet()) {
          dag.getValue().forEach(blocks::put);
          assertThat(pins.pin(dag.getKey(), PinHolder.of("test", "seeded")))
              .isInstanceOf(PinResult.Pinned.class);
        }
        entries.forEach(datastore::put);
      } finally {
        blocks.close();
      }
      seeds.clear();
      dags.clear();
      entries.clear();
    }

    Map<String, String> environment() {
      final Map<String, String> out = new LinkedHashMap<>();
      out.put("DATASTORE_PATH", dataDir.toString());
      out.put("METRICS_HOST", "127.0.0.1");
      out.put("METRICS_PORT", Integer.toString(httpPort));
      out.put("RELAY_LISTEN_IPV4", "127.0.0.1");
      out.put("RELAY_DISABLE_IPV6", "true");
      out.put("RELAY_TCP_PORT", Integer.toString(tcpPort));
      out.put("RELAY_WS_PORT", Integer.toString(wsPort));
      out.put("RELAY_QUIC_PORT", "0");
      out.putAll(env);
      if (!jvmOptions.isEmpty()) {
        out.put("RELAY_JAVA_OPTS", String.join(" ", jvmOptions));
      }
      return out;
    }
  }

  private static int freePort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0)) {
      return socket.getLocalPort();
    }
  }

  private Path log(final String stream) {
    return settings.logDir.resolve("relay-" + run + "." + stream + ".txt");
  }

  private void awaitHealth() {
    final HttpRequest request = HttpRequest.newBuilder(url("/health"))
        .timeout(Duration.ofSeconds(2)).build();
    await().atMost(settings.startTimeout).pollInterval(Duration.ofMillis(100))
        // Not listening yet; or, on a busy machine, slower than the request's 2 s to answer its
        // first /health: not a failed start, the start timeout decides.
        .ignoreExceptionsMatching(e -> e instanceof ConnectException
            || e instanceof HttpTimeoutException)
        .until(() -> {
          assertThat(process.isAlive()).as("relay process alive").isTrue();
          final HttpResponse<String> response =
              http.send(request, HttpResponse.BodyHandlers.ofString());
          if (response.statusCode() != 200) {
            return false;
          }
          health = JSON.readTree(response.body());
          return true;
        });
  }

  /** {@code http://127.0.0.1:<port>}: the HTTP listener (health, metrics, gateway, API). */
  public URI httpBase() {
    return URI.create("http://127.0.0.1:" + settings.httpPort);
  }

  /** {@code path} (with its query) on the HTTP listener. */
  public URI url(final String path) {
    return URI.create(httpBase() + path);
  }

  public int httpPort() {
    return settings.httpPort;
  }

  public int tcpPort() {
    return settings.tcpPort;
  }

  public int wsPort() {
    return settings.wsPort;
  }

  public Path dataDir() {
    return settings.dataDir;
  }

  /** The relay's PeerId (base58), from its {@code /health}. */
  public String peerId() {
    return health.get("peerId").asText();
  }

  /** {@code /ip4/127.0.0.1/tcp/<port>/p2p/<peerId>}. */
  public String tcpMultiaddr() {
    return "/ip4/127.0.0.1/tcp/" + settings.tcpPort + "/p2p/" + peerId();
  }

  /** {@code /ip4/127.0.0.1/tcp/<port>/ws/p2p/<peerId>}. */
  public String wsMultiaddr() {
    return "/ip4/127.0.0.1/tcp/" + settings.wsPort + "/ws/p2p/" + peerId();
  }

  /** The CIDs of {@link Builder#seedFile} (raw blocks, pinned), in the order seeded. */
  public List<Cid> seeded() {
    return List.copyOf(settings.seeded);
  }

  /** A GET of {@code path}, the body as text. */
  public HttpResponse<String> get(final String path) throws IOException, InterruptedException {
    return http.send(HttpRequest.newBuilder(url(path)).timeout(Duration.ofSeconds(30)).build(),
        HttpResponse.BodyHandlers.ofString());
  }

  /** A GET of {@code path}, the body as bytes. */
  public HttpResponse<byte[]> getBytes(final String path)
      throws IOException, InterruptedException {
    return http.send(HttpRequest.newBuilder(url(path)).timeout(Duration.ofSeconds(30)).build(),
        HttpResponse.BodyHandlers.ofByteArray());
  }

  /** {@code /metrics} as text. */
  public String metrics() throws IOException, InterruptedException {
    final HttpResponse<String> response = get("/metrics");
    assertThat(response.statusCode()).isEqualTo(200);
    return response.body();
  }

  /**
   * The sum of the samples of metric {@code name} on {@code /metrics} (all label sets), empty
   * when it has none.
   */
  public OptionalDouble metric(final String name) throws IOException, InterruptedException {
    double sum = 0;
    boolean found = false;
    for (final String line : metrics().split("\n")) {
      if (line.startsWith(name + " ") || line.startsWith(name + "{")) {
        sum += Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
        found = true;
      }
    }
    return found ? OptionalDouble.of(sum) : OptionalDouble.empty();
  }

  /** The relay JVM's process id (the launcher {@code exec}s it). */
  public long pid() {
    final ProcessHandle handle = process.toHandle();
    if (isJava(handle)) {
      return handle.pid();
    }
    // Not exec'd (a launcher that forks): the JVM is its only java descendant.
    return handle.descendants().filter(RelayProcess::isJava).findFirst()
        .orElseThrow(() -> new IllegalStateException("no relay JVM under " + handle.pid()))
        .pid();
  }

  private static boolean isJava(final ProcessHandle handle) {
    return handle.info().command().map(c -> c.endsWith("/java")).orElse(false);
  }

  /** {@code jcmd <pid> <command…>} of the JDK that runs the relay; its output. */
  public String jcmd(final String... command) throws IOException, InterruptedException {
    final long pid = pid();
    final Path java = Path.of(ProcessHandle.of(pid).flatMap(h -> h.info().command())
        .orElseThrow(() -> new IllegalStateException("relay JVM " + pid + " is gone")));
    final List<String> line = new ArrayList<>();
    line.add(java.resolveSibling("jcmd").toString());
    line.add(Long.toString(pid));
    line.addAll(List.of(command));
    final Process jcmd = new ProcessBuilder(line).redirectErrorStream(true).start();
    final String output = new String(jcmd.getInputStream().readAllBytes(),
        StandardCharsets.UTF_8);
    if (!jcmd.waitFor(60, TimeUnit.SECONDS) || jcmd.exitValue() != 0) {
      jcmd.destroyForcibly();
      throw new IllegalStateException(String.join(" ", line) + " failed:\n" + output);
    }
    return output;
  }

  /** The JVM's flags as {@code jcmd VM.flags} prints them. */
  public String vmFlags() throws IOException, InterruptedException {
    return jcmd("VM.flags");
  }

  /**
   * The heap in use right after a full collection ({@code jcmd GC.run}, then the used bytes of
   * every heap space in {@code GC.heap_info}): what the relay really holds.
   */
  public long heapAfterGcBytes() throws IOException, InterruptedException {
    jcmd("GC.run");
    final Matcher matcher = HEAP_SPACE.matcher(jcmd("GC.heap_info"));
    long usedKib = 0;
    boolean found = false;
    while (matcher.find()) {
      usedKib += Long.parseLong(matcher.group(2));
      found = true;
    }
    if (!found) {
      throw new IllegalStateException("no heap space in GC.heap_info");
    }
    return usedKib * 1024;
  }

  public boolean isAlive() {
    return process.isAlive();
  }

  /** Waits up to {@code timeout} for the relay to end on its own; its exit status if it did. */
  public Optional<Integer> awaitExit(final Duration timeout) throws InterruptedException {
    return process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)
        ? Optional.of(process.exitValue()) : Optional.empty();
  }

  /** SIGKILL (no shutdown hook runs, like an OutOfMemoryError exit); its exit status. */
  public int kill9() throws InterruptedException {
    assertThat(Sigkill.killAndWait(process, KILL_TIMEOUT)).isTrue();
    return process.exitValue();
  }

  /** SIGTERM, a clean stop; its exit status (0 when the relay stopped cleanly). */
  public int stop() throws InterruptedException {
    process.destroy();
    assertThat(process.waitFor(30, TimeUnit.SECONDS)).as("relay stopped within 30 s").isTrue();
    return process.exitValue();
  }

  /** A new relay on the same data directory and ports, once this one has ended. */
  public RelayProcess restart() throws IOException, InterruptedException {
    assertThat(process.isAlive()).as("restart after the relay ended").isFalse();
    return settings.start();
  }

  /** This run's stderr (the log) so far. */
  public String stderr() {
    return read(log("stderr"));
  }

  /** This run's stdout so far (where the JVM reports an OutOfMemoryError exit). */
  public String stdout() {
    return read(log("stdout"));
  }

  private static String read(final Path file) {
    try {
      return Files.readString(file);
    } catch (final IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private String stderrTail() {
    final String all = stderr();
    return all.length() > 8_000 ? all.substring(all.length() - 8_000) : all;
  }

  /**
   * SIGKILL to the process and to every process it started, then waits (up to 20 s) until all
   * have ended. A test's relay holds nothing a clean stop must save ({@link #stop()} is the
   * clean stop), and SIGKILL cannot be ignored or delayed. Descendants count even when the
   * launcher {@code exec}s the JVM: before the {@code exec} it may have started a Maven build or
   * a training relay.
   */
  @Override
  public void close() {
    try {
      killTree(process.toHandle(), KILL_TIMEOUT);
    } finally {
      OPEN.remove(this);
    }
  }

  /**
   * SIGKILL to {@code root} and all its descendants, then waits up to {@code timeout} until all
   * have ended; true when they have. The descendants are listed before {@code root} dies (then they are
   * re-parented and no longer its descendants); each one's own descendants are listed again
   * before it is killed.
   */
  static boolean killTree(final ProcessHandle root, final Duration timeout) {
    final List<ProcessHandle> tree = new ArrayList<>();
    tree.add(root);
    root.descendants().forEach(tree::add);
    root.destroyForcibly();
    for (int i = 1; i < tree.size(); i++) {
      final ProcessHandle child = tree.get(i);
      child.descendants().filter(d -> !tree.contains(d)).forEach(tree::add);
      child.destroyForcibly();
    }
    final long deadline = System.nanoTime() + timeout.toNanos();
    while (!tree.stream().allMatch(RelayProcess::ended)) {
      if (System.nanoTime() > deadline) {
        return false;
      }
      try {
        Thread.sleep(10);
      } catch (final InterruptedException e) {
        Thread.currentThread().interrupt();
        return false;
      }
    }
    return true;
  }

  /**
   * Whether {@code handle}'s process ended: gone, or a zombie (state {@code Z} in
   * {@code /proc/<pid>/stat}). A killed orphan stays a zombie until the machine's init reaps it
   * (seen: a second in a container), yet it runs nothing any more.
   */
  static boolean ended(final ProcessHandle handle) {
    if (!handle.isAlive()) {
      return true;
    }
    try {
      final String stat =
          Files.readString(Path.of("/proc", Long.toString(handle.pid()), "stat"));
      // "<pid> (<command>) <state> ...": the command may hold spaces and parentheses.
      final int end = stat.lastIndexOf(')');
      return end > 0 && stat.length() > end + 2 && stat.charAt(end + 2) == 'Z';
    } catch (final IOException e) {
      return !handle.isAlive();
    }
  }
}
