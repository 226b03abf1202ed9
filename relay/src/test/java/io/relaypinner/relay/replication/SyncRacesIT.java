package io.relaypinner.relay.replication;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.relaypinner.libp2p.crypto.KeyType;
import io.relaypinner.libp2p.crypto.Keys;
import io.relaypinner.libp2p.crypto.PrivateKey;
import io.relaypinner.multiformats.Multiaddr;
import io.relaypinner.relay.RelayNode;
import io.relaypinner.relay.config.RelayConfig;
import io.relaypinner.relay.identity.NodeIdentity;
import io.relaypinner.relay.testing.WriterPeer;
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
import java.util.Comparator;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Replication races seen from outside (issue 37), made deterministic on one real relay (shared
 * by the class) and Java writers ({@link WriterPeer}): an explicit sync sent while the writer is
 * connected but its identify has not been processed by the relay yet (on a busy machine, right
 * after a writer's last write) fetches the manifest from it instead of failing at once.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SyncRacesIT {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String TOKEN = "sync-races-token";
  private final HttpClient client = HttpClient.newBuilder()
      .version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(5)).build();
  private Path dir;
  private RelayNode relay;
  private Multiaddr relayAddress;

  @BeforeAll
  void start() throws Exception {
    dir = Files.createTempDirectory("sync-races-it");
    final PrivateKey key = Keys.generate(KeyType.ED25519, new SecureRandom());
    // A sync of a database with no entry yet waits half of the sync timeout (at most 5 s) for a
    // peer to speak; 10 s leaves the open as long again on a busy machine before a 504.
    relay = new RelayNode(RelayConfig.builder().dataDir(dir.resolve("relay"))
        .metricsHost("127.0.0.1").metricsPort(0).listenIpv4("127.0.0.1").tcpPort(0).wsPort(0)
        .quicPort(0)
        .ipv6Disabled(true).apiToken(TOKEN).pinningSyncTimeout(Duration.ofSeconds(10)).build(),
        new NodeIdentity(key, key.publicKey().peerId(),
            NodeIdentity.servingZone(key.publicKey().peerId(), "libp2p.direct"),
            NodeIdentity.Source.ENVIRONMENT), new PrometheusRegistry(), Clock.systemUTC());
    relay.start();
    relayAddress = relay.network().host().listenAddresses().stream()
        .filter(a -> !a.toString().endsWith("/ws")).findFirst().orElseThrow()
        .withPeerId(relay.identity().peerId());
  }

  @AfterAll
  void stop() throws Exception {
    if (relay != null) {
      relay.close();
    }
    try (var paths = Files.walk(dir)) {
      paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    }
  }

  private HttpRequest.Builder request(final String path) {
    return HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
        + relay.http().port().getAsInt() + path)).timeout(Duration.ofSeconds(30));
  }

  private CompletableFuture<HttpResponse<String>> sync(final String address) {
    return client.sendAsync(request("/pinning/sync")
        .header("Authorization", "Bearer " + TOKEN)
        .header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString("{\"dbAddress\":\"" + address + "\"}"))
        .build(), HttpResponse.BodyHandlers.ofString());
  }

  private JsonNode get(final String path) throws Exception {
    return JSON.readTree(client.send(request(path).build(),
        HttpResponse.BodyHandlers.ofString()).body());
  }

  @Test
  void explicitSync_shouldFetchTheManifestFromAConnectedWriter_whoseIdentifyIsNotProcessedYet()
      throws Exception {
    try (WriterPeer writer = new WriterPeer("sync-races-identify")) {
      writer.write(1, 1_000, false);
      final String address = writer.address().toString();
      final Runnable releaseIdentify = writer.holdIdentify();
      writer.dial(relayAddress);
      await().atMost(Duration.ofSeconds(10))
          .until(() -> relay.network().host().connection(writer.peerId()).isPresent());

      final CompletableFuture<HttpResponse<String>> answer = sync(address);
      // The sync runs (or, before the fix, it failed at once: "no peer is connected").
      await().atMost(Duration.ofSeconds(10)).until(() -> answer.isDone()
          || get("/pinning/stats").get("syncQueue").get("active").asInt() == 1);
      releaseIdentify.run();

      final HttpResponse<String> response = answer.get(30, TimeUnit.SECONDS);
      assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
      assertThat(JSON.readTree(response.body()).get("ok").asBoolean()).isTrue();
      assertThat(get("/pinning/databases?address="
          + URLEncoder.encode(address, StandardCharsets.UTF_8)).get("total").asInt())
          .isEqualTo(1);
    }
  }
}
