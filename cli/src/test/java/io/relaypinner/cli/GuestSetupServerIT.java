package io.relaypinner.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.relaypinner.handoff.guest.GuestAgent;
import io.relaypinner.handoff.guest.GuestStateDir;
import io.relaypinner.handoff.guest.RunningRelay;
import io.relaypinner.handoff.guest.SetupServer;
import java.net.ConnectException;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The push handoff end to end in one process: the guest's setup endpoint over real HTTP on
 * loopback, then the real relay it starts (all ports ephemeral through the environment, which
 * wins over relay.env).
 */
class GuestSetupServerIT {
  /** The relay's own listeners: ephemeral, loopback only. */
  static final Map<String, String> RELAY_ENV = Map.of("METRICS_PORT", "0",
      "METRICS_HOST", "127.0.0.1", "RELAY_TCP_PORT", "0", "RELAY_WS_PORT", "0",
      "RELAY_QUIC_PORT", "0",
      "RELAY_LISTEN_IPV4", "127.0.0.1", "RELAY_DISABLE_IPV6", "true");
  private static final ObjectMapper JSON = new ObjectMapper();

  private final HttpClient http = HttpClient.newBuilder()
      .connectTimeout(Duration.ofSeconds(5)).build();

  private JsonNode getJson(final String url) throws Exception {
    final HttpResponse<String> response = http.send(
        HttpRequest.newBuilder(URI.create(url)).GET().build(),
        HttpResponse.BodyHandlers.ofString());
    assertThat(response.statusCode()).as(url).isEqualTo(200);
    return JSON.readTree(response.body());
  }

  @Test
  void push_shouldStartTheRelayWithTheAnnouncedPeerId_andCloseTheSetupPort(
      @TempDir final Path dir) throws Exception {
    final GuestStateDir state = GuestStateDir.open(dir, new SecureRandom());
    try (GuestAgent agent = new GuestAgent(state, new RelayNodeLauncher(RELAY_ENV),
        GuestAgent.Settings.DEFAULT, Clock.systemUTC());
        SetupServer server = new SetupServer(agent, "127.0.0.1", 0)) {
      server.start();
      // Read now: the server closes itself right after answering /configure.
      final int setupPort = server.port();
      final String setup = "http://127.0.0.1:" + setupPort;
      assertThat(getJson(setup + "/health").path("ready").asBoolean()).isFalse();
      final String announced = getJson(setup + "/metadata").at("/metadata/peer_id").asText();
      assertThat(announced).startsWith("12D3KooW");

      final HttpResponse<String> configured = http.send(HttpRequest.newBuilder(
          URI.create(setup + "/configure")).POST(HttpRequest.BodyPublishers.ofString(
              "{\"public_ipv4\":\"127.0.0.1\",\"tcp_port\":29091,\"ws_port\":29092,"
                  + "\"metrics_port\":29090,\"proxy_url\":\"relay.example.org\"}")).build(),
          HttpResponse.BodyHandlers.ofString());
      assertThat(configured.statusCode()).as(configured.body()).isEqualTo(200);
      assertThat(JSON.readTree(configured.body()).path("status").asText())
          .isEqualTo("configured");

      await().atMost(Duration.ofSeconds(30)).until(() -> server.closedFuture().isDone());
      assertThatThrownBy(() -> new Socket("127.0.0.1", setupPort).close())
          .isInstanceOf(ConnectException.class);

      final RunningRelay relay = agent.configured().orElseThrow().relay().orElseThrow();
      final JsonNode health = getJson("http://127.0.0.1:" + relay.httpPort().getAsInt()
          + "/health");
      assertThat(health.path("status").asText()).isEqualTo("ok");
      assertThat(health.path("peerId").asText()).isEqualTo(announced);
      final JsonNode multiaddrs = getJson("http://127.0.0.1:" + relay.httpPort().getAsInt()
          + "/multiaddrs");
      assertThat(multiaddrs.path("all").toString())
          .contains("/ip4/127.0.0.1/tcp/29091/p2p/" + announced);
      assertThat(Files.readString(state.envFile())).doesNotContain("RELAY_PRIV_KEY");
    }
  }

  @Test
  void setupServer_shouldKeepBothKeys_whenRunTwiceOverOneStateDirectory(@TempDir final Path dir)
      throws Exception {
    final String firstPeer;
    final String firstPublisher;
    try (GuestAgent agent = new GuestAgent(GuestStateDir.open(dir, new SecureRandom()),
        new RelayNodeLauncher(RELAY_ENV), GuestAgent.Settings.DEFAULT, Clock.systemUTC());
        SetupServer server = new SetupServer(agent, "127.0.0.1", 0)) {
      server.start();
      final JsonNode metadata = getJson("http://127.0.0.1:" + server.port() + "/metadata");
      firstPeer = metadata.at("/metadata/peer_id").asText();
      firstPublisher = metadata.at("/metadata/bootstrap_publisher_address").asText();
    }
    final String publisherFile = Files.readString(dir.resolve("keys/publisher.key"));
    try (GuestAgent agent = new GuestAgent(GuestStateDir.open(dir, new SecureRandom()),
        new RelayNodeLauncher(RELAY_ENV), GuestAgent.Settings.DEFAULT, Clock.systemUTC());
        SetupServer server = new SetupServer(agent, "127.0.0.1", 0)) {
      server.start();
      final JsonNode metadata = getJson("http://127.0.0.1:" + server.port() + "/metadata");
      assertThat(metadata.at("/metadata/peer_id").asText()).isEqualTo(firstPeer);
      assertThat(metadata.at("/metadata/bootstrap_publisher_address").asText())
          .isEqualTo(firstPublisher);
    }
    assertThat(Files.readString(dir.resolve("keys/publisher.key"))).isEqualTo(publisherFile);
  }
}
