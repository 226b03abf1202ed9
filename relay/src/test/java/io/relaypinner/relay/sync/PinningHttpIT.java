package io.relaypinner.relay.sync;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.relaypinner.ipfs.datastore.MemoryDatastore;
import io.relaypinner.libp2p.netty.EventLoops;
import io.relaypinner.relay.api.RelayRoutes;
import io.relaypinner.relay.config.RelayConfig;
import io.relaypinner.relay.config.SyncConfig;
import io.relaypinner.relay.http.HttpMetrics;
import io.relaypinner.relay.http.HttpResponses;
import io.relaypinner.relay.http.RelayHttpServer;
import io.relaypinner.relay.testing.MutableClock;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@code /pinning/*} through the JDK client against the route set served by
 * {@link RelayHttpServer} (the embedding path), with a controlled syncer, clock and timer: every
 * status and field of spec 2.4-2.7 and 4.4-4.5, and the bearer token.
 */
class PinningHttpIT {
  private static final String TOKEN = "s3cret-token";
  private static final Duration TIMEOUT = Duration.ofSeconds(30);
  private static final Duration COOLDOWN = Duration.ofSeconds(60);
  private static final Instant START = Instant.parse("2026-11-22T10:00:00Z");
  private static final String A = SyncEngineTest.address("http-a");
  private static final String B = SyncEngineTest.address("http-b");
  private static final ObjectMapper JSON = new ObjectMapper();

  private final MutableClock clock = new MutableClock(START);
  private final ManualTimer timer = new ManualTimer(clock);
  private final ControlledSyncer syncer = new ControlledSyncer();
  private final EventLoops loops = EventLoops.create(2, "pinning-it");
  private final HttpClient client = HttpClient.newBuilder()
      .version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(5)).build();
  private SyncEngine engine;
  private RelayHttpServer server;

  @BeforeEach
  void setUp() {
    final RelayConfig config = RelayConfig.builder().metricsHost("127.0.0.1").metricsPort(0)
        .apiToken(TOKEN).build();
    engine = new SyncEngine(
        new SyncConfig(TIMEOUT, COOLDOWN, 1, SyncConfig.DEFAULT_MEDIA_CID_FIELDS), syncer,
        new SyncHistory(new MemoryDatastore(), 100), new PrometheusRegistry(), clock, timer);
    final HttpResponses responses = new HttpResponses(HttpResponses.newObjectMapper());
    server = new RelayHttpServer(config.http(), config.cors(),
        RelayRoutes.builder(responses, clock).pinning(engine, config.http().apiToken()).router(),
        responses, new HttpMetrics(new PrometheusRegistry()), loops);
    server.start();
  }

  @AfterEach
  void tearDown() {
    syncer.release(A);
    syncer.release(B);
    server.close();
    engine.close();
    loops.shutdownGracefully(Duration.ofSeconds(3));
  }

  private URI uri(final String pathAndQuery) {
    return URI.create("http://127.0.0.1:" + server.port() + pathAndQuery);
  }

  private HttpRequest.Builder post(final String pathAndQuery, final String body) {
    return HttpRequest.newBuilder(uri(pathAndQuery)).timeout(Duration.ofSeconds(20))
        .header("Authorization", "Bearer " + TOKEN)
        .header("Content-Type", "application/json")
        .POST(body == null ? HttpRequest.BodyPublishers.noBody()
            : HttpRequest.BodyPublishers.ofString(body));
  }

  private HttpResponse<String> send(final HttpRequest.Builder request)
      throws IOException, InterruptedException {
    return client.send(request.build(), HttpResponse.BodyHandlers.ofString());
  }

  private CompletableFuture<HttpResponse<String>> sendAsync(final HttpRequest.Builder request) {
    return client.sendAsync(request.build(), HttpResponse.BodyHandlers.ofString());
  }

  private HttpResponse<String> get(final String pathAndQuery)
      throws IOException, InterruptedException {
    return send(HttpRequest.newBuilder(uri(pathAndQuery)).timeout(Duration.ofSeconds(20)));
  }

  private static JsonNode json(final HttpResponse<String> response) throws IOException {
    assertThat(response.headers().firstValue("content-type"))
        .hasValue("application/json; charset=utf-8");
    return JSON.readTree(response.body());
  }

  private static List<String> fieldNames(final JsonNode node) {
    final List<String> names = new ArrayList<>();
    final Iterator<String> it = node.fieldNames();
    it.forEachRemaining(names::add);
    return names;
  }

  private static void assertError(final HttpResponse<String> response, final int status,
      final String code) throws IOException {
    assertThat(response.statusCode()).isEqualTo(status);
    final JsonNode body = json(response);
    assertThat(fieldNames(body)).containsExactly("ok", "code", "error");
    assertThat(body.get("ok").asBoolean()).isFalse();
    assertThat(body.get("code").asText()).isEqualTo(code);
    assertThat(body.get("error").asText()).isNotBlank();
  }

  @Test
  void sync_shouldAnswerResult_whenSyncFinishes() throws Exception {
    syncer.release(A);

    final HttpResponse<String> response =
        send(post("/pinning/sync", "{\"dbAddress\":\"  " + A + "  \"}"));

    assertThat(response.statusCode()).isEqualTo(200);
    final JsonNode body = json(response);
    assertThat(fieldNames(body)).containsExactly("ok", "dbAddress", "receivedUpdate",
        "fallbackScanUsed", "extractedMediaCids");
    assertThat(body.get("ok").asBoolean()).isTrue();
    assertThat(body.get("dbAddress").asText()).isEqualTo(A);
    assertThat(body.get("receivedUpdate").asBoolean()).isTrue();
    assertThat(body.get("fallbackScanUsed").asBoolean()).isFalse();
    assertThat(body.get("extractedMediaCids").get(0).asText()).isEqualTo("bafkmedia-1");
  }

  @Test
  void sync_shouldTakeAddressFromQuery_whenBodyIsAbsentOrHasNoAddress() throws Exception {
    syncer.release(A);
    syncer.release(B);
    final String encodedA = URLEncoder.encode(A, StandardCharsets.UTF_8);

    assertThat(send(post("/pinning/sync?dbAddress=" + encodedA, null)).statusCode())
        .isEqualTo(200);
    final JsonNode viaAddress = json(send(post("/pinning/sync?address=" + encodedA, null)));
    assertThat(viaAddress.get("dbAddress").asText()).isEqualTo(A);
    final JsonNode blankBodyField =
        json(send(post("/pinning/sync?dbAddress=" + encodedA, "{\"dbAddress\":\"   \"}")));
    assertThat(blankBodyField.get("dbAddress").asText()).isEqualTo(A);
    // The body wins over the query when it names an address.
    final JsonNode bodyWins =
        json(send(post("/pinning/sync?dbAddress=" + encodedA, "{\"dbAddress\":\"" + B + "\"}")));
    assertThat(bodyWins.get("dbAddress").asText()).isEqualTo(B);
  }

  @Test
  void sync_shouldRejectBadRequests_whenInputIsWrong() throws Exception {
    assertError(send(post("/pinning/sync", "{\"dbAddress\":")), 400, "invalid_json");
    assertError(send(post("/pinning/sync", "[1,2]")), 400, "invalid_json");
    assertError(send(post("/pinning/sync", null)), 400, "missing_db_address");
    assertError(send(post("/pinning/sync", "{\"other\":1}")), 400, "missing_db_address");
    assertError(send(post("/pinning/sync", "{\"dbAddress\":\"/orbitdb/not-a-cid\"}")), 400,
        "invalid_address");
    assertError(send(post("/pinning/sync", "{\"dbAddress\":\"" + A + "/extra\"}")), 400,
        "invalid_address");
    assertError(send(post("/pinning/sync", "{\"dbAddress\":\"/ipfs/" + A.substring(9) + "\"}")),
        400, "invalid_address");
    final String big = "{\"dbAddress\":\"" + A + "\",\"pad\":\"" + "x".repeat(17 * 1024) + "\"}";
    assertError(send(post("/pinning/sync", big)), 413, "payload_too_large");
    assertThat(syncer.calls(A)).isZero();
  }

  @Test
  void sync_shouldRequireBearerToken_whenApiTokenIsSet() throws Exception {
    syncer.release(A);
    final String body = "{\"dbAddress\":\"" + A + "\"}";

    final HttpResponse<String> none = send(HttpRequest.newBuilder(uri("/pinning/sync"))
        .POST(HttpRequest.BodyPublishers.ofString(body)));
    assertError(none, 401, "unauthorized");
    assertThat(none.headers().firstValue("www-authenticate")).hasValue("Bearer");
    assertError(send(post("/pinning/sync", body).setHeader("Authorization", "Bearer wrong")),
        401, "unauthorized");
    assertError(send(post("/pinning/sync", body).setHeader("Authorization", "Basic " + TOKEN)),
        401, "unauthorized");
    assertError(send(post("/pinning/sync", body)
        .setHeader("Authorization", "Bearer " + TOKEN + "x")), 401, "unauthorized");
    assertThat(syncer.calls(A)).isZero();

    assertThat(send(post("/pinning/sync", body)
        .setHeader("Authorization", "bearer " + TOKEN)).statusCode()).isEqualTo(200);
    // Reading routes stay open.
    assertThat(get("/pinning/stats").statusCode()).isEqualTo(200);
  }

  @Test
  void sync_shouldAnswerCoalesced_whenSameAddressIsInFlight() throws Exception {
    final String body = "{\"dbAddress\":\"" + A + "\"}";
    final CompletableFuture<HttpResponse<String>> first = sendAsync(post("/pinning/sync", body));
    await().atMost(Duration.ofSeconds(10)).until(() -> syncer.isRunning(A));
    final CompletableFuture<HttpResponse<String>> second =
        sendAsync(post("/pinning/sync", body));
    await().atMost(Duration.ofSeconds(10))
        .until(() -> json(get("/pinning/stats")).get("syncQueue").get("queuedTopics").asInt() == 1
            && !second.isDone());
    // The event loop is not blocked while both wait: other requests are answered.
    assertThat(get("/pinning/databases").statusCode()).isEqualTo(200);

    syncer.release(A);

    final JsonNode one = json(first.get(20, TimeUnit.SECONDS));
    final JsonNode two = json(second.get(20, TimeUnit.SECONDS));
    assertThat(one.has("coalesced")).isFalse();
    assertThat(two.get("coalesced").asBoolean()).isTrue();
    assertThat(two.get("dbAddress").asText()).isEqualTo(A);
    assertThat(syncer.calls(A)).isEqualTo(1);
  }

  @Test
  void sync_shouldAnswer504AndCoalesceRetry_whenSyncOutlivesTimeout() throws Exception {
    final String body = "{\"dbAddress\":\"" + A + "\"}";
    final CompletableFuture<HttpResponse<String>> first = sendAsync(post("/pinning/sync", body));
    await().atMost(Duration.ofSeconds(10)).until(() -> syncer.isRunning(A));

    timer.advance(TIMEOUT);

    final HttpResponse<String> timedOut = first.get(20, TimeUnit.SECONDS);
    assertError(timedOut, 504, "sync_timeout");
    final JsonNode queue = json(get("/pinning/stats")).get("syncQueue");
    assertThat(queue.get("timedOutSyncs").asInt()).isEqualTo(1);
    assertThat(queue.get("cooldownTopics").asInt()).isEqualTo(1);
    assertThat(queue.get("active").asInt()).isZero();
    assertThat(queue.get("queuedTopics").asInt()).isEqualTo(1);

    final CompletableFuture<HttpResponse<String>> retry = sendAsync(post("/pinning/sync", body));
    await().atMost(Duration.ofSeconds(10)).until(() -> !retry.isDone()
        && json(get("/pinning/stats")).get("syncQueue").get("queuedTopics").asInt() == 1);
    syncer.release(A);
    final JsonNode late = json(retry.get(20, TimeUnit.SECONDS));
    assertThat(late.get("ok").asBoolean()).isTrue();
    assertThat(late.get("coalesced").asBoolean()).isTrue();
    assertThat(syncer.calls(A)).isEqualTo(1);
  }

  @Test
  void sync_shouldAnswer500_whenSyncFails() throws Exception {
    syncer.fail(A);
    syncer.release(A);

    assertError(send(post("/pinning/sync", "{\"dbAddress\":\"" + A + "\"}")), 500,
        "sync_failed");

    final JsonNode stats = json(get("/pinning/stats"));
    assertThat(stats.get("failedSyncs").asInt()).isEqualTo(1);
    assertThat(stats.get("syncQueue").get("cooldownTopics").asInt()).isEqualTo(1);
    assertError(get("/pinning/databases?address=" + URLEncoder.encode(A, StandardCharsets.UTF_8)),
        404, "database_not_found");
  }

  @Test
  void stats_shouldReportCountersAndQueue_always() throws Exception {
    final JsonNode empty = json(get("/pinning/stats"));
    assertThat(fieldNames(empty)).containsExactly("totalPinned", "syncOperations",
        "failedSyncs", "pinnedMediaCids", "syncQueue", "timestamp");
    assertThat(fieldNames(empty.get("syncQueue"))).containsExactly("waiting", "active",
        "activeTopics", "queuedTopics", "cooldownTopics", "timedOutSyncs");
    assertThat(empty.get("timestamp").asText()).isEqualTo("2026-11-22T10:00:00.000Z");

    engine.enqueue(A, SyncTrigger.MESSAGE);
    await().atMost(Duration.ofSeconds(10)).until(() -> syncer.isRunning(A));
    engine.enqueue(B, SyncTrigger.MESSAGE);
    clock.advance(Duration.ofMillis(1500));
    final JsonNode busy = json(get("/pinning/stats"));
    final JsonNode queue = busy.get("syncQueue");
    assertThat(queue.get("waiting").asInt()).isEqualTo(1);
    assertThat(queue.get("active").asInt()).isEqualTo(1);
    assertThat(queue.get("activeTopics").get(0).get("topic").asText()).isEqualTo(A);
    assertThat(queue.get("activeTopics").get(0).get("runningMs").asLong()).isEqualTo(1500);
    assertThat(queue.get("queuedTopics").asInt()).isEqualTo(2);
    assertThat(busy.get("syncOperations").asInt()).isEqualTo(1);

    syncer.release(A);
    syncer.release(B);
    await().atMost(Duration.ofSeconds(10))
        .until(() -> json(get("/pinning/stats")).get("syncQueue").get("queuedTopics").asInt() == 0);
    // Pins reach the engine as they finish (replication's one "pinned" route), one per database.
    engine.mediaPinned("bafkmedia-1");
    engine.mediaPinned("bafkmedia-1");
    final JsonNode done = json(get("/pinning/stats"));
    assertThat(done.get("totalPinned").asInt()).isEqualTo(2);
    assertThat(done.get("syncOperations").asInt()).isEqualTo(2);
    assertThat(done.get("failedSyncs").asInt()).isZero();
    assertThat(done.get("pinnedMediaCids").size()).isEqualTo(1);
  }

  @Test
  void databases_shouldListSyncedAndFindOne_whenQueried() throws Exception {
    syncer.release(A);
    syncer.release(B);
    assertThat(send(post("/pinning/sync", "{\"dbAddress\":\"" + A + "\"}")).statusCode())
        .isEqualTo(200);
    clock.advance(Duration.ofSeconds(5));
    assertThat(send(post("/pinning/sync", "{\"dbAddress\":\"" + B + "\"}")).statusCode())
        .isEqualTo(200);

    final JsonNode all = json(get("/pinning/databases"));
    assertThat(fieldNames(all)).containsExactly("databases", "total");
    assertThat(all.get("total").asInt()).isEqualTo(2);
    assertThat(fieldNames(all.get("databases").get(0))).containsExactly("address",
        "lastSyncedAt");
    assertThat(all.get("databases").get(0).get("address").asText()).isEqualTo(B);
    assertThat(all.get("databases").get(0).get("lastSyncedAt").asText())
        .isEqualTo("2026-11-22T10:00:05.000Z");
    assertThat(all.get("databases").get(1).get("lastSyncedAt").asText())
        .isEqualTo("2026-11-22T10:00:00.000Z");

    final String encoded = URLEncoder.encode(A, StandardCharsets.UTF_8);
    for (final String query : List.of("?address=" + encoded, "?dbAddress=" + encoded,
        "?address=" + A)) {
      final JsonNode one = json(get("/pinning/databases" + query));
      assertThat(one.get("total").asInt()).isEqualTo(1);
      assertThat(one.get("databases").get(0).get("address").asText()).isEqualTo(A);
    }
    assertError(get("/pinning/databases?address="
        + URLEncoder.encode(SyncEngineTest.address("never"), StandardCharsets.UTF_8)), 404,
        "database_not_found");
    // Exact match only: with a trailing space it is no address at all.
    assertError(get("/pinning/databases?address=" + encoded + "%20"), 400, "invalid_address");
  }

  /**
   * A base32 address of a real manifest ({@code /orbitdb/bafy…}, well-formed, but not one JS
   * OrbitDB opens) and a garbage CID: both refused by the one rule, as on every address route.
   */
  private static List<String> refusedAddresses() {
    return List.of(SyncEngineTest.base32Address("http-a"),
        "/orbitdb/zdpuGarbage0OIl", "/orbitdb/" + "z".repeat(60));
  }

  @Test
  void sync_shouldAnswer400InvalidAddress_whenTheCidIsBase32OrGarbage() throws Exception {
    syncer.release(A);
    for (final String address : refusedAddresses()) {
      assertError(send(post("/pinning/sync", "{\"dbAddress\":\"" + address + "\"}")), 400,
          "invalid_address");
      assertError(send(post("/pinning/sync?dbAddress="
          + URLEncoder.encode(address, StandardCharsets.UTF_8), null)), 400, "invalid_address");
    }

    // Refused before the engine: not synced, not failed, no cooldown, nothing to resume.
    final JsonNode stats = json(get("/pinning/stats"));
    assertThat(stats.get("syncOperations").asInt()).isZero();
    assertThat(stats.get("failedSyncs").asInt()).isZero();
    assertThat(stats.get("syncQueue").get("cooldownTopics").asInt()).isZero();
    assertThat(stats.get("syncQueue").get("queuedTopics").asInt()).isZero();
    assertThat(engine.recentProblems()).isEmpty();
    assertThat(engine.history().all()).isEmpty();
  }

  @Test
  void databases_shouldAnswer400InvalidAddress_whenTheCidIsBase32OrGarbage() throws Exception {
    syncer.release(A);
    assertThat(send(post("/pinning/sync", "{\"dbAddress\":\"" + A + "\"}")).statusCode())
        .isEqualTo(200);

    // The base32 text of A's own manifest included: it is not A's address.
    for (final String address : refusedAddresses()) {
      final String encoded = URLEncoder.encode(address, StandardCharsets.UTF_8);
      assertError(get("/pinning/databases?address=" + encoded), 400, "invalid_address");
      assertError(get("/pinning/databases?dbAddress=" + encoded), 400, "invalid_address");
    }
    assertThat(json(get("/pinning/databases")).get("total").asInt()).isEqualTo(1);
  }

  @Test
  void routes_shouldAnswer405_whenMethodIsWrong() throws Exception {
    final HttpResponse<String> getSync = get("/pinning/sync");
    assertError(getSync, 405, "method_not_allowed");
    assertThat(getSync.headers().firstValue("allow")).hasValue("POST, OPTIONS");
    assertError(send(post("/pinning/stats", null)), 405, "method_not_allowed");
    assertThat(send(HttpRequest.newBuilder(uri("/pinning/sync"))
        .method("OPTIONS", HttpRequest.BodyPublishers.noBody())
        .header("Origin", "https://app.example")).statusCode()).isEqualTo(204);
    assertThat(Optional.of(get("/pinning/unknown").statusCode())).hasValue(404);
  }
}
