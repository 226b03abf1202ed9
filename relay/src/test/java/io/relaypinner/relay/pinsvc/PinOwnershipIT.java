package io.relaypinner.relay.pinsvc;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.relaypinner.ipfs.unixfs.UnixFsImporter;
import io.relaypinner.libp2p.crypto.Ed25519PrivateKey;
import io.relaypinner.libp2p.crypto.PrivateKey;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.multiformats.Multibase;
import io.relaypinner.orbitdb.OrbitDbAddress;
import io.relaypinner.relay.RelayNode;
import io.relaypinner.relay.config.GatewayMode;
import io.relaypinner.relay.config.RelayConfig;
import io.relaypinner.relay.config.StorageLimits;
import io.relaypinner.relay.identity.NodeIdentity;
import io.relaypinner.relay.storage.PinHolders;
import io.relaypinner.relay.storage.StorageGc;
import io.relaypinner.relay.testing.WriterPeer;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.concurrent.Callable;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The attack on pin ownership (issue 36), in process on a real node: a tenant of the Pinning
 * Service API pins a media CID that a replicated database also names, in another spelling of the
 * CID ({@code BAFY…}), then deletes its request; GC runs. Before pins had holders the delete
 * unpinned the media (one key per CID, "still wanted" compared the text as sent) and GC deleted
 * it while {@code /pinning/stats} still listed it as pinned. Now the media stays and is served,
 * and the stats agree; the reverse holds too: a CID held only by the deleted request (sent as
 * base58btc {@code z…}) is released and GC removes it.
 *
 * <p>GC's grace period is zero and the gateway serves pinned content only (no network fallback
 * that could fetch a deleted block again), so a released block is gone after one GC run.
 */
class PinOwnershipIT {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String TENANT = "tenant-token";
  private static final Duration WAIT = Duration.ofSeconds(30);

  private final HttpClient client = HttpClient.newBuilder()
      .version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(5)).build();
  @TempDir
  Path dataDir;
  private RelayNode node;

  private RelayNode start() {
    final byte[] seed = new byte[32];
    Arrays.fill(seed, (byte) 36);
    final PrivateKey key = Ed25519PrivateKey.fromSeed(seed);
    final NodeIdentity identity = new NodeIdentity(key, key.publicKey().peerId(),
        NodeIdentity.servingZone(key.publicKey().peerId(), "libp2p.direct"),
        NodeIdentity.Source.ENVIRONMENT);
    node = new RelayNode(RelayConfig.builder().dataDir(dataDir).metricsHost("127.0.0.1")
        .metricsPort(0).listenIpv4("127.0.0.1").tcpPort(0).wsPort(0).quicPort(0).ipv6Disabled(true)
        .pinningServiceTokens(List.of(TENANT)).gatewayMode(GatewayMode.PINNED_ONLY)
        .storageLimits(new StorageLimits(0, StorageLimits.DEFAULT.gatewayCacheMaxBytes(),
            Duration.ZERO, Duration.ZERO))
        .build(), identity, new PrometheusRegistry(), Clock.systemUTC());
    node.start();
    return node;
  }

  @AfterEach
  void stop() {
    if (node != null) {
      node.close();
    }
  }

  @Test
  void deletedRequest_shouldNotTakeAReplicatedDatabasesMedia_andGcShouldKeepServingIt()
      throws Exception {
    start();
    final byte[] file;
    final Cid media;
    final String address;
    try (WriterPeer writer = new WriterPeer("pin-ownership")) {
      writer.write(1, 150_000, false);
      media = writer.media().get(0);
      file = writer.mediaBytes(0);
      address = writer.address().toString();
      writer.dial(node.network().host().listenAddresses().stream()
          .filter(a -> !a.toString().endsWith("/ws")).findFirst().orElseThrow()
          .withPeerId(node.identity().peerId()));

      // The tenant pins the media first, spelled as uppercase base32 (fetched from the writer).
      final String spelled = media.toString().toUpperCase(Locale.ROOT);
      assertThat(spelled).startsWith("BAFY");
      final String request = pinRequest(spelled);

      // Then the relay replicates the writer's database, which names the same media.
      writer.subscribe();
      until(() -> node.replication().topics().followed().contains(address));
      client.sendAsync(request("POST", "/pinning/sync", null,
          "{\"dbAddress\":\"" + address + "\"}"), HttpResponse.BodyHandlers.discarding());
      until(() -> {
        writer.publishHead();
        return pinnedMedia().contains(media.toString())
            && node.storage().pins().isHeldBy(media, PinHolders.replication(writer.address()));
      });

      // The tenant deletes its request. The writer goes away: nothing can fetch the media again.
      assertThat(send("DELETE", "/pins/" + request, TENANT, null).statusCode()).isEqualTo(202);
    }

    assertThat(node.storage().gc().runOnce()).isEqualTo(StorageGc.Outcome.DONE);

    // The media stays pinned (by the database) and is served; the stats agree.
    assertThat(node.storage().pins().holders(media))
        .containsExactly(PinHolders.replication(OrbitDbAddress.parse(address)));
    final HttpResponse<byte[]> served = get("/ipfs/" + media);
    assertThat(served.statusCode()).isEqualTo(200);
    assertThat(served.body()).isEqualTo(file);
    assertThat(pinnedMedia()).contains(media.toString());
    assertThat(metric("relay_pinning_service_events_total{event=\"still_held\"}"))
        .isEqualTo(1.0);
  }

  @Test
  void deletedRequest_shouldReleaseWhatOnlyItHeld_andGcShouldRemoveIt() throws Exception {
    start();
    final byte[] data = new byte[300_000];
    new Random(36).nextBytes(data);
    final Cid cid = new UnixFsImporter(node.storage().blockstore(), UnixFsImporter.Options.HELIA)
        .importBytes(data);
    final String spelled = cid.toV1().toString(Multibase.Base.BASE58BTC);
    assertThat(spelled).startsWith("z");

    final String request = pinRequest(spelled);
    assertThat(node.storage().pins().isPinned(cid)).isTrue();
    assertThat(get("/ipfs/" + cid).statusCode()).isEqualTo(200);
    assertThat(send("DELETE", "/pins/" + request, TENANT, null).statusCode()).isEqualTo(202);

    assertThat(node.storage().pins().isPinned(cid)).isFalse();
    assertThat(node.storage().gc().runOnce()).isEqualTo(StorageGc.Outcome.DONE);
    assertThat(node.storage().blockstore().has(cid)).isFalse();
    assertThat(get("/ipfs/" + cid).statusCode()).isEqualTo(404);
    assertThat(metric("relay_pinning_service_events_total{event=\"released\"}"))
        .isEqualTo(1.0);
    assertThat(metric("relay_pinning_service_events_total{event=\"still_held\"}"))
        .isEqualTo(0.0);
  }

  /** Posts a pin request for {@code cid} (as spelled) and waits until it is pinned; its id. */
  private String pinRequest(final String cid) throws Exception {
    final HttpResponse<String> added = send("POST", "/pins", TENANT, "{\"cid\":\"" + cid + "\"}");
    assertThat(added.statusCode()).isEqualTo(202);
    final String id = JSON.readTree(added.body()).get("requestid").asText();
    until(() -> JSON.readTree(send("GET", "/pins/" + id, TENANT, null).body()).get("status")
        .asText().equals("pinned"));
    return id;
  }

  private List<String> pinnedMedia() throws Exception {
    final JsonNode stats = JSON.readTree(send("GET", "/pinning/stats", null, null).body());
    return JSON.convertValue(stats.get("pinnedMediaCids"),
        JSON.getTypeFactory().constructCollectionType(List.class, String.class));
  }

  private double metric(final String series) throws Exception {
    final String text = new String(get("/metrics").body(), StandardCharsets.UTF_8);
    for (final String line : text.split("\n")) {
      if (line.startsWith(series + " ")) {
        return Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
      }
    }
    throw new AssertionError("no metric " + series);
  }

  private static void until(final Callable<Boolean> condition) {
    Awaitility.await().atMost(WAIT).pollInterval(Duration.ofMillis(200)).ignoreExceptions()
        .until(condition);
  }

  private HttpResponse<String> send(final String method, final String path, final String token,
      final String body) throws Exception {
    return client.send(request(method, path, token, body), HttpResponse.BodyHandlers.ofString());
  }

  private HttpRequest request(final String method, final String path, final String token,
      final String body) {
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
    return request.build();
  }

  private HttpResponse<byte[]> get(final String path) throws Exception {
    return client.send(HttpRequest.newBuilder(
        URI.create("http://127.0.0.1:" + node.http().port().getAsInt() + path))
        .timeout(Duration.ofSeconds(20)).build(), HttpResponse.BodyHandlers.ofByteArray());
  }
}
