package io.relaypinner.relay;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.relaypinner.libp2p.crypto.Ed25519PrivateKey;
import io.relaypinner.libp2p.crypto.KeyType;
import io.relaypinner.libp2p.crypto.Keys;
import io.relaypinner.libp2p.crypto.PrivateKey;
import io.relaypinner.libp2p.host.Host;
import io.relaypinner.libp2p.host.HostConfig;
import io.relaypinner.libp2p.netty.EventLoops;
import io.relaypinner.multiformats.Multiaddr;
import io.relaypinner.relay.config.InvalidConfigException;
import io.relaypinner.relay.config.RelayConfig;
import io.relaypinner.relay.identity.NodeIdentity;
import io.relaypinner.relay.testing.PrometheusTextParser;
import io.relaypinner.relay.testing.RawHttpResponse;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The HTTP listener of a real {@link RelayNode} on 127.0.0.1: JDK client and raw sockets. */
class RelayNodeIT {
  /** A fixed identity (Ed25519 seed 32 x 0x07), so assertions can name its PeerId and zone. */
  private static final NodeIdentity IDENTITY = identity();
  private static final String PEER_ID = IDENTITY.peerId().toBase58();
  private static final String ZONE = IDENTITY.autoTlsServingZone();

  private static NodeIdentity identity() {
    final byte[] seed = new byte[32];
    Arrays.fill(seed, (byte) 7);
    final PrivateKey key = Ed25519PrivateKey.fromSeed(seed);
    return new NodeIdentity(key, key.publicKey().peerId(),
        NodeIdentity.servingZone(key.publicKey().peerId(), "libp2p.direct"),
        NodeIdentity.Source.ENVIRONMENT);
  }
  private static final Clock CLOCK =
      Clock.fixed(Instant.parse("2026-11-22T10:00:00.123Z"), ZoneOffset.UTC);
  private static final ObjectMapper JSON = new ObjectMapper();

  private final HttpClient client = HttpClient.newBuilder()
      .version(HttpClient.Version.HTTP_1_1)
      .connectTimeout(Duration.ofSeconds(5))
      .build();
  private final List<AutoCloseable> toClose = new ArrayList<>();
  @TempDir
  Path tempDir;

  @AfterEach
  void tearDown() throws Exception {
    for (int i = toClose.size() - 1; i >= 0; i--) {
      toClose.get(i).close();
    }
  }

  /** Each node gets its own data directory: the stores lock theirs. */
  private RelayConfig.Builder local() {
    final Path dataDir;
    try {
      dataDir = Files.createTempDirectory(tempDir, "node");
    } catch (final IOException e) {
      throw new UncheckedIOException(e);
    }
    return RelayConfig.builder().dataDir(dataDir).metricsHost("127.0.0.1").metricsPort(0)
        .listenIpv4("127.0.0.1").tcpPort(0).wsPort(0).quicPort(0).ipv6Disabled(true);
  }

  private RelayNode start(final RelayConfig config) {
    final RelayNode node =
        new RelayNode(config, IDENTITY, new PrometheusRegistry(), CLOCK);
    toClose.add(node);
    node.start();
    return node;
  }

  private RelayNode start() {
    return start(local().build());
  }

  private static URI uri(final RelayNode node, final String path) {
    return URI.create("http://127.0.0.1:" + node.http().port().getAsInt() + path);
  }

  private HttpResponse<String> send(final HttpRequest.Builder request)
      throws IOException, InterruptedException {
    return client.send(request.timeout(Duration.ofSeconds(10)).build(),
        HttpResponse.BodyHandlers.ofString());
  }

  private HttpResponse<String> get(final RelayNode node, final String path)
      throws IOException, InterruptedException {
    return send(HttpRequest.newBuilder(uri(node, path)));
  }

  private JsonNode health(final RelayNode node) throws IOException, InterruptedException {
    return JSON.readTree(get(node, "/health").body());
  }

  private Socket connect(final RelayNode node) throws IOException {
    final Socket socket = new Socket();
    toClose.add(socket);
    socket.connect(new InetSocketAddress("127.0.0.1", node.http().port().getAsInt()), 5_000);
    socket.setSoTimeout(10_000);
    return socket;
  }

  private static void write(final Socket socket, final String text) throws IOException {
    final OutputStream out = socket.getOutputStream();
    out.write(text.getBytes(StandardCharsets.ISO_8859_1));
    out.flush();
  }

  @Test
  void health_shouldServeEverySpecField_withTheRightTypes() throws Exception {
    final HttpResponse<String> response = get(start(), "/health");
    assertThat(response.statusCode()).isEqualTo(200);
    assertThat(response.headers().firstValue("content-type"))
        .contains("application/json; charset=utf-8");
    final JsonNode health = JSON.readTree(response.body());
    assertThat(health.get("status").asText()).isEqualTo("ok");
    assertThat(health.get("version").isTextual()).isTrue();
    assertThat(health.get("version").asText()).isEqualTo(RelayVersion.VERSION)
        .matches("\\d+\\.\\d+\\.\\d+.*");
    assertThat(health.get("peerId").asText()).isEqualTo(PEER_ID);
    assertThat(health.get("connections").isObject()).isTrue();
    assertThat(health.get("connections").get("active").isInt()).isTrue();
    assertThat(health.get("multiaddrs").isInt()).isTrue();
    assertThat(health.get("autoTlsServingZone").asText()).isEqualTo(ZONE);
    assertThat(health.get("metricsHttps").isObject()).isTrue();
    assertThat(health.get("timestamp").asText()).isEqualTo("2026-11-22T10:00:00.123Z");
    assertThat(fieldNames(health)).containsExactly("status", "version", "peerId", "connections",
        "multiaddrs", "autoTlsServingZone", "metricsHttps", "timestamp");
  }

  @Test
  void health_shouldCarryTheFullMetricsHttpsObject_whenHttpsIsNotListening() throws Exception {
    final RelayNode node = start(local().metricsHttpsEnabled(true).metricsHttpsPort(8443)
        .publicIpv4("203.0.113.8").externalMetricsHttpsPort(29443).build());
    final JsonNode https = JSON.readTree(get(node, "/health").body()).get("metricsHttps");
    assertThat(fieldNames(https)).containsExactly("enabled", "listening", "port", "internalPort",
        "externalPort", "host", "exampleUrl", "internalExampleUrl");
    assertThat(https.get("enabled").asBoolean()).isTrue();
    assertThat(https.get("listening").isBoolean()).isTrue();
    assertThat(https.get("listening").asBoolean()).isFalse();
    assertThat(https.get("port").isNull()).isTrue();
    assertThat(https.get("internalPort").asInt()).isEqualTo(8443);
    assertThat(https.get("externalPort").asInt()).isEqualTo(29443);
    assertThat(https.get("host").asText()).isEqualTo("203-0-113-8." + ZONE);
    assertThat(https.get("exampleUrl").isNull()).isTrue();
    assertThat(https.get("internalExampleUrl").asText())
        .isEqualTo("https://203-0-113-8." + ZONE + ":8443/health");
  }

  @Test
  void constructor_shouldFailNamingVariable_whenPublicHostIsNotUnderTheZone() {
    final RelayConfig config = local().metricsHttpsPublicHost("relay.example.com").build();
    assertThatThrownBy(() -> new RelayNode(config, IDENTITY,
        new PrometheusRegistry(), CLOCK))
        .isInstanceOf(InvalidConfigException.class)
        .hasMessageStartingWith("METRICS_HTTPS_PUBLIC_HOST: ");
  }

  @Test
  void cors_shouldAllowAnyOrigin_byDefaultOnSuccessAndErrors() throws Exception {
    final RelayNode node = start();
    for (final String path : List.of("/health", "/nope")) {
      final HttpResponse<String> response = send(HttpRequest.newBuilder(uri(node, path))
          .header("Origin", "https://app.example"));
      assertThat(response.headers().firstValue("access-control-allow-origin")).contains("*");
      assertThat(response.headers().firstValue("vary")).isEmpty();
    }
  }

  @Test
  void cors_shouldEchoOnlyListedOrigins_whenAllowlistIsConfigured() throws Exception {
    final RelayNode node = start(local()
        .corsOrigins(List.of("https://app.example", "http://localhost:5173")).build());
    final HttpResponse<String> listed = send(HttpRequest.newBuilder(uri(node, "/health"))
        .header("Origin", "https://app.example"));
    assertThat(listed.headers().firstValue("access-control-allow-origin"))
        .contains("https://app.example");
    assertThat(listed.headers().allValues("vary")).contains("Origin");

    final HttpResponse<String> unlisted = send(HttpRequest.newBuilder(uri(node, "/health"))
        .header("Origin", "https://evil.example"));
    assertThat(unlisted.statusCode()).isEqualTo(200);
    assertThat(unlisted.headers().firstValue("access-control-allow-origin")).isEmpty();
    assertThat(unlisted.headers().allValues("vary")).contains("Origin");
  }

  @Test
  void options_shouldAnswer204WithCorsHeaders_onKnownAndUnknownPaths() throws Exception {
    final RelayNode node = start(local().corsAllowHeaders(List.of("Content-Type", "X-Trace"))
        .corsMaxAgeSeconds(600).build());
    for (final String path : List.of("/health", "/metrics", "/unknown/path")) {
      final HttpResponse<String> response = send(HttpRequest.newBuilder(uri(node, path))
          .method("OPTIONS", HttpRequest.BodyPublishers.noBody()));
      assertThat(response.statusCode()).as(path).isEqualTo(204);
      assertThat(response.headers().firstValue("access-control-allow-methods"))
          .contains("GET, POST, DELETE, OPTIONS, HEAD");
      assertThat(response.headers().firstValue("access-control-allow-headers"))
          .contains("Content-Type, X-Trace");
      assertThat(response.headers().firstValue("access-control-max-age")).contains("600");
      assertThat(response.body()).isEmpty();
    }
  }

  @Test
  void preflight_shouldAnswer204_forPostPinningSyncWithContentType() throws Exception {
    final HttpResponse<String> response = send(HttpRequest.newBuilder(uri(start(),
        "/pinning/sync"))
        .method("OPTIONS", HttpRequest.BodyPublishers.noBody())
        .header("Origin", "https://app.example")
        .header("Access-Control-Request-Method", "POST")
        .header("Access-Control-Request-Headers", "content-type"));
    assertThat(response.statusCode()).isEqualTo(204);
    assertThat(response.headers().firstValue("access-control-allow-origin")).contains("*");
    assertThat(response.headers().firstValue("access-control-allow-methods").orElseThrow())
        .contains("POST");
    assertThat(response.headers().firstValue("access-control-allow-headers").orElseThrow())
        .containsIgnoringCase("content-type");
  }

  @Test
  void unknownPath_shouldAnswer404WithPlainTextNotFound() throws Exception {
    final HttpResponse<String> response = get(start(), "/pinning/unknown");
    assertThat(response.statusCode()).isEqualTo(404);
    assertThat(response.body()).isEqualTo("Not found");
    assertThat(response.headers().firstValue("content-type"))
        .contains("text/plain; charset=utf-8");
  }

  @Test
  void postHealth_shouldAnswer405Json_withAllowHeader() throws Exception {
    final HttpResponse<String> response = send(HttpRequest.newBuilder(uri(start(), "/health"))
        .POST(HttpRequest.BodyPublishers.ofString("{}")));
    assertThat(response.statusCode()).isEqualTo(405);
    assertThat(response.headers().firstValue("allow")).contains("GET, HEAD, OPTIONS");
    final JsonNode body = JSON.readTree(response.body());
    assertThat(body.get("ok").isBoolean()).isTrue();
    assertThat(body.get("ok").asBoolean()).isFalse();
    assertThat(body.get("code").asText()).isEqualTo("method_not_allowed");
    assertThat(body.get("error").isTextual()).isTrue();
  }

  @Test
  void head_shouldSendTheHeadersOfGetWithoutBody_onOneConnection() throws Exception {
    final Socket socket = connect(start());
    final InputStream in = socket.getInputStream();
    write(socket, "GET /health HTTP/1.1\r\nHost: relay\r\n\r\n");
    final RawHttpResponse get = RawHttpResponse.read(in, false);
    write(socket, "HEAD /health HTTP/1.1\r\nHost: relay\r\n\r\n");
    final RawHttpResponse head = RawHttpResponse.read(in, true);
    assertThat(head.status()).isEqualTo(200);
    assertThat(head.headers()).isEqualTo(get.headers());
    assertThat(Integer.parseInt(head.header("content-length"))).isEqualTo(get.body().length);
    // Had the HEAD answer carried a body, this status line would not parse.
    write(socket, "HEAD /metrics HTTP/1.1\r\nHost: relay\r\n\r\n");
    final RawHttpResponse metricsHead = RawHttpResponse.read(in, true);
    assertThat(metricsHead.status()).isEqualTo(200);
    assertThat(metricsHead.header("content-type"))
        .isEqualTo("text/plain; version=0.0.4; charset=utf-8");
    write(socket, "GET /nope HTTP/1.1\r\nHost: relay\r\n\r\n");
    assertThat(RawHttpResponse.read(in, false).bodyText()).isEqualTo("Not found");
  }

  @Test
  void connection_shouldStayOpen_acrossSuccessAndClientErrors() throws Exception {
    final Socket socket = connect(start());
    final InputStream in = socket.getInputStream();
    // Pipelined: all three in one write, answered in order on the same connection.
    write(socket, "GET /health HTTP/1.1\r\nHost: relay\r\n\r\n"
        + "GET /nope HTTP/1.1\r\nHost: relay\r\n\r\n"
        + "POST /health HTTP/1.1\r\nHost: relay\r\nContent-Length: 0\r\n\r\n");
    assertThat(RawHttpResponse.read(in, false).status()).isEqualTo(200);
    assertThat(RawHttpResponse.read(in, false).status()).isEqualTo(404);
    assertThat(RawHttpResponse.read(in, false).status()).isEqualTo(405);
    write(socket, "GET /health HTTP/1.1\r\nHost: relay\r\nConnection: close\r\n\r\n");
    final RawHttpResponse last = RawHttpResponse.read(in, false);
    assertThat(last.status()).isEqualTo(200);
    assertThat(last.header("connection")).isEqualTo("close");
    assertThat(in.read()).isEqualTo(-1);
  }

  @Test
  void oversizedHeader_shouldAnswer431JsonThenClose() throws Exception {
    final Socket socket = connect(start());
    write(socket, "GET /health HTTP/1.1\r\nHost: relay\r\nX-Filler: " + "a".repeat(20_000)
        + "\r\n\r\n");
    final InputStream in = socket.getInputStream();
    final RawHttpResponse response = RawHttpResponse.read(in, false);
    assertThat(response.status()).isEqualTo(431);
    assertThat(response.header("content-type")).isEqualTo("application/json; charset=utf-8");
    assertThat(response.header("access-control-allow-origin")).isEqualTo("*");
    final JsonNode body = JSON.readTree(response.body());
    assertThat(body.get("ok").asBoolean(true)).isFalse();
    assertThat(body.get("code").asText()).isEqualTo("headers_too_large");
    assertThat(in.read()).isEqualTo(-1);
  }

  @Test
  void oversizedBody_shouldAnswer413Json() throws Exception {
    final HttpResponse<String> response = send(HttpRequest.newBuilder(uri(start(),
        "/pinning/sync"))
        .header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofByteArray(new byte[70 * 1024])));
    assertThat(response.statusCode()).isEqualTo(413);
    assertThat(response.headers().firstValue("access-control-allow-origin")).contains("*");
    final JsonNode body = JSON.readTree(response.body());
    assertThat(body.get("ok").asBoolean(true)).isFalse();
    assertThat(body.get("code").asText()).isEqualTo("payload_too_large");
  }

  @Test
  void metrics_shouldServeStrictPrometheusText_withJvmAndHttpMetrics() throws Exception {
    final RelayNode node = start();
    get(node, "/health");
    get(node, "/nope");
    final HttpResponse<String> response = get(node, "/metrics");
    assertThat(response.statusCode()).isEqualTo(200);
    assertThat(response.headers().firstValue("content-type"))
        .contains("text/plain; version=0.0.4; charset=utf-8");
    final PrometheusTextParser.Exposition metrics = PrometheusTextParser.parse(response.body());
    assertThat(metrics.samples("jvm_memory_used_bytes")).isNotEmpty();
    // The 1.x client names counter families with their _total suffix in # TYPE lines.
    assertThat(metrics.types()).containsEntry("relay_http_requests_total", "counter")
        .containsEntry("relay_http_request_errors_total", "counter")
        .containsEntry("relay_http_connections_active", "gauge")
        .containsEntry("process_cpu_seconds_total", "counter");
    assertThat(metrics.samples("relay_http_requests_total")).anySatisfy(sample -> {
      assertThat(sample.labels()).isEqualTo(
          Map.of("route", "/health", "method", "GET", "status_class", "2xx"));
      assertThat(sample.value()).isEqualTo(1.0);
    });
    assertThat(metrics.samples("relay_http_request_errors_total")).anySatisfy(sample -> {
      assertThat(sample.labels()).isEqualTo(Map.of("reason", "not_found"));
      assertThat(sample.value()).isEqualTo(1.0);
    });
  }

  @Test
  void disabled_shouldStartWithoutListener_andLeaveThePortClosed() throws Exception {
    final int port;
    try (ServerSocket probe = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      port = probe.getLocalPort();
    }
    final RelayNode node = start(local().metricsPort(port).metricsDisabled(true).build());
    assertThat(node.http().port()).isEmpty();
    try (Socket socket = new Socket()) {
      assertThatThrownBy(() -> socket.connect(new InetSocketAddress("127.0.0.1", port), 2_000))
          .isInstanceOf(ConnectException.class);
    }
  }

  @Test
  void idleConnection_shouldBeClosed_afterTheIdleTimeout() throws Exception {
    final RelayNode node = start(local().httpIdleTimeout(Duration.ofMillis(300)).build());
    final Socket socket = connect(node);
    final InputStream in = socket.getInputStream();
    write(socket, "GET /health HTTP/1.1\r\nHost: relay\r\n\r\n");
    assertThat(RawHttpResponse.read(in, false).status()).isEqualTo(200);
    socket.setSoTimeout(100);
    await().atMost(Duration.ofSeconds(5)).ignoreException(SocketTimeoutException.class)
        .until(() -> in.read() == -1);
  }

  @Test
  void close_shouldStopAccepting_andStartTwiceShouldFail() throws Exception {
    final RelayNode node = start();
    final int port = node.http().port().getAsInt();
    assertThatThrownBy(node::start).isInstanceOf(IllegalStateException.class);
    node.close();
    assertThat(node.http().port()).isEmpty();
    try (Socket socket = new Socket()) {
      assertThatThrownBy(() -> socket.connect(new InetSocketAddress("127.0.0.1", port), 2_000))
          .isInstanceOf(ConnectException.class);
    }
    node.close();
  }

  @Test
  void start_shouldFailWithBindError_whenPortIsTaken() throws Exception {
    final RelayNode first = start();
    final RelayNode second = new RelayNode(local().metricsPort(first.http().port().getAsInt())
        .build(), IDENTITY, new PrometheusRegistry(), CLOCK);
    toClose.add(second);
    assertThatThrownBy(second::start).isInstanceOf(UncheckedIOException.class)
        .hasMessageContaining("cannot bind the HTTP listener to 127.0.0.1:"
            + first.http().port().getAsInt());
    assertThat(get(first, "/health").statusCode()).isEqualTo(200);
  }

  @Test
  void sharedLoops_shouldKeepRunning_afterTheNodeCloses() throws Exception {
    final EventLoops loops = EventLoops.create(1, "test-shared");
    toClose.add(() -> loops.shutdownGracefully(Duration.ofSeconds(3)));
    final RelayNode node = new RelayNode(local().build(), IDENTITY,
        new PrometheusRegistry(), CLOCK, loops);
    node.start();
    assertThat(get(node, "/health").statusCode()).isEqualTo(200);
    node.close();
    assertThat(loops.group().isShuttingDown()).isFalse();
  }

  private static List<String> fieldNames(final JsonNode node) {
    final List<String> names = new ArrayList<>();
    node.fieldNames().forEachRemaining(names::add);
    return names;
  }

  @Test
  void health_shouldCountLibp2pConnections_andListenOnTheRealTcpPort() throws Exception {
    final RelayNode node = start();
    final Host relayHost = node.network().host();
    final Multiaddr tcp = relayHost.listenAddresses().stream()
        .filter(a -> !a.toString().endsWith("/ws")).findFirst().orElseThrow();
    assertThat(tcp.toString()).startsWith("/ip4/127.0.0.1/tcp/").doesNotEndWith("/tcp/0");
    // TCP, WebSocket, QUIC.
    assertThat(health(node).get("multiaddrs").asInt()).isEqualTo(3);

    final EventLoops loops = EventLoops.create(1, "health-client");
    try (Host client = new Host(Keys.generate(KeyType.ED25519, new SecureRandom()),
        HostConfig.DEFAULT, loops, CLOCK)) {
      client.dial(tcp.withPeerId(IDENTITY.peerId())).get(10, TimeUnit.SECONDS);
      await().atMost(Duration.ofSeconds(10))
          .until(() -> health(node).get("connections").get("active").asInt() == 1);
    } finally {
      loops.shutdownGracefully(Duration.ofSeconds(2));
    }
    await().atMost(Duration.ofSeconds(10))
        .until(() -> health(node).get("connections").get("active").asInt() == 0);
  }

  @Test
  void routingPeers_shouldNeverAnswerABrowsersRemoteAddress_butItsCircuitWhileReserved()
      throws Exception {
    final RelayNode node = start();
    final Multiaddr tcp = node.network().host().listenAddresses().stream()
        .filter(a -> !a.toString().endsWith("/ws")).findFirst().orElseThrow();
    final EventLoops loops = EventLoops.create(1, "routing-client");
    // A client with no listen address, as a browser: identify gives the relay nothing to answer.
    try (Host client = new Host(Keys.generate(KeyType.ED25519, new SecureRandom()),
        HostConfig.DEFAULT, loops, CLOCK)) {
      client.dial(tcp.withPeerId(IDENTITY.peerId())).get(10, TimeUnit.SECONDS);
      await().atMost(Duration.ofSeconds(10))
          .until(() -> node.network().host().connection(client.peerId()).isPresent());
      final String path = "/routing/v1/peers/" + client.peerId().toBase58();
      final JsonNode bare = JSON.readTree(get(node, path).body()).get("Peers").get(0);
      assertThat(bare.get("ID").asText()).isEqualTo(client.peerId().toBase58());
      assertThat(bare.get("Addrs")).isEmpty();

      node.network().circuitRelay().engine().reserve(client.peerId(), new Object(), "127.0.0.1");
      final JsonNode reserved = JSON.readTree(get(node, path).body()).get("Peers").get(0);
      assertThat(reserved.get("Addrs")).isNotEmpty().allSatisfy(a -> assertThat(a.asText())
          .startsWith("/ip4/127.0.0.1/").endsWith("/p2p/" + PEER_ID + "/p2p-circuit"));
    } finally {
      loops.shutdownGracefully(Duration.ofSeconds(2));
    }
  }

  @Test
  void multiaddrs_shouldListTheTcpListenerWithPeerId_andMatchTheHealthCount() throws Exception {
    final RelayNode node = start();
    final JsonNode record = JSON.readTree(get(node, "/multiaddrs").body());
    assertThat(fieldNames(record)).containsExactly("peerId", "all", "byTransport", "best",
        "autoTlsServingZone", "metricsHttps", "timestamp", "deployedMode", "version");
    final List<Multiaddr> listen = node.network().host().listenAddresses();
    final String tcp = listen.stream().filter(a -> !a.toString().endsWith("/ws")).findFirst()
        .orElseThrow() + "/p2p/" + PEER_ID;
    final String ws = listen.stream().filter(a -> a.toString().endsWith("/ws")).findFirst()
        .orElseThrow() + "/p2p/" + PEER_ID;
    assertThat(record.get("peerId").asText()).isEqualTo(PEER_ID);
    final String quic = listen.stream().filter(a -> a.toString().endsWith("/quic-v1"))
        .findFirst().orElseThrow() + "/p2p/" + PEER_ID;
    assertThat(record.get("all")).hasSize(3);
    assertThat(record.get("byTransport").get("tcp")).hasSize(1);
    assertThat(record.get("byTransport").get("quic")).hasSize(1);
    assertThat(record.get("byTransport").get("quic").get(0).asText()).isEqualTo(quic);
    assertThat(record.get("best").get("quic").asText()).isEqualTo(quic);
    assertThat(record.get("byTransport").get("tcp").get(0).asText()).isEqualTo(tcp);
    assertThat(record.get("byTransport").get("websocket").get(0).asText()).isEqualTo(ws);
    assertThat(record.get("byTransport").get("webrtc")).isEmpty();
    assertThat(record.get("best").get("tcp").asText()).isEqualTo(tcp);
    assertThat(record.get("best").get("websocket").asText()).isEqualTo(ws);
    assertThat(record.get("best").get("webrtc").isNull()).isTrue();
    assertThat(record.get("deployedMode").asBoolean()).isFalse();
    // As orbitdb-relay 0.10 has it: the build's version, the one /health and --version show.
    assertThat(record.get("version").asText()).isEqualTo(RelayVersion.VERSION)
        .isEqualTo(health(node).get("version").asText()).doesNotContain("${");
    assertThat(record.get("autoTlsServingZone").asText()).isEqualTo(ZONE);
    assertThat(record.get("metricsHttps").has("exampleUrl")).isTrue();
    assertThat(health(node).get("multiaddrs").asInt()).isEqualTo(3);
  }

  @Test
  void metrics_shouldExposePubSubAndTopicPolicy_whenTheNodeRuns() throws Exception {
    final RelayNode node = start();
    assertThat(node.network().pubsub()).isNotNull();
    assertThat(node.replication().topics().followed()).isEmpty();
    final String metrics = get(node, "/metrics").body();
    // The one topic is pubsub peer discovery's (PUBSUB_TOPICS), which is not a database.
    assertThat(node.network().pubsub().topics())
        .containsExactly("todo._peer-discovery._p2p._pubsub");
    assertThat(metrics).contains("relay_pubsub_topics 1.0", "relay_pubsub_mesh_peers 0.0",
        "relay_orbitdb_topics_followed 0.0", "relay_orbitdb_topics_ignored_total 0.0");
    assertThat(metrics).contains("relay_circuit_reservations_active 0.0",
        "relay_circuit_circuits_open 0.0", "relay_circuit_bytes_total 0.0",
        "relay_circuit_refusals_total{reason=\"no_reservation\"} 0.0",
        "relay_discovery_announcements_total{event=\"published\"} 0.0");
    assertThat(node.network().host().protocols().protocols())
        .contains("/libp2p/circuit/relay/0.2.0/hop", "/libp2p/autonat/1.0.0");
    assertThat(metrics).contains(
        "relay_autonat_requests_total{outcome=\"refused_peer_rate\"} 0.0");
  }

  @Test
  void bootstrapPeers_shouldBeDialledAtStart_andMustNameTheirPeer() throws Exception {
    final EventLoops loops = EventLoops.create(1, "bootstrap-target");
    try (Host target = new Host(Keys.generate(KeyType.ED25519, new SecureRandom()),
        HostConfig.builder().listenAddresses(List.of(Multiaddr.parse("/ip4/127.0.0.1/tcp/0")))
            .build(), loops, CLOCK)) {
      target.start().get(5, TimeUnit.SECONDS);
      final String address = target.listenAddresses().get(0).withPeerId(target.peerId())
          .toString();
      final RelayNode node = start(local().bootstrapPeers(List.of(address)).build());
      await().atMost(Duration.ofSeconds(10)).until(() -> target.connectionCount() == 1);
      assertThat(node.network().host().connection(target.peerId())).isPresent();

      assertThatThrownBy(() -> new RelayNode(local().bootstrapPeers(
          List.of(target.listenAddresses().get(0).toString())).build(), IDENTITY,
          new PrometheusRegistry(), CLOCK))
          .isInstanceOf(InvalidConfigException.class)
          .hasMessageStartingWith("RELAY_BOOTSTRAP_PEERS: ");
    } finally {
      loops.shutdownGracefully(Duration.ofSeconds(2));
    }
  }
}
