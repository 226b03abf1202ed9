package io.relaypinner.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.relaypinner.handoff.guest.GuestRecords;
import io.relaypinner.handoff.records.PostQuery;
import io.relaypinner.handoff.records.PostRecord;
import io.relaypinner.handoff.records.RecordStore;
import io.relaypinner.handoff.records.client.HttpRecordStore;
import io.relaypinner.handoff.records.service.RecordServer;
import io.relaypinner.handoff.records.service.RecordServiceConfig;
import java.io.IOException;
import java.net.ConnectException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code ./relay-pinner guest setup-server} as a process: configured over HTTP, it runs the relay
 * with the PeerId it announced and registers it; SIGTERM forgets the registration and exits 0.
 */
class GuestLauncherIT {
  private static final Path LAUNCHER = LauncherWarmUp.LAUNCHER;

  @org.junit.jupiter.api.BeforeAll
  static void trainTheStartUpArchive() throws Exception {
    LauncherWarmUp.once();
  }
  private static final Pattern SETUP_PORT = Pattern.compile("guest setup server on port (\\d+)");
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

  private static int freePort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0)) {
      return socket.getLocalPort();
    }
  }

  private JsonNode get(final String url) throws Exception {
    final HttpResponse<String> response = http.send(HttpRequest.newBuilder(URI.create(url))
        .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString());
    assertThat(response.statusCode()).as(url).isEqualTo(200);
    return JSON.readTree(response.body());
  }

  @Test
  void setupServer_shouldConfigureRunRegisterAndForgetOnSigterm(@TempDir final Path dir)
      throws Exception {
    try (RecordServer records = RecordServer.open(
        RecordServiceConfig.builder().host("127.0.0.1").port(0).build(), dir.resolve("rec"))) {
      records.start();
      final String recordsUrl = "http://127.0.0.1:" + records.port();
      final RecordStore store = new HttpRecordStore(URI.create(recordsUrl));
      final int metricsPort = freePort();
      final ProcessBuilder builder = new ProcessBuilder(LAUNCHER.toString(), "guest",
          "setup-server", "--port", "0", "--host", "127.0.0.1", "--state-dir",
          dir.resolve("guest").toString(), "--records", recordsUrl, "--authorized-keys",
          dir.resolve("no-authorized-keys").toString());
      builder.environment().putAll(GuestSetupServerIT.RELAY_ENV);
      builder.environment().put("METRICS_PORT", Integer.toString(metricsPort));
      builder.redirectOutput(dir.resolve("stdout.txt").toFile());
      builder.redirectError(dir.resolve("stderr.txt").toFile());
      process = builder.start();

      final int[] setupPort = new int[1];
      await().atMost(Duration.ofSeconds(90)).until(() -> {
        assertThat(process.isAlive()).as("guest process alive").isTrue();
        final Matcher m = SETUP_PORT.matcher(Files.readString(dir.resolve("stdout.txt")));
        if (m.find()) {
          setupPort[0] = Integer.parseInt(m.group(1));
          return true;
        }
        return false;
      });
      final String setup = "http://127.0.0.1:" + setupPort[0];
      final JsonNode metadata = get(setup + "/metadata").path("metadata");
      final String peerId = metadata.path("peer_id").asText();
      final String publisher = metadata.path("bootstrap_publisher_address").asText();

      final HttpResponse<String> configured = http.send(HttpRequest.newBuilder(
          URI.create(setup + "/configure")).timeout(Duration.ofSeconds(60))
          .POST(HttpRequest.BodyPublishers.ofString("{\"public_ipv4\":\"127.0.0.1\","
              + "\"tcp_port\":29091,\"ws_port\":29092}")).build(),
          HttpResponse.BodyHandlers.ofString());
      assertThat(configured.statusCode()).as(configured.body()).isEqualTo(200);

      await().atMost(Duration.ofSeconds(30)).ignoreException(ConnectException.class)
          .until(() -> peerId.equals(get("http://127.0.0.1:" + metricsPort + "/health")
              .path("peerId").asText()));
      await().atMost(Duration.ofSeconds(30)).until(() -> registrations(store, publisher)
          .size() == 1);
      assertThat(registrations(store, publisher).get(0).content().path("peerId").asText())
          .isEqualTo(peerId);

      process.destroy();
      assertThat(process.waitFor(30, TimeUnit.SECONDS)).isTrue();
      // The JVM reports a SIGTERM exit as 143 once the shutdown hooks have run.
      assertThat(process.exitValue()).isIn(0, 143);
      assertThat(registrations(store, publisher)).isEmpty();
      assertThat(Files.readString(dir.resolve("stderr.txt"))).contains("relay node stopped");
    }
  }

  private static List<PostRecord> registrations(final RecordStore store, final String sender) {
    return store.posts(PostQuery.builder().types(GuestRecords.REGISTRATION_POST_TYPE)
        .addresses(sender).build()).posts();
  }
}
