package io.relaypinner.relay;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.relaypinner.ipfs.datastore.MvStoreDatastore;
import io.relaypinner.libp2p.crypto.Ed25519PrivateKey;
import io.relaypinner.libp2p.crypto.PrivateKey;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.multiformats.Multibase;
import io.relaypinner.multiformats.Multicodec;
import io.relaypinner.multiformats.Multihash;
import io.relaypinner.relay.config.RelayConfig;
import io.relaypinner.relay.identity.NodeIdentity;
import io.relaypinner.relay.testing.TestCertificates;
import java.io.IOException;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.X509Certificate;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509TrustManager;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A real {@link RelayNode}: the pinning routes on the node's replication syncer when no peer has
 * the database (the sync fails at once and honestly), the bearer token, the sync counters and
 * metrics, the pubsub follow trigger after a restart, and the HTTPS listener coming up
 * when a certificate appears in {@code RELAY_TLS_CERT_DIR} and serving renewed certificates.
 */
class RelayNodePinningIT {
  private static final NodeIdentity IDENTITY = identity();
  private static final Clock CLOCK =
      Clock.fixed(Instant.parse("2026-11-22T10:00:00.123Z"), ZoneOffset.UTC);
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String TOKEN = "node-token";
  private static final String DATABASE = "/orbitdb/" + Cid.v1(Multicodec.DAG_CBOR,
      Multihash.sha2_256("node-db".getBytes(StandardCharsets.UTF_8)))
      .toString(Multibase.Base.BASE58BTC);

  private final HttpClient client = HttpClient.newBuilder()
      .version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(5)).build();
  private final List<AutoCloseable> toClose = new ArrayList<>();
  @TempDir
  Path tempDir;

  private static NodeIdentity identity() {
    final byte[] seed = new byte[32];
    Arrays.fill(seed, (byte) 9);
    final PrivateKey key = Ed25519PrivateKey.fromSeed(seed);
    return new NodeIdentity(key, key.publicKey().peerId(),
        NodeIdentity.servingZone(key.publicKey().peerId(), "libp2p.direct"),
        NodeIdentity.Source.ENVIRONMENT);
  }

  @AfterEach
  void tearDown() throws Exception {
    for (int i = toClose.size() - 1; i >= 0; i--) {
      toClose.get(i).close();
    }
  }

  private RelayConfig.Builder local(final Path dataDir) {
    return RelayConfig.builder().dataDir(dataDir).metricsHost("127.0.0.1").metricsPort(0)
        .listenIpv4("127.0.0.1").tcpPort(0).wsPort(0).quicPort(0).ipv6Disabled(true);
  }

  private RelayNode start(final RelayConfig config) {
    final RelayNode node = new RelayNode(config, IDENTITY, new PrometheusRegistry(), CLOCK);
    toClose.add(node);
    node.start();
    return node;
  }

  private HttpResponse<String> send(final HttpClient httpClient, final HttpRequest.Builder request)
      throws IOException, InterruptedException {
    return httpClient.send(request.timeout(Duration.ofSeconds(20)).build(),
        HttpResponse.BodyHandlers.ofString());
  }

  private JsonNode getJson(final RelayNode node, final String path)
      throws IOException, InterruptedException {
    return JSON.readTree(send(client, HttpRequest.newBuilder(
        URI.create("http://127.0.0.1:" + node.http().port().getAsInt() + path))).body());
  }

  private HttpRequest.Builder syncRequest(final RelayNode node) {
    return HttpRequest.newBuilder(
            URI.create("http://127.0.0.1:" + node.http().port().getAsInt() + "/pinning/sync"))
        .header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString("{\"dbAddress\":\"" + DATABASE + "\"}"));
  }

  private static List<String> fieldNames(final JsonNode node) {
    final List<String> names = new ArrayList<>();
    final Iterator<String> it = node.fieldNames();
    it.forEachRemaining(names::add);
    return names;
  }

  @Test
  void sync_shouldFailAtOnce_whenNoPeerHasTheDatabase() throws Exception {
    final Path dataDir = tempDir.resolve("node");
    final RelayConfig config = local(dataDir).apiToken(TOKEN).build();
    final RelayNode node = start(config);
    final JsonNode before = getJson(node, "/pinning/stats");
    assertThat(before.get("syncQueue").get("active").asInt()).isZero();

    final HttpResponse<String> denied = send(client, syncRequest(node));
    assertThat(denied.statusCode()).isEqualTo(401);
    assertThat(JSON.readTree(denied.body()).get("code").asText()).isEqualTo("unauthorized");

    final HttpResponse<String> failed =
        send(client, syncRequest(node).header("Authorization", "Bearer " + TOKEN));
    // No manifest here and no peer to fetch it from: an honest failure, not an empty success.
    assertThat(failed.statusCode()).isEqualTo(500);
    assertThat(JSON.readTree(failed.body()).get("code").asText()).isEqualTo("sync_failed");
    assertThat(JSON.readTree(failed.body()).get("error").asText()).contains("manifest");
    final JsonNode stats = getJson(node, "/pinning/stats");
    assertThat(stats.get("syncOperations").asInt()).isZero();
    assertThat(stats.get("failedSyncs").asInt()).isEqualTo(1);
    assertThat(stats.get("totalPinned").asInt()).isZero();
    final String metrics = send(client, HttpRequest.newBuilder(URI.create(
        "http://127.0.0.1:" + node.http().port().getAsInt() + "/metrics"))).body();
    assertThat(metrics).contains("orbitdb_sync_total{result=\"failure\"} 1.0",
        "orbitdb_sync_duration_seconds_count 1", "orbitdb_sync_queue_waiting 0.0",
        "orbitdb_sync_queue_active 0.0", "orbitdb_sync_timed_out_total 0.0",
        "orbitdb_sync_cooldown_topics 1.0");
    node.close();

    final RelayNode restarted = start(config);
    final JsonNode databases = getJson(restarted, "/pinning/databases");
    assertThat(databases.get("total").asInt()).isZero();
  }

  @Test
  void start_shouldSyncFollowedTopics_whenResubscribedFromDatastore() throws Exception {
    final Path dataDir = tempDir.resolve("follow");
    Files.createDirectories(dataDir);
    try (MvStoreDatastore datastore = new MvStoreDatastore(dataDir.resolve("datastore.mv"))) {
      datastore.put("/relay/topics" + DATABASE, new byte[0]);
    }

    final RelayNode node = start(local(dataDir).build());

    assertThat(node.network().pubsub().topics()).contains(DATABASE);
    // The follow queued a sync; with no peer to fetch the manifest from it fails (and is
    // retried by the next trigger once a peer subscribes).
    await().atMost(Duration.ofSeconds(20)).until(
        () -> getJson(node, "/pinning/stats").get("failedSyncs").asInt() == 1);
    assertThat(getJson(node, "/pinning/databases").get("total").asInt()).isZero();
  }

  @Test
  void https_shouldComeUpAndServeRenewedCertificate_whenCertificateAppearsLater()
      throws Exception {
    final Path certDir = tempDir.resolve("tls");
    final RelayNode node = start(local(tempDir.resolve("https")).metricsHttpsEnabled(true)
        .metricsHttpsPort(0).tlsCertDir(certDir).build());
    final JsonNode down = getJson(node, "/health").get("metricsHttps");
    assertThat(down.get("enabled").asBoolean()).isTrue();
    assertThat(down.get("listening").asBoolean()).isFalse();
    assertThat(down.get("port").isNull()).isTrue();
    assertThat(down.get("exampleUrl").isNull()).isTrue();

    final TestCertificates.Pair first = TestCertificates.selfSigned("EC", "first.relay.test");
    first.writeTo(certDir);
    await().atMost(Duration.ofSeconds(60)).until(() -> node.http().httpsPort().isPresent());
    final int port = node.http().httpsPort().getAsInt();

    final HttpClient httpsClient = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
        .sslContext(trusting(first.certificate())).connectTimeout(Duration.ofSeconds(5)).build();
    final HttpResponse<String> health = send(httpsClient,
        HttpRequest.newBuilder(URI.create("https://127.0.0.1:" + port + "/health")));
    assertThat(health.statusCode()).isEqualTo(200);
    final JsonNode overHttps = JSON.readTree(health.body());
    final JsonNode overHttp = getJson(node, "/health");
    assertThat(fieldNames(overHttps)).isEqualTo(fieldNames(overHttp));
    final String zone = IDENTITY.autoTlsServingZone();
    for (final JsonNode record : List.of(overHttps, overHttp,
        getJson(node, "/multiaddrs"))) {
      final JsonNode https = record.get("metricsHttps");
      assertThat(https.get("listening").asBoolean()).isTrue();
      assertThat(https.get("port").asInt()).isEqualTo(port);
      assertThat(https.get("internalPort").asInt()).isEqualTo(port);
      assertThat(https.get("externalPort").asInt()).isEqualTo(port);
      assertThat(https.get("host").asText()).isEqualTo("127-0-0-1." + zone);
      assertThat(https.get("exampleUrl").asText())
          .isEqualTo("https://127-0-0-1." + zone + ":" + port + "/health");
    }
    // The pinning routes are there too.
    final HttpResponse<String> stats = send(httpsClient,
        HttpRequest.newBuilder(URI.create("https://127.0.0.1:" + port + "/pinning/stats")));
    assertThat(JSON.readTree(stats.body()).has("syncQueue")).isTrue();
    assertThat(served(port)).isEqualTo(first.certificate());

    // Plain HTTP on the HTTPS port is a client mistake: that connection closes, nothing else.
    try (Socket plain = new Socket("127.0.0.1", port)) {
      plain.setSoTimeout(20_000);
      plain.getOutputStream().write("GET /health HTTP/1.1\r\nHost: a\r\n\r\n"
          .getBytes(StandardCharsets.US_ASCII));
      final byte[] answer = plain.getInputStream().readAllBytes();
      assertThat(new String(answer, StandardCharsets.ISO_8859_1)).doesNotContain("\"status\"");
    }
    assertThat(send(httpsClient, HttpRequest.newBuilder(
        URI.create("https://127.0.0.1:" + port + "/health"))).statusCode()).isEqualTo(200);
    await().atMost(Duration.ofSeconds(20)).until(() -> send(client, HttpRequest.newBuilder(
            URI.create("http://127.0.0.1:" + node.http().port().getAsInt() + "/metrics"))).body()
        .contains("relay_http_request_errors_total{reason=\"bad_tls\"} 1.0"));

    final TestCertificates.Pair second = TestCertificates.selfSigned("EC", "second.relay.test");
    second.writeTo(certDir);

    await().atMost(Duration.ofSeconds(60))
        .until(() -> served(port).equals(second.certificate()));
    assertThat(node.http().httpsPort()).hasValue(port);
  }

  @Test
  void https_shouldStayDown_whenNotEnabled() throws Exception {
    final Path certDir = tempDir.resolve("tls-off");
    Files.createDirectories(certDir);
    TestCertificates.selfSigned("EC", "off.relay.test").writeTo(certDir);

    final RelayNode node = start(local(tempDir.resolve("off")).tlsCertDir(certDir).build());

    await().atMost(Duration.ofSeconds(60))
        .until(() -> node.http().certificates().current().isPresent());
    assertThat(node.http().httpsPort()).isEmpty();
    final JsonNode https = getJson(node, "/health").get("metricsHttps");
    assertThat(https.get("enabled").asBoolean()).isFalse();
    assertThat(https.get("listening").asBoolean()).isFalse();
  }

  /** The leaf certificate a fresh TLS connection to {@code port} is served. */
  private static X509Certificate served(final int port) throws Exception {
    final SSLContext context = SSLContext.getInstance("TLS");
    context.init(null, new TrustManager[] {new AcceptAll()}, null);
    try (SSLSocket socket = (SSLSocket) context.getSocketFactory()
        .createSocket("127.0.0.1", port)) {
      socket.setSoTimeout(10_000);
      socket.startHandshake();
      return (X509Certificate) socket.getSession().getPeerCertificates()[0];
    }
  }

  private static SSLContext trusting(final X509Certificate certificate) throws Exception {
    final KeyStore store = KeyStore.getInstance(KeyStore.getDefaultType());
    store.load(null, null);
    store.setCertificateEntry("relay", certificate);
    final TrustManagerFactory factory =
        TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
    factory.init(store);
    final SSLContext context = SSLContext.getInstance("TLS");
    context.init(null, factory.getTrustManagers(), null);
    return context;
  }

  /** Only for reading which certificate the server presents; never for trusting content. */
  private static final class AcceptAll implements X509TrustManager {
    @Override
    public void checkClientTrusted(final X509Certificate[] chain, final String authType) {}

    @Override
    public void checkServerTrusted(final X509Certificate[] chain, final String authType) {}

    @Override
    public X509Certificate[] getAcceptedIssuers() {
      return new X509Certificate[0];
    }
  }
}
