package io.relaypinner.relay;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.relaypinner.ipfs.unixfs.UnixFsImporter;
import io.relaypinner.libp2p.crypto.Ed25519PrivateKey;
import io.relaypinner.libp2p.crypto.PrivateKey;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.relay.config.RelayConfig;
import io.relaypinner.relay.identity.NodeIdentity;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The IPFS Pinning Service API v1 on {@code /pins} through a real node. */
class PinningServiceIT {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String ALICE = "alice-token";
  private static final String BOB = "bob-token";

  private final HttpClient client = HttpClient.newBuilder()
      .version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(5)).build();
  @TempDir
  Path dataDir;
  private RelayNode node;

  private RelayNode start(final List<String> tokens) {
    final byte[] seed = new byte[32];
    Arrays.fill(seed, (byte) 5);
    final PrivateKey key = Ed25519PrivateKey.fromSeed(seed);
    final NodeIdentity identity = new NodeIdentity(key, key.publicKey().peerId(),
        NodeIdentity.servingZone(key.publicKey().peerId(), "libp2p.direct"),
        NodeIdentity.Source.ENVIRONMENT);
    node = new RelayNode(RelayConfig.builder().dataDir(dataDir).metricsHost("127.0.0.1")
        .metricsPort(0).listenIpv4("127.0.0.1").tcpPort(0).wsPort(0).quicPort(0).ipv6Disabled(true)
        .pinningServiceTokens(tokens).build(), identity, new PrometheusRegistry(),
        Clock.systemUTC());
    node.start();
    return node;
  }

  @AfterEach
  void stop() {
    if (node != null) {
      node.close();
    }
  }

  private Cid content(final int seed) {
    final byte[] data = new byte[300_000];
    new Random(seed).nextBytes(data);
    return new UnixFsImporter(node.storage().blockstore(), UnixFsImporter.Options.HELIA)
        .importBytes(data);
  }

  private HttpResponse<String> send(final String method, final String path, final String token,
      final String body) throws IOException, InterruptedException {
    final HttpRequest.Builder request = HttpRequest.newBuilder(
        URI.create("http://127.0.0.1:" + node.http().port().getAsInt() + path))
        .timeout(Duration.ofSeconds(20)).method(method, body == null
            ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
    if (token != null) {
      request.header("Authorization", "Bearer " + token);
    }
    if (body != null) {
      request.header("Content-Type", "application/json");
    }
    return client.send(request.build(), HttpResponse.BodyHandlers.ofString());
  }

  private static JsonNode json(final HttpResponse<String> response) throws IOException {
    return JSON.readTree(response.body());
  }

  private static void assertFailure(final HttpResponse<String> response, final int status,
      final String reason) throws IOException {
    assertThat(response.statusCode()).isEqualTo(status);
    assertThat(json(response).get("error").get("reason").asText()).isEqualTo(reason);
  }

  private String pinned(final String token, final String id) throws Exception {
    await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(50)).until(() ->
        json(send("GET", "/pins/" + id, token, null)).get("status").asText().equals("pinned"));
    return id;
  }

  @Test
  void withoutTokensConfigured_everythingIs401() throws Exception {
    start(List.of());
    assertFailure(send("GET", "/pins", "anything", null), 401, "UNAUTHORIZED");
    assertFailure(send("POST", "/pins", null, "{\"cid\":\"x\"}"), 401, "UNAUTHORIZED");
  }

  @Test
  void pinListFilterAndRemove_perTokenVisibility_andSpecErrors() throws Exception {
    start(List.of(ALICE, BOB));
    final Cid cid = content(1);
    assertFailure(send("GET", "/pins", null, null), 401, "UNAUTHORIZED");
    assertFailure(send("GET", "/pins", "wrong", null), 401, "UNAUTHORIZED");

    final HttpResponse<String> added = send("POST", "/pins", ALICE,
        "{\"cid\":\"" + cid + "\",\"name\":\"Holiday Photos\",\"meta\":{\"app\":\"demo\"}}");
    assertThat(added.statusCode()).isEqualTo(202);
    final JsonNode status = json(added);
    assertThat(status.get("status").asText()).isIn("queued", "pinning", "pinned");
    assertThat(status.get("pin").get("cid").asText()).isEqualTo(cid.toString());
    assertThat(status.get("delegates").size()).isPositive();
    assertThat(status.get("created").asText()).isNotEmpty();
    final String id = pinned(ALICE, status.get("requestid").asText());
    assertThat(node.storage().pins().isPinned(cid)).isTrue();

    final JsonNode list = json(send("GET", "/pins", ALICE, null));
    assertThat(list.get("count").asInt()).isEqualTo(1);
    assertThat(list.get("results").get(0).get("requestid").asText()).isEqualTo(id);
    assertThat(json(send("GET", "/pins?status=queued,failed", ALICE, null)).get("count")
        .asInt()).isZero();
    assertThat(json(send("GET", "/pins?name=photos&match=ipartial", ALICE, null)).get("count")
        .asInt()).isEqualTo(1);
    assertThat(json(send("GET", "/pins?name=photos&match=exact", ALICE, null)).get("count")
        .asInt()).isZero();
    assertThat(json(send("GET", "/pins?cid=" + cid, ALICE, null)).get("count").asInt())
        .isEqualTo(1);
    assertThat(json(send("GET", "/pins?meta=" + URLEncoder.encode("{\"app\":\"demo\"}",
        StandardCharsets.UTF_8), ALICE, null)).get("count").asInt()).isEqualTo(1);
    assertThat(json(send("GET", "/pins?before=2000-01-01T00:00:00Z", ALICE, null))
        .get("count").asInt()).isZero();

    // Bob sees nothing of Alice's, and cannot remove or replace it.
    assertThat(json(send("GET", "/pins", BOB, null)).get("count").asInt()).isZero();
    assertFailure(send("GET", "/pins/" + id, BOB, null), 404, "NOT_FOUND");
    assertFailure(send("DELETE", "/pins/" + id, BOB, null), 404, "NOT_FOUND");
    assertFailure(send("POST", "/pins/" + id, BOB, "{\"cid\":\"" + cid + "\"}"), 404,
        "NOT_FOUND");
    assertThat(node.storage().pins().isPinned(cid)).isTrue();

    // Bad input: the spec's 400, nothing stored.
    assertFailure(send("POST", "/pins", ALICE, "{\"cid\":\"not-a-cid\"}"), 400, "BAD_REQUEST");
    assertFailure(send("POST", "/pins", ALICE, "[1,2"), 400, "BAD_REQUEST");
    assertFailure(send("POST", "/pins", ALICE, "{\"cid\":\"" + cid
        + "\",\"origins\":[\"nope\"]}"), 400, "BAD_REQUEST");
    assertFailure(send("GET", "/pins?limit=0", ALICE, null), 400, "BAD_REQUEST");
    assertFailure(send("GET", "/pins?status=done", ALICE, null), 400, "BAD_REQUEST");
    assertFailure(send("GET", "/pins?cid=zzz", ALICE, null), 400, "BAD_REQUEST");
    assertThat(json(send("GET", "/pins?status=queued,pinning,pinned,failed", ALICE, null))
        .get("count").asInt()).isEqualTo(1);

    // Replace: a new request id, the old one gone.
    final Cid other = content(2);
    final HttpResponse<String> replaced = send("POST", "/pins/" + id, ALICE,
        "{\"cid\":\"" + other + "\"}");
    assertThat(replaced.statusCode()).isEqualTo(202);
    final String newId = pinned(ALICE, json(replaced).get("requestid").asText());
    assertThat(newId).isNotEqualTo(id);
    assertFailure(send("GET", "/pins/" + id, ALICE, null), 404, "NOT_FOUND");
    assertThat(node.storage().pins().isPinned(cid)).isFalse();

    assertThat(send("DELETE", "/pins/" + newId, ALICE, null).statusCode()).isEqualTo(202);
    assertThat(node.storage().pins().isPinned(other)).isFalse();
    assertThat(json(send("GET", "/pins", ALICE, null)).get("count").asInt()).isZero();
  }

  @Test
  void requestsSurviveARestart() throws Exception {
    start(List.of(ALICE));
    final Cid cid = content(3);
    final String id = pinned(ALICE, json(send("POST", "/pins", ALICE,
        "{\"cid\":\"" + cid + "\"}")).get("requestid").asText());
    node.close();
    start(List.of(ALICE));
    final JsonNode status = json(send("GET", "/pins/" + id, ALICE, null));
    assertThat(status.get("status").asText()).isEqualTo("pinned");
    assertThat(status.get("pin").get("cid").asText()).isEqualTo(cid.toString());
    assertThat(send("GET", "/metrics", null, null).body())
        .contains("relay_pinning_service_requests{status=\"pinned\"} 1.0");
  }
}
