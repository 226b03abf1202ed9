package io.relaypinner.handoff.deploy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The default host provider: every guest is its own {@code relay-pinner guest setup-server}
 * process on this machine, with its own directory {@code <base>/<instance id>/} and free ports of
 * this machine "mapped" to the image's guest ports (host port = listen port). Guests outlive the
 * process that created them (each runs in its own session, so a Ctrl-C of {@code deploy} does not
 * reach them); {@link #list()} and {@link #erase(String)} manage them through the files in their
 * directory:
 *
 * <pre>
 *   &lt;base&gt;/&lt;id&gt;/instance.json     id, deployment, pid and start time, ports, item hash
 *   &lt;base&gt;/&lt;id&gt;/deployment.json   the deployment result, once it succeeded
 *   &lt;base&gt;/&lt;id&gt;/authorized_keys   the SSH key line (the pull locator is read from it)
 *   &lt;base&gt;/&lt;id&gt;/state/           the guest state directory (relay.env, keys/, data/)
 *   &lt;base&gt;/&lt;id&gt;/guest.log         the guest's stdout and stderr
 * </pre>
 *
 * A pid is only signalled when the process's start time is the recorded one (no stranger is
 * killed after pid reuse). Erase sends SIGTERM (the guest forgets its registrations and stops the
 * relay), waits, then kills.
 */
public final class LocalHostProvider implements HostProvider {
  private static final Logger LOG = LoggerFactory.getLogger(LocalHostProvider.class);
  /** The provider's name. */
  public static final String NAME = "local";
  /** Files of one instance. */
  public static final String INSTANCE_FILE = "instance.json";
  public static final String DEPLOYMENT_FILE = "deployment.json";
  private static final Pattern ID = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,127}");
  private static final ObjectMapper MAPPER = new ObjectMapper()
      .enable(SerializationFeature.INDENT_OUTPUT);
  /** Environment variables a guest must not inherit from the deployer (they would override it). */
  private static final List<String> SCRUBBED_PREFIXES = List.of("RELAY_", "METRICS_",
      "EXTERNAL_", "PUBLIC_IPV", "ALEPH_", "VITE_");
  private static final List<String> SCRUBBED = List.of("DATASTORE_PATH", "PROXY_HOSTNAME",
      "disableAutoTLS", "LOG_FORMAT");

  /**
   * Settings of the local provider.
   *
   * @param baseDir where instance directories live ({@code ./relay-deployments})
   * @param bindHost the address guests listen on ({@code 127.0.0.1}: only this machine)
   * @param publicIpv4 the address reported as the instances' public IPv4 (the deployer reaches
   *     the guests there)
   * @param guestCommand the command that runs {@code relay-pinner} (java, JVM options, class
   *     path, main class); {@code guest setup-server …} is appended
   * @param slots how many candidate hosts this machine offers (the controller tries at most 5)
   * @param guestPollInterval the guests' pull poll interval
   * @param stopTimeout how long erase waits after SIGTERM before it kills
   */
  public record Settings(Path baseDir, String bindHost, String publicIpv4,
      List<String> guestCommand, int slots, Duration guestPollInterval, Duration stopTimeout) {
    public Settings {
      Objects.requireNonNull(baseDir, "baseDir");
      Objects.requireNonNull(bindHost, "bindHost");
      Objects.requireNonNull(publicIpv4, "publicIpv4");
      guestCommand = List.copyOf(guestCommand);
      if (guestCommand.isEmpty()) {
        throw new IllegalArgumentException("guestCommand must name a program");
      }
      if (slots < 1) {
        throw new IllegalArgumentException("slots must be positive");
      }
    }

    /** Defaults under {@code baseDir}: loopback, 5 slots, the running JVM's class path. */
    public static Settings defaults(final Path baseDir) {
      return new Settings(baseDir, "127.0.0.1", "127.0.0.1", currentJvmCommand(List.of(
          "-Xmx384m", "-XX:+UseSerialGC")), 5, Duration.ofSeconds(1), Duration.ofSeconds(20));
    }

    public Settings withGuestCommand(final List<String> command) {
      return new Settings(baseDir, bindHost, publicIpv4, command, slots, guestPollInterval,
          stopTimeout);
    }
  }

  /**
   * {@code <java.home>/bin/java <jvmOptions> -cp <java.class.path> io.relaypinner.cli.Main}: the
   * running JVM's class path works both from the shaded jar ({@code java -jar} puts the jar there)
   * and from a test class path.
   */
  public static List<String> currentJvmCommand(final List<String> jvmOptions) {
    final List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.addAll(jvmOptions);
    command.add("-cp");
    command.add(System.getProperty("java.class.path"));
    command.add("io.relaypinner.cli.Main");
    return command;
  }

  /**
   * One local instance as {@code instance.json} records it, plus whether its process runs.
   *
   * @param id the instance id (its directory name)
   * @param deploymentId the deployment it belongs to
   * @param directory its directory
   * @param pid the guest process id
   * @param alive whether that process (with the recorded start time) still runs
   * @param json the whole {@code instance.json}, with {@code deployment.json} as
   *     {@code deployment} when present
   */
  public record LocalInstance(String id, String deploymentId, Path directory, long pid,
      boolean alive, ObjectNode json) {}

  private final Settings settings;
  private final Clock clock;

  public LocalHostProvider(final Settings settings, final Clock clock) {
    this.settings = Objects.requireNonNull(settings, "settings");
    this.clock = Objects.requireNonNull(clock, "clock");
  }

  public Settings settings() {
    return settings;
  }

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public List<HostCandidate> compatibleHosts(final ImageManifest manifest) {
    if (manifest.port(ImageManifest.TCP_PORT).isEmpty()
        || manifest.port(ImageManifest.WS_PORT).isEmpty()) {
      // The guest's relay needs its TCP and WebSocket ports forwarded (no fallback to 443).
      return List.of();
    }
    final List<HostCandidate> hosts = new ArrayList<>();
    for (int i = 1; i <= settings.slots(); i++) {
      hosts.add(new HostCandidate("local-" + i, "this machine (slot " + i + ")"));
    }
    return hosts;
  }

  @Override
  public HostInstance create(final InstanceRequest request) {
    final String id = request.deploymentId() + "-" + request.attempt();
    if (!ID.matcher(id).matches()) {
      throw new IllegalArgumentException("bad instance id " + id);
    }
    final Path dir = settings.baseDir().resolve(id).toAbsolutePath().normalize();
    try {
      Files.createDirectories(settings.baseDir());
      Files.createDirectory(dir);
    } catch (final IOException e) {
      throw new HostException("cannot create " + dir + ": " + e.getMessage(), e);
    }
    try {
      return launch(id, dir, request);
    } catch (final RuntimeException e) {
      try {
        erase(id);
      } catch (final RuntimeException cleanup) {
        e.addSuppressed(cleanup);
      }
      throw e;
    }
  }

  private HostInstance launch(final String id, final Path dir, final InstanceRequest request) {
    final Path stateDir = dir.resolve("state");
    final Path keys = dir.resolve("authorized_keys");
    final Map<Integer, PortMapping> ports = new LinkedHashMap<>();
    final List<Integer> guestPorts = request.manifest().tcpPorts().stream()
        .filter(p -> p != 22).toList();
    final List<Integer> free = freePorts(guestPorts.size());
    for (int i = 0; i < guestPorts.size(); i++) {
      ports.put(guestPorts.get(i), PortMapping.tcp(free.get(i)));
    }
    final String itemHash = sha256Hex("local-instance:" + id + ":" + clock.instant());
    try {
      Files.writeString(keys, request.authorizedKey() + "\n", StandardCharsets.UTF_8);
    } catch (final IOException e) {
      throw new HostException("cannot write " + keys + ": " + e.getMessage(), e);
    }
    final List<String> command = new ArrayList<>();
    final Path setsid = Path.of("/usr/bin/setsid");
    if (Files.isExecutable(setsid)) {
      // Its own session: a terminal's Ctrl-C to deploy does not reach the guest.
      command.add(setsid.toString());
    }
    command.addAll(settings.guestCommand());
    command.addAll(List.of("guest", "setup-server",
        "--state-dir", stateDir.toString(),
        "--host", settings.bindHost(),
        "--port", Integer.toString(ports.get(ImageManifest.SETUP_PORT).host()),
        "--records", request.recordsUrl(),
        "--authorized-keys", keys.toString(),
        "--poll-interval", Long.toString(settings.guestPollInterval().toMillis())));
    final ProcessBuilder builder = new ProcessBuilder(command)
        .directory(dir.toFile())
        .redirectErrorStream(true)
        .redirectOutput(ProcessBuilder.Redirect.appendTo(dir.resolve("guest.log").toFile()))
        .redirectInput(ProcessBuilder.Redirect.from(nullDevice()));
    final Map<String, String> env = builder.environment();
    env.keySet().removeIf(name -> SCRUBBED.contains(name)
        || SCRUBBED_PREFIXES.stream().anyMatch(name::startsWith));
    env.put("METRICS_HOST", settings.bindHost());
    env.put("RELAY_LISTEN_IPV4", settings.bindHost());
    env.put("RELAY_DISABLE_IPV6", "true");
    // A local guest has only a loopback address: nothing on the internet could dial it back,
    // so AutoTLS would only log that it has no public address.
    env.put("disableAutoTLS", "true");
    env.put("METRICS_PORT", Integer.toString(mapped(ports, ImageManifest.METRICS_PORT)));
    env.put("RELAY_TCP_PORT", Integer.toString(mapped(ports, ImageManifest.TCP_PORT)));
    env.put("RELAY_WS_PORT", Integer.toString(mapped(ports, ImageManifest.WS_PORT)));
    env.put("ALEPH_BOOTSTRAP_PROFILE", request.manifest().profile());
    final Process process;
    try {
      process = builder.start();
    } catch (final IOException e) {
      throw new HostException("cannot start the guest: " + e.getMessage(), e);
    }
    final ObjectNode json = MAPPER.createObjectNode();
    json.put("id", id);
    json.put("provider", NAME);
    json.put("deploymentId", request.deploymentId());
    json.put("attempt", request.attempt());
    json.put("host", request.host().id());
    json.put("profile", request.manifest().profile());
    json.put("itemHash", itemHash);
    json.put("pid", process.pid());
    json.put("processStart", process.info().startInstant().map(Instant::toString).orElse(null));
    json.put("createdAt", clock.instant().toString());
    json.put("publicIpv4", settings.publicIpv4());
    json.put("records", request.recordsUrl());
    json.put("stateDir", stateDir.toString());
    final ObjectNode mapped = json.putObject("mappedPorts");
    ports.forEach((guest, mapping) -> {
      final ObjectNode m = mapped.putObject(Integer.toString(guest));
      m.put("host", mapping.host());
      m.put("tcp", mapping.tcp());
      m.put("udp", mapping.udp());
    });
    try {
      writeJson(dir.resolve(INSTANCE_FILE), json);
    } catch (final IOException e) {
      process.destroyForcibly();
      throw new HostException("cannot write " + dir.resolve(INSTANCE_FILE), e);
    }
    LOG.info("local guest {} started (pid {}, setup port {}, http {})", id, process.pid(),
        ports.get(ImageManifest.SETUP_PORT).host(), ports.get(ImageManifest.METRICS_PORT));
    return new HostInstance(id, itemHash, request.host(), settings.publicIpv4(),
        Optional.empty(), ports);
  }

  private static int mapped(final Map<Integer, PortMapping> ports, final int guest) {
    final PortMapping mapping = ports.get(guest);
    if (mapping == null) {
      throw new HostException("the image does not request guest port " + guest);
    }
    return mapping.host();
  }

  private List<Integer> freePorts(final int count) {
    final List<ServerSocket> sockets = new ArrayList<>();
    try {
      final InetAddress bind = InetAddress.getByName(settings.bindHost());
      for (int i = 0; i < count; i++) {
        // Held together so the ports differ; a race with another program is possible and
        // ends the attempt (the guest cannot bind), which the controller handles.
        sockets.add(new ServerSocket(0, 1, bind));
      }
      return sockets.stream().map(ServerSocket::getLocalPort).toList();
    } catch (final IOException e) {
      throw new HostException("no free ports on " + settings.bindHost() + ": " + e.getMessage(),
          e);
    } finally {
      for (final ServerSocket socket : sockets) {
        try {
          socket.close();
        } catch (final IOException e) {
          LOG.debug("closing a port probe: {}", e.getMessage());
        }
      }
    }
  }

  /** Records a successful deployment's result next to its instance ({@code deployment.json}). */
  public void recordDeployment(final String instanceId, final JsonNode result) {
    final Path dir = instanceDir(instanceId);
    try {
      writeJson(dir.resolve(DEPLOYMENT_FILE), result);
    } catch (final IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Every local instance under the base directory, oldest first. */
  public List<LocalInstance> list() {
    final List<LocalInstance> out = new ArrayList<>();
    if (!Files.isDirectory(settings.baseDir())) {
      return out;
    }
    try (DirectoryStream<Path> dirs = Files.newDirectoryStream(settings.baseDir())) {
      for (final Path dir : dirs) {
        final Path file = dir.resolve(INSTANCE_FILE);
        if (!Files.isRegularFile(file)) {
          continue;
        }
        try {
          final ObjectNode json = (ObjectNode) MAPPER.readTree(file.toFile());
          final Path deployment = dir.resolve(DEPLOYMENT_FILE);
          if (Files.isRegularFile(deployment)) {
            json.set("deployment", MAPPER.readTree(deployment.toFile()));
          }
          final long pid = json.path("pid").asLong(-1);
          out.add(new LocalInstance(json.path("id").asText(dir.getFileName().toString()),
              json.path("deploymentId").asText(""), dir, pid, process(json).isPresent(), json));
        } catch (final IOException | ClassCastException e) {
          LOG.warn("skipping {}: {}", file, e.getMessage());
        }
      }
    } catch (final IOException e) {
      throw new UncheckedIOException(e);
    }
    out.sort(Comparator.comparing(i -> i.json().path("createdAt").asText("")));
    return out;
  }

  /**
   * Erases every instance whose id or deployment id is {@code id}.
   *
   * @return the instance ids erased (empty when none matched)
   */
  public List<String> eraseMatching(final String id) {
    final List<String> erased = new ArrayList<>();
    for (final LocalInstance instance : list()) {
      if (instance.id().equals(id) || instance.deploymentId().equals(id)) {
        erase(instance.id());
        erased.add(instance.id());
      }
    }
    return erased;
  }

  @Override
  public Optional<Boolean> running(final String instanceId) {
    final Path file = instanceDir(instanceId).resolve(INSTANCE_FILE);
    try {
      return Optional.of(process(MAPPER.readTree(file.toFile())).isPresent());
    } catch (final IOException e) {
      return Optional.empty();
    }
  }

  @Override
  public void erase(final String instanceId) {
    final Path dir = instanceDir(instanceId);
    if (!Files.exists(dir)) {
      return;
    }
    final Path file = dir.resolve(INSTANCE_FILE);
    if (Files.isRegularFile(file)) {
      try {
        stop(instanceId, (ObjectNode) MAPPER.readTree(file.toFile()));
      } catch (final IOException | ClassCastException e) {
        LOG.warn("{} unreadable ({}); deleting the directory without stopping a process", file,
            e.getMessage());
      }
    }
    try {
      deleteTree(dir);
    } catch (final IOException e) {
      throw new HostException("cannot delete " + dir + ": " + e.getMessage(), e);
    }
    LOG.info("local guest {} erased", instanceId);
  }

  private void stop(final String instanceId, final ObjectNode json) {
    final Optional<ProcessHandle> handle = process(json);
    if (handle.isEmpty()) {
      return;
    }
    final ProcessHandle process = handle.get();
    process.destroy();
    try {
      process.onExit().get(settings.stopTimeout().toMillis(), TimeUnit.MILLISECONDS);
      return;
    } catch (final TimeoutException e) {
      LOG.warn("guest {} (pid {}) still runs {} after SIGTERM; killing it", instanceId,
          process.pid(), settings.stopTimeout());
    } catch (final ExecutionException e) {
      LOG.debug("waiting for guest {}: {}", instanceId, e.getMessage());
    } catch (final InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    process.destroyForcibly();
    try {
      process.onExit().get(10, TimeUnit.SECONDS);
    } catch (final TimeoutException | ExecutionException e) {
      throw new HostException("guest " + instanceId + " (pid " + process.pid()
          + ") did not exit after SIGKILL");
    } catch (final InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new HostException("interrupted while stopping guest " + instanceId);
    }
  }

  /** The recorded process, when it still runs with the recorded start time. */
  private static Optional<ProcessHandle> process(final JsonNode json) {
    final long pid = json.path("pid").asLong(-1);
    if (pid <= 0) {
      return Optional.empty();
    }
    final String start = json.path("processStart").asText("");
    return ProcessHandle.of(pid).filter(ProcessHandle::isAlive).filter(handle -> start.isEmpty()
        || handle.info().startInstant().map(Instant::toString).map(start::equals).orElse(true));
  }

  private Path instanceDir(final String instanceId) {
    if (!ID.matcher(instanceId).matches()) {
      throw new IllegalArgumentException("not a local instance id: \"" + instanceId + "\"");
    }
    return settings.baseDir().resolve(instanceId).toAbsolutePath().normalize();
  }

  private static void writeJson(final Path file, final JsonNode json) throws IOException {
    final Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
    Files.write(tmp, MAPPER.writeValueAsBytes(json));
    try {
      Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    } catch (final AtomicMoveNotSupportedException e) {
      Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING);
    }
  }

  private static void deleteTree(final Path dir) throws IOException {
    try (Stream<Path> paths = Files.walk(dir)) {
      for (final Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(path);
      }
    }
  }

  private static java.io.File nullDevice() {
    return new java.io.File(System.getProperty("os.name").toLowerCase(Locale.ROOT)
        .startsWith("windows") ? "NUL" : "/dev/null");
  }

  static String sha256Hex(final String text) {
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256")
          .digest(text.getBytes(StandardCharsets.UTF_8)));
    } catch (final NoSuchAlgorithmException e) {
      throw new IllegalStateException("the JDK has no SHA-256", e);
    }
  }
}
