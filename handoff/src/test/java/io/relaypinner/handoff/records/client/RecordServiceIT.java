package io.relaypinner.handoff.records.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.relaypinner.handoff.records.AlephMessage;
import io.relaypinner.handoff.records.ErrorCodes;
import io.relaypinner.handoff.records.PostPage;
import io.relaypinner.handoff.records.PostQuery;
import io.relaypinner.handoff.records.PostRecord;
import io.relaypinner.handoff.records.PublishResult;
import io.relaypinner.handoff.records.RecordJson;
import io.relaypinner.handoff.records.RecordRejectedException;
import io.relaypinner.handoff.records.RecordSigner;
import io.relaypinner.handoff.records.RecordStoreException;
import io.relaypinner.handoff.records.TickingClock;
import io.relaypinner.handoff.records.service.RecordServer;
import io.relaypinner.handoff.records.service.RecordServiceConfig;
import io.relaypinner.handoff.wallet.EthPrivateKey;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The embedded record service on loopback with its MVStore file, driven through
 * {@link HttpRecordStore} (the client the guest and the deployer use) and raw HTTP for the error
 * cases a client never produces.
 */
class RecordServiceIT {
  private static final String KEY = "vm-bootstrap-config";
  private static final String ACK_TYPE = "vm-bootstrap-config-status";

  @TempDir
  Path dataDir;

  private final TickingClock clock = new TickingClock(1_784_808_000_000L);
  private final RecordSigner owner =
      new RecordSigner(EthPrivateKey.generate(new SecureRandom()), clock);
  private final RecordSigner guest =
      new RecordSigner(EthPrivateKey.generate(new SecureRandom()), clock);
  private final HttpClient raw = HttpClient.newBuilder()
      .connectTimeout(Duration.ofSeconds(5)).build();
  private final RecordServiceConfig config = RecordServiceConfig.builder().port(0)
      .maxBodyBytes(64 * 1024).maxItemContentBytes(16 * 1024).idleTimeout(Duration.ofSeconds(1))
      .build();
  private RecordServer server;
  private HttpRecordStore client;

  @BeforeEach
  void start() {
    server = RecordServer.open(config, dataDir);
    client = new HttpRecordStore(URI.create("http://127.0.0.1:" + server.start().getPort()));
  }

  @AfterEach
  void stop() {
    server.close();
  }

  private static ObjectNode entry(final String token, final String status) {
    final ObjectNode entries = JsonNodeFactory.instance.objectNode();
    entries.putObject(token).put("deploymentToken", token).put("status", status);
    return entries;
  }

  private HttpResponse<String> post(final String path, final String body) throws Exception {
    return raw.send(HttpRequest.newBuilder(client.base().resolve(path))
        .timeout(Duration.ofSeconds(10))
        .POST(HttpRequest.BodyPublishers.ofString(body)).build(),
        HttpResponse.BodyHandlers.ofString());
  }

  private HttpResponse<String> get(final String path) throws Exception {
    return raw.send(HttpRequest.newBuilder(client.base().resolve(path))
        .timeout(Duration.ofSeconds(10)).GET().build(), HttpResponse.BodyHandlers.ofString());
  }

  private static JsonNode json(final HttpResponse<String> response) throws Exception {
    return RecordJson.MAPPER.readTree(response.body());
  }

  private static RecordRejectedException rejection(final Runnable action) {
    try {
      action.run();
    } catch (final RecordRejectedException e) {
      return e;
    }
    throw new AssertionError("accepted");
  }

  @Test
  void aggregates_shouldMergeAndDelete_overHttp() throws Exception {
    final PublishResult result = client.publish(owner.aggregate(KEY, entry("t1", "pending"), "c"));
    assertThat(result.processed()).isTrue();
    client.publish(owner.aggregate(KEY, entry("t2", "pending"), "c"));
    assertThat(client.aggregateEntry(owner.address(), KEY, "t1").orElseThrow()
        .path("status").asText()).isEqualTo("pending");

    client.publish(owner.deleteAggregateEntries(KEY, List.of("t1"), "c"));
    assertThat(client.aggregateEntry(owner.address(), KEY, "t1")).isEmpty();
    assertThat(client.aggregateEntry(owner.address(), KEY, "t2")).isPresent();

    final HttpResponse<String> response = get("/api/v0/aggregates/"
        + owner.address().toLowerHex() + ".json?keys=" + KEY);
    assertThat(response.statusCode()).isEqualTo(200);
    final JsonNode body = json(response);
    assertThat(body.path("address").asText()).isEqualTo(owner.address().toLowerHex());
    assertThat(body.path("data").path(KEY).has("t1")).isFalse();

    final HttpResponse<String> none = get("/api/v0/aggregates/" + guest.address() + ".json");
    assertThat(none.statusCode()).isEqualTo(404);
    assertThat(json(none).path("code").asText()).isEqualTo(ErrorCodes.AGGREGATE_NOT_FOUND);
    assertThat(client.aggregates(guest.address(), List.of())).isEmpty();
    assertThat(get("/api/v0/aggregates/0x1234.json").statusCode()).isEqualTo(400);
  }

  @Test
  void posts_shouldBeFilteredByTypeRefAddressAndChannel_overHttp() throws Exception {
    final JsonNode ack = JsonNodeFactory.instance.objectNode().put("deploymentToken", "t1")
        .put("status", "applied");
    final AlephMessage mine = guest.post(ACK_TYPE, KEY, ack, "simple-todo");
    client.publish(mine);
    client.publish(guest.post("vm-bootstrap-config-signal", KEY, ack, "simple-todo"));
    client.publish(guest.post(ACK_TYPE, "other-ref", ack, "simple-todo"));
    client.publish(guest.post(ACK_TYPE, KEY, ack, "TEST"));
    client.publish(owner.post(ACK_TYPE, KEY, ack, "simple-todo"));

    final PostPage page = client.posts(PostQuery.builder().types(ACK_TYPE).refs(KEY)
        .channels("simple-todo").addresses(guest.address().toString()).build());
    assertThat(page.posts()).extracting(PostRecord::itemHash).containsExactly(mine.itemHash());
    final PostRecord record = page.posts().get(0);
    assertThat(record.content()).isEqualTo(ack);
    assertThat(record.type()).isEqualTo(ACK_TYPE);
    assertThat(record.ref()).isEqualTo(KEY);
    assertThat(record.toMessage()).isEqualTo(mine);

    assertThat(client.posts(PostQuery.builder().types(ACK_TYPE).refs(KEY).build()).total())
        .isEqualTo(3);
    final JsonNode body = json(get("/api/v0/posts.json?refs=" + KEY + "&types=" + ACK_TYPE
        + "&pagination=100&page=1&sortOrder=-1"));
    assertThat(body.path("pagination_item").asText()).isEqualTo("posts");
    assertThat(body.path("pagination_total").asInt()).isEqualTo(3);
    final JsonNode first = body.path("posts").get(0);
    for (final String field : List.of("chain", "item_hash", "sender", "type", "channel",
        "content", "item_content", "signature", "time", "address", "ref", "original_item_hash")) {
      assertThat(first.has(field)).as(field).isTrue();
    }
    assertThat(get("/api/v0/posts.json?page=0").statusCode()).isEqualTo(400);
  }

  @Test
  void forget_shouldOnlyBeAllowedForTheSender_andAnotherKeyGets403() throws Exception {
    final AlephMessage ack = guest.post(ACK_TYPE, KEY,
        JsonNodeFactory.instance.objectNode().put("status", "applied"), "simple-todo");
    client.publish(ack);
    final AlephMessage stranger = owner.forget(List.of(ack.itemHash()), List.of(), "x", null);
    final RecordRejectedException e = rejection(() -> client.publish(stranger));
    assertThat(e.httpStatus()).isEqualTo(403);
    assertThat(e.code()).isEqualTo(ErrorCodes.FORBIDDEN);
    final HttpResponse<String> response = post("/api/v0/messages",
        "{\"sync\":true,\"message\":" + stranger.toJson() + "}");
    assertThat(response.statusCode()).isEqualTo(403);
    final JsonNode body = json(response);
    assertThat(body.path("ok").asBoolean(true)).isFalse();
    assertThat(body.path("message_status").asText()).isEqualTo("rejected");
    assertThat(client.posts(PostQuery.builder().build()).posts()).hasSize(1);

    client.publish(guest.forget(List.of(ack.itemHash()), List.of(), "done", null));
    assertThat(client.posts(PostQuery.builder().build()).posts()).isEmpty();
    assertThat(rejection(() -> client.publish(ack)).code())
        .isEqualTo(ErrorCodes.MESSAGE_FORGOTTEN);
  }

  @Test
  void publish_shouldRejectForgedSignaturesAndWrongHashes() {
    final AlephMessage real = owner.aggregate(KEY, entry("t1", "pending"), null);
    final AlephMessage forged = new AlephMessage(real.sender(), real.chain(), real.type(),
        real.itemType(), real.itemContent(), real.itemHash(), real.time(), real.channel(),
        guest.post("x", null, JsonNodeFactory.instance.nullNode(), null).signature());
    final RecordRejectedException forgedRejection = rejection(() -> client.publish(forged));
    assertThat(forgedRejection.httpStatus()).isEqualTo(422);
    assertThat(forgedRejection.code()).isEqualTo(ErrorCodes.INVALID_SIGNATURE);

    final AlephMessage wrongHash = new AlephMessage(real.sender(), real.chain(), real.type(),
        real.itemType(), real.itemContent().replace("pending", "applied"), real.itemHash(),
        real.time(), real.channel(), real.signature());
    assertThat(rejection(() -> client.publish(wrongHash)).code())
        .isEqualTo(ErrorCodes.ITEM_HASH_MISMATCH);
    final AlephMessage unsigned = new AlephMessage(real.sender(), real.chain(), real.type(),
        real.itemType(), real.itemContent(), real.itemHash(), real.time(), real.channel(), null);
    assertThat(rejection(() -> client.publish(unsigned)).code())
        .isEqualTo(ErrorCodes.INVALID_SIGNATURE);
    assertThat(client.aggregates(owner.address(), List.of())).isEmpty();
  }

  @Test
  void restart_shouldKeepEverything() {
    client.publish(owner.aggregate(KEY, entry("t1", "pending"), null));
    client.publish(owner.aggregate(KEY, entry("t2", "pending"), null));
    client.publish(owner.deleteAggregateEntries(KEY, List.of("t2"), null));
    final AlephMessage ack = guest.post(ACK_TYPE, KEY, JsonNodeFactory.instance.objectNode(),
        null);
    final AlephMessage gone = guest.post(ACK_TYPE, KEY,
        JsonNodeFactory.instance.objectNode().put("n", 2), null);
    client.publish(ack);
    client.publish(gone);
    client.publish(guest.forget(List.of(gone.itemHash()), List.of(), null, null));
    server.close();

    server = RecordServer.open(config, dataDir);
    client = new HttpRecordStore(URI.create("http://127.0.0.1:" + server.start().getPort()));
    final JsonNode aggregate = client.aggregate(owner.address(), KEY).orElseThrow();
    assertThat(aggregate.has("t1")).isTrue();
    assertThat(aggregate.has("t2")).isFalse();
    assertThat(client.posts(PostQuery.builder().build()).posts())
        .extracting(PostRecord::itemHash).containsExactly(ack.itemHash());
    assertThat(rejection(() -> client.publish(gone)).httpStatus()).isEqualTo(410);
  }

  @Test
  void secondServer_shouldNotOpenALockedDataDirectory() {
    assertThatThrownBy(() -> RecordServer.open(config, dataDir))
        .isInstanceOf(RecordStoreException.class).hasMessageContaining("locked");
  }

  @Test
  void bodyOverTheLimit_shouldGet413() throws Exception {
    final HttpResponse<String> response = post("/api/v0/messages",
        "{\"sync\":true,\"message\":\"" + "x".repeat(70 * 1024) + "\"}");
    assertThat(response.statusCode()).isEqualTo(413);
    assertThat(json(response).path("code").asText()).isEqualTo(ErrorCodes.PAYLOAD_TOO_LARGE);

    final ObjectNode big = JsonNodeFactory.instance.objectNode();
    big.putObject("t").put("padding", "y".repeat(20 * 1024));
    final RecordRejectedException e =
        rejection(() -> client.publish(owner.aggregate(KEY, big, null)));
    assertThat(e.httpStatus()).isEqualTo(413);
    assertThat(e.code()).isEqualTo(ErrorCodes.PAYLOAD_TOO_LARGE);
    // The service still answers after refusing.
    assertThat(get("/health").statusCode()).isEqualTo(200);
  }

  @Test
  void malformedRequests_shouldGetJsonErrors() throws Exception {
    final HttpResponse<String> notJson = post("/api/v0/messages", "{\"sync\":true,");
    assertThat(notJson.statusCode()).isEqualTo(400);
    assertThat(json(notJson).path("code").asText()).isEqualTo(ErrorCodes.INVALID_JSON);
    final HttpResponse<String> duplicate = post("/api/v0/messages",
        "{\"message\":{},\"message\":{}}");
    assertThat(duplicate.statusCode()).isEqualTo(400);
    final HttpResponse<String> noMessage = post("/api/v0/messages", "{\"sync\":true}");
    assertThat(noMessage.statusCode()).isEqualTo(400);
    assertThat(json(noMessage).path("code").asText()).isEqualTo(ErrorCodes.INVALID_REQUEST);
    final HttpResponse<String> badMessage = post("/api/v0/messages",
        "{\"message\":{\"sender\":1}}");
    assertThat(badMessage.statusCode()).isEqualTo(422);
    assertThat(json(badMessage).path("code").asText()).isEqualTo(ErrorCodes.INVALID_MESSAGE);
    final HttpResponse<String> store = post("/api/v0/messages",
        "{\"message\":{\"sender\":\"x\",\"chain\":\"ETH\",\"type\":\"STORE\"}}");
    assertThat(json(store).path("code").asText()).isEqualTo(ErrorCodes.UNSUPPORTED_TYPE);
    assertThat(get("/api/v0/nothing").statusCode()).isEqualTo(404);
    assertThat(get("/api/v0/messages").statusCode()).isEqualTo(405);
    assertThat(server.rejectedCount()).isEqualTo(5);
  }

  @Test
  void idleConnection_shouldBeClosedByTheService() throws Exception {
    try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), server.port())) {
      socket.setSoTimeout(30_000);
      final InputStream in = socket.getInputStream();
      // Blocks until the service closes the silent connection (idle timeout 1 s).
      assertThat(in.read()).isEqualTo(-1);
    }
  }

  @Test
  void client_shouldTimeOut_whenTheServerNeverAnswers() throws Exception {
    try (ServerSocket silent = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      final HttpRecordStore slow = new HttpRecordStore(
          URI.create("http://127.0.0.1:" + silent.getLocalPort()), Duration.ofMillis(500),
          HttpRecordStore.DEFAULT_MAX_RESPONSE_BYTES);
      assertThatThrownBy(() -> slow.posts(PostQuery.builder().build()))
          .isInstanceOf(RecordStoreException.class).hasMessageContaining("timed out");
    }
  }

  @Test
  void client_shouldRefuseResponsesOverItsLimit() {
    for (int i = 0; i < 5; i++) {
      client.publish(guest.post(ACK_TYPE, KEY,
          JsonNodeFactory.instance.objectNode().put("padding", "z".repeat(1000)), null));
    }
    final HttpRecordStore small = new HttpRecordStore(client.base(), Duration.ofSeconds(5), 2000);
    assertThatThrownBy(() -> small.posts(PostQuery.builder().build()))
        .isInstanceOf(RecordStoreException.class).hasMessageContaining("over the limit");
    await().atMost(Duration.ofSeconds(10)).untilAsserted(() ->
        assertThat(client.posts(PostQuery.builder().build()).posts()).hasSize(5));
  }

  @Test
  void garbageAndTruncatedRequests_shouldCloseOnlyThatConnection() throws Exception {
    final byte[] garbage = new byte[4096];
    new SecureRandom().nextBytes(garbage);
    garbage[0] = 'X';
    try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), server.port())) {
      socket.setSoTimeout(30_000);
      socket.getOutputStream().write(garbage);
      socket.getOutputStream().flush();
      // A 400 (or a plain close) and then end of stream: the connection is not reused.
      final byte[] answer = socket.getInputStream().readAllBytes();
      final String text = new String(answer, StandardCharsets.ISO_8859_1);
      assertThat(text.isEmpty() || text.startsWith("HTTP/1.1 400")).as(text).isTrue();
    }
    try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), server.port())) {
      socket.setSoTimeout(30_000);
      final String header = "X-Big: " + "a".repeat(20 * 1024) + "\r\n";
      socket.getOutputStream().write(("GET /health HTTP/1.1\r\nHost: x\r\n" + header + "\r\n")
          .getBytes(StandardCharsets.US_ASCII));
      final String text = new String(socket.getInputStream().readAllBytes(),
          StandardCharsets.ISO_8859_1);
      assertThat(text).startsWith("HTTP/1.1 400");
    }
    try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), server.port())) {
      socket.setSoTimeout(30_000);
      // Promises 1000 bytes, sends 10, then goes quiet: the idle timeout closes it.
      socket.getOutputStream().write(("POST /api/v0/messages HTTP/1.1\r\nHost: x\r\n"
          + "Content-Length: 1000\r\n\r\n{\"sync\":tr").getBytes(
              StandardCharsets.US_ASCII));
      assertThat(socket.getInputStream().read()).isEqualTo(-1);
    }
    assertThat(get("/health").statusCode()).isEqualTo(200);
  }

  @Test
  void concurrentPublishers_shouldAllBeStored() throws Exception {
    final List<Thread> threads = new ArrayList<>();
    final List<Throwable> failures = Collections.synchronizedList(
        new ArrayList<>());
    for (int t = 0; t < 4; t++) {
      final RecordSigner signer = new RecordSigner(EthPrivateKey.generate(new SecureRandom()),
          new TickingClock(1_784_808_000_000L));
      final Thread thread = new Thread(() -> {
        try {
          for (int i = 0; i < 10; i++) {
            client.publish(signer.aggregate(KEY, entry("t" + i, "pending"), null));
            client.publish(signer.post(ACK_TYPE, KEY,
                JsonNodeFactory.instance.objectNode().put("i", i), null));
          }
        } catch (final RuntimeException e) {
          failures.add(e);
        }
      });
      threads.add(thread);
      thread.start();
    }
    for (final Thread thread : threads) {
      thread.join(60_000);
    }
    assertThat(failures).isEmpty();
    assertThat(client.posts(PostQuery.builder().pagination(200).build()).total()).isEqualTo(40);
    assertThat(json(get("/health")).path("messages").asLong()).isEqualTo(80);
  }

  @Test
  void slowRequest_shouldBeClosedAtTheRequestDeadline_evenBeforeTheIdleTimeout() throws Exception {
    final RecordServiceConfig slowConfig = config.toBuilder()
        .idleTimeout(Duration.ofMinutes(10)).requestTimeout(Duration.ofMillis(500)).build();
    try (RecordServer slow = RecordServer.open(slowConfig, dataDir.resolve("slow"));
        Socket socket = new Socket(InetAddress.getLoopbackAddress(), slow.start().getPort())) {
      // Without the deadline only the 10-minute idle timeout would end this: the read would
      // time out first and fail the test.
      socket.setSoTimeout(30_000);
      socket.getOutputStream().write("GET /health HTTP/1.1\r\nHost: x\r\nX-Slow: "
          .getBytes(StandardCharsets.US_ASCII));
      assertThat(socket.getInputStream().read()).isEqualTo(-1);
      assertThat(slow.rejectedCount()).isPositive();
    }
  }
}
