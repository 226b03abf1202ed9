package io.relaypinner.handoff.guest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
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
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The push setup endpoint over real HTTP on loopback, with a stand-in relay. */
class SetupServerIT {
  private static final String VALID = "{\"public_ipv4\":\"127.0.0.1\",\"tcp_port\":29091,"
      + "\"ws_port\":29092,\"proxy_url\":\"https://x.2n6.me\"";
  private static final ObjectMapper JSON = new ObjectMapper();

  @TempDir
  Path dir;

  private final HttpClient http = HttpClient.newBuilder()
      .connectTimeout(Duration.ofSeconds(5)).build();
  private final FakeRelayLauncher launcher = new FakeRelayLauncher();
  private GuestStateDir state;
  private GuestAgent agent;
  private SetupServer server;

  @BeforeEach
  void start() {
    state = GuestStateDir.open(dir, new SecureRandom());
    agent = new GuestAgent(state, launcher, GuestAgent.Settings.DEFAULT, Clock.systemUTC());
    server = new SetupServer(agent, "127.0.0.1", 0);
    server.start();
  }

  @AfterEach
  void stop() {
    server.close();
    agent.close();
  }

  private HttpResponse<String> get(final String path) throws Exception {
    return http.send(HttpRequest.newBuilder(uri(path)).GET().build(),
        HttpResponse.BodyHandlers.ofString());
  }

  private HttpResponse<String> post(final String path, final String body) throws Exception {
    return http.send(HttpRequest.newBuilder(uri(path))
        .header("Content-Type", "text/plain;charset=UTF-8")
        .POST(HttpRequest.BodyPublishers.ofString(body)).build(),
        HttpResponse.BodyHandlers.ofString());
  }

  private URI uri(final String path) {
    return URI.create("http://127.0.0.1:" + server.port() + path);
  }

  @Test
  void healthAndMetadata_shouldReportIdentities_beforeConfiguration() throws Exception {
    final HttpResponse<String> health = get("/health");
    assertThat(health.statusCode()).isEqualTo(200);
    assertThat(health.headers().firstValue("access-control-allow-origin")).contains("*");
    assertThat(health.headers().firstValue("access-control-allow-methods"))
        .contains("GET, POST, OPTIONS");
    assertThat(health.headers().firstValue("access-control-allow-headers"))
        .contains("content-type");
    final JsonNode h = JSON.readTree(health.body());
    assertThat(h.path("status").asText()).isEqualTo("waiting-for-port-mapping");
    assertThat(h.path("ready").asBoolean()).isFalse();

    final JsonNode m = JSON.readTree(get("/metadata?_ts=1").body());
    assertThat(m.path("status").asText()).isEqualTo("ready");
    assertThat(m.at("/metadata/peer_id").asText()).isEqualTo(state.relayPeerId().toBase58());
    assertThat(m.at("/metadata/bootstrap_publisher_address").asText())
        .isEqualTo(state.publisherKey().address()).matches("0x[0-9a-fA-F]{40}");
    assertThat(m.at("/metadata/configured").asBoolean()).isFalse();
    // /metadata does not close the setup window (the public image's bug).
    assertThat(get("/health").statusCode()).isEqualTo(200);
  }

  @Test
  void options_shouldAnswer204WithCors_onAnyPath() throws Exception {
    final HttpResponse<String> response = http.send(HttpRequest.newBuilder(uri("/configure"))
        .method("OPTIONS", HttpRequest.BodyPublishers.noBody())
        .header("Origin", "https://deployer.example")
        .header("Access-Control-Request-Method", "POST").build(),
        HttpResponse.BodyHandlers.ofString());
    assertThat(response.statusCode()).isEqualTo(204);
    assertThat(response.headers().firstValue("access-control-allow-origin")).contains("*");
    assertThat(get("/nope").statusCode()).isEqualTo(404);
    assertThat(JSON.readTree(get("/nope").body()).path("status").asText())
        .isEqualTo("not-found");
    assertThat(get("/configure").statusCode()).isEqualTo(405);
  }

  @Test
  void configure_shouldRefuseAndWriteNothing_whenAnOwnerKeyIsSent() throws Exception {
    final HttpResponse<String> response = post("/configure",
        VALID + ",\"bootstrap_owner_private_key\":\"0x" + "11".repeat(32) + "\"}");
    assertThat(response.statusCode()).isEqualTo(400);
    final JsonNode body = JSON.readTree(response.body());
    assertThat(body.path("ok").asBoolean(true)).isFalse();
    assertThat(body.path("code").asText()).isEqualTo("owner_private_key_rejected");
    assertThat(body.path("error").asText()).contains("bootstrap_owner_private_key")
        .contains("never accepts the owner's private key").doesNotContain("1111");
    assertThat(state.envFile()).doesNotExist();
    assertThat(launcher.started).isEmpty();
    assertThat(get("/health").statusCode()).isEqualTo(200);
  }

  @Test
  void configure_shouldRefuseWith400_whenInputIsBad() throws Exception {
    for (final String[] c : new String[][] {
        {"{\"public_ipv4\":\"127.0.0.1\",\"tcp_port\":true,\"ws_port\":29092}", "tcp_port"},
        {"{\"public_ipv4\":\"127.0.0.1\",\"tcp_port\":70000,\"ws_port\":29092}", "tcp_port"},
        {"{\"public_ipv4\":\"127.0.0.1\",\"tcp_port\":29091}", "ws_port is required"},
        {"{\"public_ipv4\":\"::1\",\"tcp_port\":29091,\"ws_port\":29092}", "public_ipv6"},
        {VALID + ",\"colour\":\"blue\"}", "unknown field colour"},
        {"not json", "not valid JSON"}}) {
      final HttpResponse<String> response = post("/configure", c[0]);
      assertThat(response.statusCode()).as(c[0]).isEqualTo(400);
      assertThat(JSON.readTree(response.body()).path("error").asText()).as(c[0])
          .contains(c[1]);
    }
    assertThat(state.envFile()).doesNotExist();
    assertThat(launcher.started).isEmpty();
  }

  private String raw(final byte[] request) throws IOException {
    try (Socket socket = new Socket("127.0.0.1", server.port())) {
      socket.setSoTimeout(20_000);
      socket.getOutputStream().write(request);
      socket.getOutputStream().flush();
      socket.shutdownOutput();
      return new String(socket.getInputStream().readAllBytes(),
          java.nio.charset.StandardCharsets.ISO_8859_1);
    }
  }

  @Test
  void server_shouldRefuseAndClose_whenTheRequestIsMalformed() throws Exception {
    // Random bytes (fixed seed) ending a line: an invalid request line, never a valid request.
    final byte[] garbage = new byte[516];
    new java.util.Random(42).nextBytes(garbage);
    garbage[0] = 'X';
    garbage[512] = '\r';
    garbage[513] = '\n';
    garbage[514] = '\r';
    garbage[515] = '\n';
    assertThat(raw(garbage)).matches("(?s)HTTP/1\\.[01] 400 .*\"code\":.*");
    assertThat(server.rejectedCount()).isEqualTo(1);
    final String hugeHeader = "GET /health HTTP/1.1\r\nHost: x\r\nX-Big: "
        + "a".repeat(20_000) + "\r\n\r\n";
    assertThat(raw(hugeHeader.getBytes(java.nio.charset.StandardCharsets.US_ASCII)))
        .matches("(?s)HTTP/1\\.[01] 431 .*\"code\":.*");
    assertThat(server.rejectedCount()).isEqualTo(2);
    final String lying = "POST /configure HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999\r\n"
        + "\r\n{}";
    assertThat(raw(lying.getBytes(java.nio.charset.StandardCharsets.US_ASCII)))
        .matches("(?s)HTTP/1\\.[01] 413 .*\"code\":.*");
    assertThat(server.rejectedCount()).isEqualTo(3);
    assertThat(state.envFile()).doesNotExist();
    assertThat(get("/health").statusCode()).isEqualTo(200);
  }

  @Test
  void configure_shouldAnswer413_whenTheBodyIsTooLarge() throws Exception {
    final String big = VALID + ",\"bootstrap_registration_id\":\""
        + "a".repeat(ConfigureRequest.MAX_BODY_SIZE) + "\"}";
    final HttpResponse<String> response = post("/configure", big);
    assertThat(response.statusCode()).isEqualTo(413);
    assertThat(JSON.readTree(response.body()).path("code").asText())
        .isEqualTo("payload_too_large");
    assertThat(state.envFile()).doesNotExist();
    assertThat(get("/health").statusCode()).isEqualTo(200);
  }

  @Test
  void configure_shouldWriteStartAnswerAndClose_whenValid() throws Exception {
    final HttpResponse<String> response = post("/configure", VALID
        + ",\"public_ipv6\":\"2001:db8::8\",\"bootstrap_registration_id\":\"relay:x:y\"}");
    assertThat(response.statusCode()).isEqualTo(200);
    final JsonNode body = JSON.readTree(response.body());
    assertThat(body.path("status").asText()).isEqualTo("configured");
    assertThat(body.path("relay_started").asBoolean()).isTrue();
    final String peer = state.relayPeerId().toBase58();
    assertThat(body.at("/metadata/proxy_wss_multiaddrs/0").asText())
        .isEqualTo("/dns4/x.2n6.me/tcp/443/tls/ws/p2p/" + peer);
    assertThat(body.at("/metadata/direct_tcp_multiaddrs").toString())
        .contains("/ip4/127.0.0.1/tcp/29091/p2p/" + peer)
        .contains("/ip6/2001:db8::8/tcp/9091/p2p/" + peer);
    assertThat(launcher.started).hasSize(1);
    assertThat(RelayEnvFile.read(state.envFile()))
        .containsEntry("PUBLIC_IPV4", "127.0.0.1")
        .containsEntry("EXTERNAL_RELAY_TCP_PORT", "29091")
        .containsEntry("EXTERNAL_RELAY_WS_PORT", "29092")
        .containsEntry("PROXY_HOSTNAME", "x.2n6.me")
        .containsEntry("DATASTORE_PATH", state.dataDir().toString())
        .containsEntry("ALEPH_BOOTSTRAP_REGISTRATION_ID", "relay:x:y");
    assertThat(java.nio.file.attribute.PosixFilePermissions.toString(
        Files.getPosixFilePermissions(state.envFile()))).isEqualTo("rw-------");
    final int port = server.port() < 0 ? -1 : server.port();
    await().atMost(Duration.ofSeconds(20)).until(() -> server.closedFuture().isDone());
    assertThat(port).isNotEqualTo(0);
    assertThat(agent.currentState()).isEqualTo(GuestAgent.State.CONFIGURED);
  }

  @Test
  void configure_shouldCloseTheSetupPort_afterSuccess() throws Exception {
    final int port = server.port();
    assertThat(post("/configure", VALID + "}").statusCode()).isEqualTo(200);
    await().atMost(Duration.ofSeconds(20)).until(() -> server.closedFuture().isDone());
    assertThatThrownBy(() -> new Socket("127.0.0.1", port).close())
        .isInstanceOf(ConnectException.class);
  }

  @Test
  void configure_shouldKeepNothing_whenTheRelayCannotStart() throws Exception {
    launcher.failWith = "cannot listen on /ip4/0.0.0.0/tcp/9091: address in use";
    final HttpResponse<String> failed = post("/configure", VALID + "}");
    assertThat(failed.statusCode()).isEqualTo(500);
    assertThat(JSON.readTree(failed.body()).path("error").asText()).contains("address in use");
    assertThat(state.envFile()).doesNotExist();
    assertThat(agent.currentState()).isEqualTo(GuestAgent.State.WAITING);
    launcher.failWith = null;
    assertThat(post("/configure", VALID + "}").statusCode()).isEqualTo(200);
  }

  @Test
  void configure_shouldUseTheSuppliedPublisherKey_whenTheGuestHasNoneInUse() throws Exception {
    final PublisherKey supplied = PublisherKey.generate(new java.security.SecureRandom());
    final HttpResponse<String> response = post("/configure", VALID
        + ",\"bootstrap_publisher_private_key\":\"" + supplied.toHex() + "\"}");
    assertThat(response.statusCode()).isEqualTo(200);
    final JsonNode body = JSON.readTree(response.body());
    assertThat(body.at("/metadata/bootstrap_publisher_address").asText())
        .isEqualTo(supplied.address());
    assertThat(body.path("warnings").toString()).contains("bootstrap_publisher_private_key used")
        .doesNotContain(supplied.toHex().substring(2));
    assertThat(response.body()).doesNotContain(supplied.toHex().substring(2));
    assertThat(state.publisherKey().address()).isEqualTo(supplied.address());
    assertThat(Files.readString(state.envFile())).doesNotContain(supplied.toHex().substring(2));
  }

  @Test
  void configure_shouldWriteButNotStart_whenNoStart() throws Exception {
    final HttpResponse<String> response = post("/configure", VALID + ",\"no_start\":true}");
    assertThat(response.statusCode()).isEqualTo(200);
    assertThat(JSON.readTree(response.body()).path("relay_started").asBoolean(true)).isFalse();
    assertThat(launcher.started).isEmpty();
    assertThat(state.envFile()).exists();
  }

  @Test
  void open_shouldKeepBothKeys_whenTheStateDirectoryIsReused() throws IOException {
    final String publisher = Files.readString(dir.resolve("keys/publisher.key"));
    final String identity = Files.readString(dir.resolve("data/identity.key"));
    final GuestStateDir again = GuestStateDir.open(dir, new SecureRandom());
    assertThat(again.publisherKey().address()).isEqualTo(state.publisherKey().address());
    assertThat(again.relayPeerId()).isEqualTo(state.relayPeerId());
    assertThat(Files.readString(dir.resolve("keys/publisher.key"))).isEqualTo(publisher);
    assertThat(Files.readString(dir.resolve("data/identity.key"))).isEqualTo(identity);
  }

  @Test
  void configure_shouldConflict_whenAlreadyConfiguredByAnotherHandoff() throws Exception {
    final ConfigureRequest request = ConfigureRequest.parse(
        (VALID + "}").getBytes(java.nio.charset.StandardCharsets.UTF_8));
    agent.configure(request, GuestAgent.Source.PULL).get();
    await().atMost(Duration.ofSeconds(20)).until(() -> server.closedFuture().isDone());
    assertThatThrownBy(() -> agent.configure(request, GuestAgent.Source.PUSH).get())
        .hasCauseInstanceOf(ConfigureRejectedException.class)
        .hasMessageContaining("already configured");
  }
}
