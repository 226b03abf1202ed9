package io.relaypinner.relay.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.relaypinner.libp2p.crypto.KeyType;
import io.relaypinner.libp2p.crypto.Keys;
import io.relaypinner.libp2p.crypto.PrivateKey;
import io.relaypinner.relay.RelayNode;
import io.relaypinner.relay.config.RelayConfig;
import io.relaypinner.relay.identity.NodeIdentity;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * {@code POST /pinning/has-entry} on one real relay (shared by the class) that holds a database
 * written by OrbitDB 4 (the orbitdb module's stack B vectors, imported as a CAR, so every entry
 * was verified by the relay's own log): true for its entries, false for another hash, null with a
 * {@code source} for a database the relay does not follow, 400 for bad input, and the token,
 * CORS and metrics rules of {@code /pinning/sync}.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class HasEntryIT {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String TOKEN = "has-entry-token";
  private final HttpClient client = HttpClient.newBuilder()
      .version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(5)).build();
  private Path dir;
  private RelayNode relay;
  private JsonNode vectors;
  private String address;
  private List<String> entries;

  @BeforeAll
  void start() throws Exception {
    dir = Files.createTempDirectory("has-entry-it");
    vectors = JSON.readTree(
        Path.of("../orbitdb/src/test/resources/orbitdb-vectors-stack-b.json").toFile());
    final JsonNode db = vectors.get("dbs").get(0);
    address = db.get("address").asText();
    entries = new ArrayList<>();
    db.get("entries").forEach(e -> entries.add(e.get("hash").asText()));
    final PrivateKey key = Keys.generate(KeyType.ED25519, new SecureRandom());
    relay = new RelayNode(RelayConfig.builder().dataDir(dir.resolve("relay"))
        .metricsHost("127.0.0.1").metricsPort(0).listenIpv4("127.0.0.1").tcpPort(0).wsPort(0)
        .quicPort(0)
        .ipv6Disabled(true).apiToken(TOKEN).build(),
        new NodeIdentity(key, key.publicKey().peerId(),
            NodeIdentity.servingZone(key.publicKey().peerId(), "libp2p.direct"),
            NodeIdentity.Source.ENVIRONMENT), new PrometheusRegistry(), Clock.systemUTC());
    relay.start();
    final HttpResponse<String> imported = send("/pinning/import", car(db), TOKEN, Map.of());
    assertThat(imported.statusCode()).as(imported.body()).isEqualTo(200);
    // The import queues a sync, which follows the database.
    await().atMost(Duration.ofSeconds(30)).until(() ->
        relay.replication().topics().isFollowed(address));
  }

  @AfterAll
  void stop() throws Exception {
    if (relay != null) {
      relay.close();
    }
    try (var paths = Files.walk(dir)) {
      paths.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    }
  }

  /** A CAR with roots [manifest, heads…] and every block of the vectors file. */
  private byte[] car(final JsonNode db) throws Exception {
    return io.relaypinner.relay.testing.ImportCars.vectorCar(vectors, db, Map.of());
  }

  private HttpResponse<String> send(final String path, final byte[] body, final String token,
      final Map<String, String> headers) throws Exception {
    final HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
        + relay.http().port().getAsInt() + path)).timeout(Duration.ofSeconds(30))
        .POST(body == null ? HttpRequest.BodyPublishers.noBody()
            : HttpRequest.BodyPublishers.ofByteArray(body));
    if (token != null) {
      request.header("Authorization", "Bearer " + token);
    }
    headers.forEach(request::header);
    return client.send(request.build(), HttpResponse.BodyHandlers.ofString());
  }

  private JsonNode hasEntry(final String body) throws Exception {
    final HttpResponse<String> response = send("/pinning/has-entry",
        body.getBytes(StandardCharsets.UTF_8), TOKEN, Map.of("Content-Type", "application/json"));
    assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
    return JSON.readTree(response.body());
  }

  private static String request(final String db, final String hash) {
    return "{\"dbAddress\":\"" + db + "\",\"entryHash\":\"" + hash + "\"}";
  }

  private static List<String> fieldNames(final JsonNode node) {
    final List<String> names = new ArrayList<>();
    node.fieldNames().forEachRemaining(names::add);
    return names;
  }

  @Test
  void hasEntry_shouldBeTrue_forEveryEntryTheRelayVerified() throws Exception {
    for (final String entry : entries) {
      final JsonNode answer = hasEntry(request(address, entry));
      assertThat(fieldNames(answer)).containsExactly("ok", "dbAddress", "entryHash", "hasEntry",
          "entryCount", "source");
      assertThat(answer.get("ok").asBoolean()).isTrue();
      assertThat(answer.get("dbAddress").asText()).isEqualTo(address);
      assertThat(answer.get("entryHash").asText()).isEqualTo(entry);
      assertThat(answer.get("hasEntry").isBoolean()).isTrue();
      assertThat(answer.get("hasEntry").asBoolean()).isTrue();
      assertThat(answer.get("entryCount").asLong()).isEqualTo(entries.size());
      assertThat(answer.get("source").asText()).isEqualTo(EntryLookup.SOURCE_LOG);
    }
    // The JS relay's query fallbacks: ?address= and ?hash=, with an empty body.
    final HttpResponse<String> byQuery = send("/pinning/has-entry?address="
        + URLEncoder.encode(address, StandardCharsets.UTF_8) + "&hash=" + entries.get(0), null,
        TOKEN, Map.of());
    assertThat(byQuery.statusCode()).isEqualTo(200);
    assertThat(JSON.readTree(byQuery.body()).get("hasEntry").asBoolean()).isTrue();
  }

  @Test
  void hasEntry_shouldBeFalse_forAnUnknownHashOfAFollowedDatabase() throws Exception {
    // Valid entry CIDs, of another database and of a refused intruder: not in this log.
    final String other = vectors.get("dbs").get(1).get("entries").get(0).get("hash").asText();
    final String intruder = vectors.get("intruder").get("hash").asText();
    for (final String hash : List.of(other, intruder)) {
      final JsonNode answer = hasEntry(request(address, hash));
      assertThat(answer.get("hasEntry").isBoolean()).isTrue();
      assertThat(answer.get("hasEntry").asBoolean()).isFalse();
      assertThat(answer.get("entryCount").asLong()).isEqualTo(entries.size());
      assertThat(answer.get("source").asText()).isEqualTo(EntryLookup.SOURCE_LOG);
    }
  }

  @Test
  void hasEntry_shouldBeNullWithSource_forADatabaseNotFollowed() throws Exception {
    final JsonNode other = vectors.get("dbs").get(1);
    final JsonNode answer = hasEntry(request(other.get("address").asText(),
        other.get("entries").get(0).get("hash").asText()));
    assertThat(answer.get("ok").asBoolean()).isTrue();
    assertThat(answer.get("hasEntry").isNull()).isTrue();
    assertThat(answer.get("entryCount").isNull()).isTrue();
    assertThat(answer.get("source").asText()).isEqualTo(EntryLookup.SOURCE_NOT_FOLLOWED);
  }

  @Test
  void hasEntry_shouldAnswer400_forBadInput() throws Exception {
    final String entry = entries.get(0);
    final Map<String, String> cases = Map.of(
        "{\"entryHash\":\"" + entry + "\"}", "missing_db_address",
        "{\"dbAddress\":\"  \",\"entryHash\":\"" + entry + "\"}", "missing_db_address",
        "{\"dbAddress\":\"" + address + "\"}", "missing_entry_hash",
        "{\"dbAddress\":\"" + address + "\",\"entryHash\":42}", "missing_entry_hash",
        "{not json", "invalid_json",
        "[1,2]", "invalid_json",
        request("/orbitdb/not-a-cid", entry), "invalid_address",
        request(address, "not-a-cid"), "invalid_entry_hash");
    for (final Map.Entry<String, String> c : cases.entrySet()) {
      final HttpResponse<String> response = send("/pinning/has-entry",
          c.getKey().getBytes(StandardCharsets.UTF_8), TOKEN, Map.of());
      assertThat(response.statusCode()).as(c.getKey()).isEqualTo(400);
      final JsonNode body = JSON.readTree(response.body());
      assertThat(fieldNames(body)).containsExactly("ok", "code", "error");
      assertThat(body.get("code").asText()).as(c.getKey()).isEqualTo(c.getValue());
    }
    final HttpResponse<String> tooLarge = send("/pinning/has-entry",
        ("{\"dbAddress\":\"" + "x".repeat(JsonRequest.MAX_BODY) + "\"}")
            .getBytes(StandardCharsets.UTF_8), TOKEN, Map.of());
    assertThat(tooLarge.statusCode()).isEqualTo(413);
  }

  @Test
  void hasEntry_shouldFollowTheTokenCorsAndMetricsRulesOfSync() throws Exception {
    final byte[] body = request(address, entries.get(0)).getBytes(StandardCharsets.UTF_8);
    for (final String path : List.of("/pinning/has-entry", "/pinning/sync")) {
      final HttpResponse<String> anonymous = send(path, body, null,
          Map.of("Origin", "https://app.example"));
      assertThat(anonymous.statusCode()).as(path).isEqualTo(401);
      assertThat(JSON.readTree(anonymous.body()).get("code").asText()).isEqualTo("unauthorized");
      assertThat(anonymous.headers().firstValue("www-authenticate")).hasValue("Bearer");
      assertThat(anonymous.headers().firstValue("access-control-allow-origin")).hasValue("*");
      assertThat(send(path, body, "wrong", Map.of()).statusCode()).isEqualTo(401);
      final HttpResponse<String> preflight = client.send(HttpRequest.newBuilder(URI.create(
          "http://127.0.0.1:" + relay.http().port().getAsInt() + path))
          .method("OPTIONS", HttpRequest.BodyPublishers.noBody())
          .header("Origin", "https://app.example")
          .header("Access-Control-Request-Method", "POST")
          .header("Access-Control-Request-Headers", "content-type, authorization").build(),
          HttpResponse.BodyHandlers.ofString());
      assertThat(preflight.statusCode()).isEqualTo(204);
      assertThat(preflight.headers().firstValue("access-control-allow-methods"))
          .hasValueSatisfying(v -> assertThat(v).contains("POST"));
    }
    final HttpResponse<String> ok = send("/pinning/has-entry", body, TOKEN,
        Map.of("Origin", "https://app.example"));
    assertThat(ok.headers().firstValue("access-control-allow-origin")).hasValue("*");
    final String metrics = client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
        + relay.http().port().getAsInt() + "/metrics")).build(),
        HttpResponse.BodyHandlers.ofString()).body();
    assertThat(metrics).containsPattern("relay_http_requests_total\\{[^}]*"
        + "route=\"/pinning/has-entry\"[^}]*status_class=\"2xx\"[^}]*} [1-9]");
    assertThat(metrics).containsPattern("relay_http_requests_total\\{[^}]*"
        + "route=\"/pinning/has-entry\"[^}]*status_class=\"4xx\"[^}]*} [1-9]");
  }
}
