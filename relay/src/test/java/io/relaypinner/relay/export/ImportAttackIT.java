package io.relaypinner.relay.export;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.relaypinner.ipfs.blockstore.MemoryBlockstore;
import io.relaypinner.ipfs.car.CarWriter;
import io.relaypinner.ipfs.dagcbor.DagCborValue;
import io.relaypinner.ipfs.dagpb.DagPb;
import io.relaypinner.ipfs.dagpb.PbLink;
import io.relaypinner.ipfs.dagpb.PbNode;
import io.relaypinner.libp2p.crypto.KeyType;
import io.relaypinner.libp2p.crypto.Keys;
import io.relaypinner.libp2p.crypto.PrivateKey;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.multiformats.Multicodec;
import io.relaypinner.multiformats.Multihash;
import io.relaypinner.orbitdb.JavaWriter;
import io.relaypinner.orbitdb.OrbitDbAddress;
import io.relaypinner.orbitdb.log.Entry;
import io.relaypinner.relay.RelayNode;
import io.relaypinner.relay.config.RelayConfig;
import io.relaypinner.relay.identity.NodeIdentity;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.SequenceInputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
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
import java.util.ArrayList;
import java.util.Enumeration;
import java.util.List;
import java.util.Map;
import java.util.Random;
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
  private static final int LEAF = 1 << 20;
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

  private static long stagedOnDisk(final RelayNode node) throws IOException {
    final Path staging = node.config().storage().dataDir().resolve(ImportStaging.DIRECTORY);
    try (Stream<Path> files = Files.list(staging)) {
      return files.mapToLong(file -> {
        try {
          return Files.size(file);
        } catch (final IOException e) {
          return 0;
        }
      }).sum();
    }
  }

  private static boolean stagingEmpty(final RelayNode node) throws IOException {
    try (Stream<Path> files = Files.list(
        node.config().storage().dataDir().resolve(ImportStaging.DIRECTORY))) {
      return files.findAny().isEmpty();
    }
  }

  /** A one-writer database in {@code store}; its entries name {@code media}, if any. */
  private record Database(OrbitDbAddress address, Entry head, MemoryBlockstore store) {}

  private static Database database(final String name, final Cid media) {
    final JavaWriter writer = new JavaWriter();
    final MemoryBlockstore store = new MemoryBlockstore();
    store.put(writer.identityCid(), writer.identityBlock());
    final OrbitDbAddress address = JavaWriter.database(store, name, List.of(writer.id()));
    if (media == null) {
      return new Database(address, writer.chain(store, address, 3).get(2), store);
    }
    final byte[] block = writer.entry(address, 1, List.of(), List.of(),
        DagCborValue.map(Map.of("cid", DagCborValue.of(media.toString()))));
    final Entry entry = Entry.decode(block);
    store.put(entry.cid(), block);
    return new Database(address, entry, store);
  }

  private static byte[] car(final Database db) throws IOException {
    final ByteArrayOutputStream out = new ByteArrayOutputStream();
    try (CarWriter writer = new CarWriter(out, List.of(db.address().manifest(),
        db.head().cid()))) {
      final List<Cid> all = new ArrayList<>();
      db.store().forEachKey(all::add);
      for (final Cid cid : all) {
        writer.write(cid, db.store().get(cid).orElseThrow());
      }
    }
    return out.toByteArray();
  }

  private static byte[] leaf(final int i) {
    final byte[] data = new byte[LEAF];
    new Random(i).nextBytes(data);
    return data;
  }

  private static byte[] section(final Cid cid, final byte[] data) {
    final byte[] prefix = CarWriter.sectionPrefix(cid, data.length);
    final byte[] out = new byte[prefix.length + data.length];
    System.arraycopy(prefix, 0, out, 0, prefix.length);
    System.arraycopy(data, 0, out, prefix.length, data.length);
    return out;
  }

  @Test
  void aCarOf120MiB_isStagedOnDisk_notHeldInTheHeap_andItsMediaIsPinned() throws Exception {
    final int leaves = 120;
    final List<Cid> leafCids = new ArrayList<>();
    final List<PbLink> links = new ArrayList<>();
    for (int i = 0; i < leaves; i++) {
      final Cid cid = Cid.v1(Multicodec.RAW, Multihash.sha2_256(leaf(i)));
      leafCids.add(cid);
      links.add(PbLink.of(cid, "", LEAF));
    }
    final byte[] rootBlock = DagPb.encode(PbNode.of(new byte[] {8, 2}, links));
    final Cid root = DagPb.cidOf(rootBlock);
    final Database db = database("large-import", root);
    final RelayNode node = relay("large", b -> { });

    // The CAR is generated as the client sends it, one leaf at a time: the test holds one
    // block, and before the last leaf it waits until the relay has staged the rest on disk.
    final byte[] head = car(db);
    final AtomicLong sent = new AtomicLong();
    final AtomicLong observedOnDisk = new AtomicLong();
    final AtomicLong observedGauge = new AtomicLong();
    final Enumeration<InputStream> sections = new Enumeration<>() {
      private int next = -2;

      @Override
      public boolean hasMoreElements() {
        return next < leaves;
      }

      @Override
      public InputStream nextElement() {
        final byte[] bytes;
        if (next == -2) {
          bytes = head;
        } else if (next == -1) {
          bytes = section(root, rootBlock);
        } else {
          if (next == leaves - 1) {
            await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(50))
                .until(() -> stagedOnDisk(node) >= 100L << 20);
            try {
              observedOnDisk.set(stagedOnDisk(node));
              observedGauge.set((long) metric(node, "relay_import_staged_bytes"));
            } catch (final Exception e) {
              throw new IllegalStateException(e);
            }
          }
          bytes = section(leafCids.get(next), leaf(next));
        }
        next++;
        sent.addAndGet(bytes.length);
        return new ByteArrayInputStream(bytes);
      }
    };
    final HttpResponse<String> response = client.send(HttpRequest.newBuilder(
            uri(node, "/pinning/import")).timeout(Duration.ofSeconds(120))
        .POST(HttpRequest.BodyPublishers.ofInputStream(() -> new SequenceInputStream(sections)))
        .build(), HttpResponse.BodyHandlers.ofString());

    assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
    assertThat(sent.get()).isGreaterThan(120L << 20).isLessThan(ExportRoutes.MAX_IMPORT_BYTES);
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
        .isLessThan(4.0 * LEAF);
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

  private static void head(final Socket socket, final long length, final boolean close)
      throws IOException {
    socket.getOutputStream().write(("POST /pinning/import HTTP/1.1\r\nHost: relay\r\n"
        + "Content-Length: " + length + "\r\n" + (close ? "Connection: close\r\n" : "")
        + "\r\n").getBytes(StandardCharsets.US_ASCII));
    socket.getOutputStream().flush();
  }

  /**
   * The status line and the JSON body of the one answer on {@code socket}, read until the relay
   * closes (a reset after the answer, as when the trickler writes to the closed connection, ends
   * the reading too).
   */
  private static String[] answer(final Socket socket) throws IOException {
    final ByteArrayOutputStream received = new ByteArrayOutputStream();
    final byte[] buffer = new byte[8192];
    try {
      for (int n = socket.getInputStream().read(buffer); n >= 0;
          n = socket.getInputStream().read(buffer)) {
        received.write(buffer, 0, n);
      }
    } catch (final java.net.SocketException e) {
      if (received.size() == 0) {
        throw e;
      }
    }
    final String text = received.toString(StandardCharsets.UTF_8);
    return new String[] {text.substring(0, text.indexOf("\r\n")),
        text.substring(text.indexOf("\r\n\r\n") + 4)};
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
    head(slow, 100_000, false);
    final AtomicBoolean trickling = new AtomicBoolean(true);
    final Thread trickle = new Thread(() -> {
      try {
        final OutputStream out = slow.getOutputStream();
        for (int i = 0; i < 100 && trickling.get(); i++) {
          out.write(car[i]);
          out.flush();
          Thread.sleep(1_000);
        }
      } catch (final IOException e) {
        // The relay closed the connection: what the test waits for.
      } catch (final InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }, "slow-import");
    trickle.setDaemon(true);
    trickle.start();
    await().atMost(Duration.ofSeconds(20))
        .until(() -> metric(node, "relay_import_slots_used") == 1.0);

    // A second import from the same address gets no slot of the two (answered on its head).
    final Socket again = connect(node, "127.0.0.2");
    head(again, car.length, true);
    final String[] busy = answer(again);
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
    final String[] cut = answer(slow);
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
    head(after, car.length, true);
    after.getOutputStream().write(car);
    assertThat(answer(after)[0]).startsWith("HTTP/1.1 200");
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
