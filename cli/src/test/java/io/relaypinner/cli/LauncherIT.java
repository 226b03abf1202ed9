package io.relaypinner.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The README's first command, for real: {@code ./relay-pinner} (the launcher script at the repo
 * root, running the shaded jar this build just made) started as a process with settings from the
 * environment.
 */
class LauncherIT {
  private static final Path LAUNCHER = LauncherWarmUp.LAUNCHER;

  @org.junit.jupiter.api.BeforeAll
  static void trainTheStartUpArchive() throws Exception {
    LauncherWarmUp.once();
  }
  private static final ObjectMapper JSON = new ObjectMapper();
  private final HttpClient http = HttpClient.newBuilder()
      .connectTimeout(Duration.ofSeconds(2)).build();
  private Process process;

  @AfterEach
  void stop() throws InterruptedException {
    if (process != null && process.isAlive()) {
      process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
    }
  }

  private Process start(final Path dir, final Map<String, String> env, final String... args)
      throws IOException {
    final ProcessBuilder builder = new ProcessBuilder();
    builder.command().add(LAUNCHER.toString());
    builder.command().addAll(List.of(args));
    builder.environment().putAll(env);
    builder.redirectOutput(dir.resolve("stdout.txt").toFile());
    builder.redirectError(dir.resolve("stderr.txt").toFile());
    process = builder.start();
    return process;
  }

  private static int freePort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0)) {
      return socket.getLocalPort();
    }
  }

  private JsonNode awaitHealth(final int port) {
    final HttpRequest request = HttpRequest.newBuilder(
        URI.create("http://127.0.0.1:" + port + "/health")).timeout(Duration.ofSeconds(2)).build();
    final JsonNode[] health = new JsonNode[1];
    await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(100))
        .ignoreException(ConnectException.class)
        .until(() -> {
          assertThat(process.isAlive()).as("relay process alive").isTrue();
          final HttpResponse<String> response = http.send(request,
              HttpResponse.BodyHandlers.ofString());
          health[0] = JSON.readTree(response.body());
          return response.statusCode() == 200;
        });
    return health[0];
  }

  private Map<String, String> env(final Path data, final int port) {
    final Map<String, String> env = new HashMap<>();
    env.put("DATASTORE_PATH", data.toString());
    env.put("METRICS_HOST", "127.0.0.1");
    env.put("METRICS_PORT", Integer.toString(port));
    env.put("RELAY_LISTEN_IPV4", "127.0.0.1");
    env.put("RELAY_DISABLE_IPV6", "true");
    env.put("RELAY_TCP_PORT", "0");
    env.put("RELAY_WS_PORT", "0");
    env.put("RELAY_QUIC_PORT", "0");
    return env;
  }

  @Test
  void launcher_shouldServeHealth_andKeepThePeerIdAcrossRestarts(@TempDir final Path dir)
      throws Exception {
    final Path data = dir.resolve("relay-data");
    final int port = freePort();
    start(dir, env(data, port));
    final JsonNode first = awaitHealth(port);
    assertThat(first.get("status").asText()).isEqualTo("ok");
    assertThat(first.get("peerId").asText()).startsWith("12D3KooW");
    assertThat(first.get("autoTlsServingZone").asText()).startsWith("k51")
        .endsWith(".libp2p.direct");
    assertThat(first.get("metricsHttps").get("enabled").asBoolean()).isFalse();
    final Path key = data.resolve("identity.key");
    assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(key)))
        .isEqualTo("rw-------");

    process.destroy();
    assertThat(process.waitFor(20, TimeUnit.SECONDS)).isTrue();
    assertThat(Files.readString(dir.resolve("stderr.txt"))).contains("relay node stopped");

    start(dir, env(data, port));
    final JsonNode second = awaitHealth(port);
    assertThat(second.get("peerId").asText()).isEqualTo(first.get("peerId").asText());
  }

  @Test
  void launcher_shouldWriteJsonLogLines_whenLogFormatIsJson(@TempDir final Path dir)
      throws Exception {
    final int port = freePort();
    final Map<String, String> env = env(dir.resolve("data"), port);
    env.put("LOG_FORMAT", "json");
    start(dir, env);
    final JsonNode health = awaitHealth(port);
    process.destroy();
    assertThat(process.waitFor(20, TimeUnit.SECONDS)).isTrue();
    boolean sawPeerId = false;
    for (final String line : Files.readAllLines(dir.resolve("stderr.txt"),
        StandardCharsets.UTF_8)) {
      final JsonNode event = JSON.readTree(line);
      assertThat(event.has("level")).as(line).isTrue();
      sawPeerId |= event.path("formattedMessage").asText().contains(health.get("peerId").asText());
    }
    assertThat(sawPeerId).isTrue();
  }

  @Test
  void launcher_shouldExit2NamingTheVariable_whenAValueIsBad(@TempDir final Path dir)
      throws Exception {
    final Map<String, String> env = env(dir.resolve("data"), freePort());
    env.put("RELAY_TCP_PORT", "seventy");
    start(dir, env);
    assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(process.exitValue()).isEqualTo(2);
    assertThat(Files.readString(dir.resolve("stderr.txt"))).contains("RELAY_TCP_PORT")
        .contains("seventy");
  }

  @Test
  void launcher_shouldExit1_whenTheHttpPortIsTaken(@TempDir final Path dir) throws Exception {
    try (ServerSocket taken = new ServerSocket(0, 50,
        InetAddress.getByName("127.0.0.1"))) {
      start(dir, env(dir.resolve("data"), taken.getLocalPort()));
      assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
      assertThat(process.exitValue()).isEqualTo(1);
      assertThat(Files.readString(dir.resolve("stderr.txt"))).contains("cannot start");
    }
  }
}
