package io.relaypinner.relay.export;

import static io.relaypinner.relay.testing.ImportCars.car;
import static io.relaypinner.relay.testing.ImportCars.database;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.relaypinner.libp2p.crypto.KeyType;
import io.relaypinner.libp2p.crypto.Keys;
import io.relaypinner.libp2p.crypto.PrivateKey;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.relay.RelayNode;
import io.relaypinner.relay.config.RelayConfig;
import io.relaypinner.relay.identity.NodeIdentity;
import io.relaypinner.relay.testing.ImportCars;
import io.relaypinner.relay.testing.ImportCars.Database;
import io.relaypinner.relay.testing.ImportCars.LargeCar;
import java.io.IOException;
import java.net.InetSocketAddress;
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
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The attacks on {@code POST /pinning/import} of issue 36, performed against a relay in this JVM
 * with the shipped defaults (no {@code RELAY_API_TOKEN}: anyone may import): a 120 MiB CAR
 * (staged on disk, not held in the heap), an upload that sends a byte now and then to hold an
 * import slot (cut at {@code RELAY_IMPORT_TIMEOUT_MS} while an honest client imports), and a
 * database the operator denies (403, nothing stored or pinned). The same attacks against the
 * launcher's relay JVM ({@code -Xmx160m}, heap after GC bounded) are {@code SurfaceAttackIT}
 * in the cli module; these stay for what only a relay in this JVM shows: the import's held
 * bytes, the per-address slot (503 {@code client_busy}), the allow list, pins and replicas.
 */
class ImportAttackIT {
  private static final ObjectMapper JSON = new ObjectMapper();
  private final HttpClient client = HttpClient.newBuilder()
      .version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(5)).build();
  private final List<RelayNode> nodes = new ArrayList<>();
  private final List<Socket> sockets = new ArrayList<>();
  @TempDir
  Path dir;

  @AfterEach
  void close() throws IOException {
    for (final Socket socket : sockets) {
      socket.close();
    }
    nodes.forEach(RelayNode::close);
  }

  private RelayNode relay(final String name, final Consumer<RelayConfig.Builder> settings) {
    final PrivateKey key = Keys.generate(KeyType.ED25519, new SecureRandom());
    final RelayConfig.Builder config = RelayConfig.builder().dataDir(dir.resolve(name))
        .metricsHost("127.0.0.1").metricsPort(0).listenIpv4("127.0.0.1").tcpPort(0).wsPort(0)
        .quicPort(0)
        .ipv6Disabled(true);
    settings.accept(config);
    final RelayNode node = new RelayNode(config.build(),
        new NodeIdentity(key, key.publicKey().peerId(),
            NodeIdentity.servingZone(key.publicKey().peerId(), "libp2p.direct"),
            NodeIdentity.Source.ENVIRONMENT), new PrometheusRegistry(), Clock.systemUTC());
    nodes.add(node);
    node.start();
    return node;
  }

  private static URI uri(final RelayNode node, final String path) {
    return URI.create("http://127.0.0.1:" + node.http().port().getAsInt() + path);
  }

  /** A metric's value as {@code /metrics} shows it ({@code name} with its labels, if any). */
  private double metric(final RelayNode node, final String series) throws Exception {
    final String text = client.send(HttpRequest.newBuilder(uri(node, "/metrics")).build(),
        HttpResponse.BodyHandlers.ofString()).body();
    for (final String line : text.split("\n")) {
      if (line.startsWith(series + " ")) {
        return Double.parseDouble(line.substring(series.length() + 1).trim());
      }
    }
    throw new AssertionError("no metric " + series);
  }

  private static boolean stagingEmpty(final RelayNode node) throws IOException {
    try (Stream<Path> files = Files.list(
        node.config().storage().dataDir().resolve(ImportStaging.DIRECTORY))) {
      return files.findAny().isEmpty();
    }
  }

  @Test
  void aCarOf120MiB_isStagedOnDisk_notHeldInTheHeap_andItsMediaIsPinned() throws Exception {
    final int leaves = 120;
    final LargeCar large = LargeCar.of(leaves);
    final List<Cid> leafCids = large.leafCids();
    final Cid root = large.root();
    final RelayNode node = relay("large", b -> { });

    // The CAR is generated as the client sends it, one leaf at a time: the test holds one
    // block, and before the last leaf it waits until the relay has staged the rest on disk.
    final AtomicLong observedOnDisk = new AtomicLong();
    final AtomicLong observedGauge = new AtomicLong();
    final Path dataDir = node.config().storage().dataDir();
    final ImportCars.BeforeLastLeaf staged = () -> {
      await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(50))
          .until(() -> ImportCars.stagedBytes(dataDir) >= 100L << 20);
      observedOnDisk.set(ImportCars.stagedBytes(dataDir));
      observedGauge.set((long) metric(node, "relay_import_staged_bytes"));
    };
    final HttpResponse<String> response = client.send(HttpRequest.newBuilder(
            uri(node, "/pinning/import")).timeout(Duration.ofSeconds(120))
        .POST(HttpRequest.BodyPublishers.ofInputStream(large.body(staged)))
        .build(), HttpResponse.BodyHandlers.ofString());

    assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
    assertThat(large.sent()).isGreaterThan(120L << 20).isLessThan(ExportRoutes.MAX_IMPORT_BYTES);
    final JsonNode result = JSON.readTree(response.body());
    assertThat(result.get("entries").asInt()).isEqualTo(1);
    assertThat(result.get("media").asInt()).isEqualTo(1);
    assertThat(node.storage().pins().isPinned(root)).isTrue();
    for (final Cid leaf : List.of(leafCids.get(0), leafCids.get(leaves - 1))) {
      assertThat(node.storage().blockstore().has(leaf)).isTrue();
    }
    // While it arrived, the body was on disk in the data directory...
    assertThat(observedOnDisk.get()).isGreaterThanOrEqualTo(100L << 20);
    assertThat(observedGauge.get()).isGreaterThanOrEqualTo(100L << 20);
    // ... and the import held its index and one block, not the CAR.
    assertThat(metric(node, "relay_import_held_bytes")).isPositive()
        .isLessThan(4.0 * ImportCars.LEAF);
    assertThat(stagingEmpty(node)).isTrue();
    assertThat(metric(node, "relay_import_staged_bytes")).isZero();
    assertThat(metric(node, "relay_imports_total{outcome=\"imported\"}")).isEqualTo(1.0);
  }

  /** Opens a connection to the relay's HTTP port from {@code source} (e.g. 127.0.0.2). */
  private Socket connect(final RelayNode node, final String source) throws IOException {
    final Socket socket = new Socket();
    sockets.add(socket);
    socket.bind(new InetSocketAddress(source, 0));
    socket.connect(new InetSocketAddress("127.0.0.1", node.http().port().getAsInt()), 5_000);
    socket.setSoTimeout(60_000);
    return socket;
  }

  @Test
  void aByteNowAndThen_isCutAtTheDeadline_andHoldsOneSlot_whileAnHonestClientImports()
      throws Exception {
    // The deadline short for the test; the stall (60 s per read) alone would never cut it.
    final RelayNode node = relay("slow", b -> b.importTimeout(Duration.ofSeconds(4)));
    final Database honest = database("honest", null);
    final byte[] car = car(honest);

    // 127.0.0.2 starts an import it never finishes: one byte a second, far within the stall.
    final Socket slow = connect(node, "127.0.0.2");
    ImportCars.importHead(slow, 100_000, false);
    final AtomicBoolean trickling = new AtomicBoolean(true);
    final Thread trickle = ImportCars.trickle(slow, car, trickling);
    await().atMost(Duration.ofSeconds(20))
        .until(() -> metric(node, "relay_import_slots_used") == 1.0);

    // A second import from the same address gets no slot of the two (answered on its head).
    final Socket again = connect(node, "127.0.0.2");
    ImportCars.importHead(again, car.length, true);
    final String[] busy = ImportCars.answer(again);
    assertThat(busy[0]).startsWith("HTTP/1.1 503");
    assertThat(JSON.readTree(busy[1]).get("code").asText()).isEqualTo("import_busy");

    // An honest client from another address imports meanwhile.
    final HttpResponse<String> imported = client.send(HttpRequest.newBuilder(
            uri(node, "/pinning/import")).timeout(Duration.ofSeconds(60))
        .POST(HttpRequest.BodyPublishers.ofByteArray(car)).build(),
        HttpResponse.BodyHandlers.ofString());
    assertThat(imported.statusCode()).as(imported.body()).isEqualTo(200);
    assertThat(JSON.readTree(imported.body()).get("entries").asInt()).isEqualTo(3);

    // The trickler is answered at the deadline, its connection closed, its slot freed.
    final String[] cut = ImportCars.answer(slow);
    trickling.set(false);
    assertThat(cut[0]).startsWith("HTTP/1.1 408");
    assertThat(JSON.readTree(cut[1]).get("code").asText()).isEqualTo("import_timeout");
    await().atMost(Duration.ofSeconds(10))
        .until(() -> metric(node, "relay_import_slots_used") == 0.0);
    assertThat(stagingEmpty(node)).isTrue();
    assertThat(metric(node, "relay_imports_total{outcome=\"timeout\"}")).isEqualTo(1.0);
    assertThat(metric(node, "relay_imports_total{outcome=\"client_busy\"}")).isEqualTo(1.0);

    // The address may import again.
    final Socket after = connect(node, "127.0.0.2");
    ImportCars.importHead(after, car.length, true);
    after.getOutputStream().write(car);
    assertThat(ImportCars.answer(after)[0]).startsWith("HTTP/1.1 200");
  }

  @Test
  void anImportOfADeniedDatabase_is403_andNothingIsStoredOrPinned() throws Exception {
    final Database denied = database("denied", null);
    final Database other = database("other", null);
    final RelayNode deny = relay("deny",
        b -> b.orbitDbDeny(List.of(denied.address().toString())));
    // Only another database allowed: the same refusal.
    final RelayNode allow = relay("allow",
        b -> b.orbitDbAllow(List.of(other.address().toString())));

    for (final RelayNode node : List.of(deny, allow)) {
      final HttpResponse<String> response = client.send(HttpRequest.newBuilder(
              uri(node, "/pinning/import")).timeout(Duration.ofSeconds(60))
          .POST(HttpRequest.BodyPublishers.ofByteArray(car(denied))).build(),
          HttpResponse.BodyHandlers.ofString());
      assertThat(response.statusCode()).as(response.body()).isEqualTo(403);
      final JsonNode body = JSON.readTree(response.body());
      assertThat(body.get("ok").asBoolean()).isFalse();
      assertThat(body.get("code").asText()).isEqualTo("database_denied");
      assertThat(node.storage().pins().list()).isEmpty();
      final List<Cid> stored = new ArrayList<>();
      denied.store().forEachKey(stored::add);
      for (final Cid cid : stored) {
        assertThat(node.storage().blockstore().has(cid)).as(cid.toString()).isFalse();
      }
      assertThat(node.replication().service().replicas().replica(denied.address())).isEmpty();
      assertThat(stagingEmpty(node)).isTrue();
      assertThat(metric(node, "relay_imports_total{outcome=\"denied\"}")).isEqualTo(1.0);
    }
    // The policy still lets the allowed database in.
    final HttpResponse<String> allowed = client.send(HttpRequest.newBuilder(
            uri(allow, "/pinning/import")).timeout(Duration.ofSeconds(60))
        .POST(HttpRequest.BodyPublishers.ofByteArray(car(other))).build(),
        HttpResponse.BodyHandlers.ofString());
    assertThat(allowed.statusCode()).as(allowed.body()).isEqualTo(200);
  }
}
