package io.relaypinner.relay.export;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.relaypinner.ipfs.car.CarBlock;
import io.relaypinner.ipfs.car.CarReader;
import io.relaypinner.ipfs.car.CarWriter;
import io.relaypinner.libp2p.crypto.KeyType;
import io.relaypinner.libp2p.crypto.Keys;
import io.relaypinner.libp2p.crypto.PrivateKey;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.multiformats.Multibase;
import io.relaypinner.orbitdb.OrbitDbAddress;
import io.relaypinner.relay.RelayNode;
import io.relaypinner.relay.config.RelayConfig;
import io.relaypinner.relay.identity.NodeIdentity;
import io.relaypinner.testkit.JsPeer;
import io.relaypinner.testkit.NodeJs;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code POST /pinning/import} and {@code GET /pinning/export} on real nodes, with a database
 * written by OrbitDB 4 (the orbitdb module's stack B vectors): import verifies every entry and
 * stores only what verified; the export of one relay imports into a fresh one.
 */
class ExportImportIT {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String TOKEN = "import-token";
  private final HttpClient client = HttpClient.newBuilder()
      .version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(5)).build();
  private final List<RelayNode> nodes = new ArrayList<>();
  @TempDir
  Path dir;

  @AfterEach
  void close() {
    nodes.forEach(RelayNode::close);
  }

  private RelayNode relay(final String name) {
    final PrivateKey key = Keys.generate(KeyType.ED25519, new SecureRandom());
    final RelayNode node = new RelayNode(RelayConfig.builder().dataDir(dir.resolve(name))
        .metricsHost("127.0.0.1").metricsPort(0).listenIpv4("127.0.0.1").tcpPort(0).wsPort(0)
        .quicPort(0)
        .ipv6Disabled(true).apiToken(TOKEN).build(),
        new NodeIdentity(key, key.publicKey().peerId(),
            NodeIdentity.servingZone(key.publicKey().peerId(), "libp2p.direct"),
            NodeIdentity.Source.ENVIRONMENT), new PrometheusRegistry(), Clock.systemUTC());
    nodes.add(node);
    node.start();
    return node;
  }

  private static JsonNode vectors() throws Exception {
    return JSON.readTree(
        Path.of("../orbitdb/src/test/resources/orbitdb-vectors-stack-b.json").toFile());
  }

  /** A CAR with roots [manifest, heads…] and every block of the vectors file (and extras). */
  private static byte[] vectorCar(final JsonNode db, final Map<Cid, byte[]> extra)
      throws Exception {
    return io.relaypinner.relay.testing.ImportCars.vectorCar(vectors(), db, extra);
  }

  private HttpResponse<byte[]> send(final RelayNode node, final String method, final String path,
      final byte[] body, final String token) throws Exception {
    final HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
        + node.http().port().getAsInt() + path)).timeout(Duration.ofSeconds(30))
        .method(method, body == null ? HttpRequest.BodyPublishers.noBody()
            : HttpRequest.BodyPublishers.ofByteArray(body));
    if (token != null) {
      request.header("Authorization", "Bearer " + token);
    }
    return client.send(request.build(), HttpResponse.BodyHandlers.ofByteArray());
  }

  private static List<CarBlock> blocks(final byte[] car, final List<Cid> roots) throws Exception {
    final CarReader reader = new CarReader(new ByteArrayInputStream(car),
        CarReader.Limits.DEFAULT);
    roots.addAll(reader.roots());
    final List<CarBlock> out = new ArrayList<>();
    for (Optional<CarBlock> next = reader.next(); next.isPresent(); next = reader.next()) {
      out.add(next.get());
    }
    return out;
  }

  @Test
  void importVerifiesEntries_exportCarriesTheDatabase_andImportsIntoAFreshRelay()
      throws Exception {
    final JsonNode db = vectors().get("dbs").get(0);
    final String address = db.get("address").asText();
    final JsonNode intruder = vectors().get("intruder");
    final Cid intruderCid = Cid.parse(intruder.get("hash").asText());
    final RelayNode first = relay("first");

    // Wrong or missing token: 401, nothing stored.
    final byte[] car = vectorCar(db, new LinkedHashMap<>());
    assertThat(send(first, "POST", "/pinning/import", car, null).statusCode()).isEqualTo(401);
    assertThat(send(first, "POST", "/pinning/import", car, "wrong").statusCode()).isEqualTo(401);
    final Cid manifest = Cid.parse(address.substring("/orbitdb/".length()));
    assertThat(first.storage().blockstore().has(manifest)).isFalse();
    // Not a CAR: 400.
    final HttpResponse<byte[]> garbage = send(first, "POST", "/pinning/import",
        "not a car".getBytes(StandardCharsets.UTF_8), TOKEN);
    assertThat(garbage.statusCode()).isEqualTo(400);
    assertThat(JSON.readTree(garbage.body()).get("code").asText()).isEqualTo("invalid_car");

    final HttpResponse<byte[]> imported = send(first, "POST", "/pinning/import", car, TOKEN);
    assertThat(imported.statusCode()).isEqualTo(200);
    final JsonNode result = JSON.readTree(imported.body());
    assertThat(result.get("address").asText()).isEqualTo(address);
    assertThat(result.get("entries").asInt()).isEqualTo(3);
    for (final JsonNode entry : db.get("entries")) {
      assertThat(first.storage().blockstore().has(Cid.parse(entry.get("hash").asText()))).isTrue();
    }
    // Blocks the CAR carried that no verified entry needs are not stored.
    assertThat(first.storage().blockstore().has(intruderCid)).isFalse();

    final HttpResponse<byte[]> export = send(first, "GET", "/pinning/export?address="
        + URLEncoder.encode(address, StandardCharsets.UTF_8), null, null);
    assertThat(export.statusCode()).isEqualTo(200);
    assertThat(export.headers().firstValue("content-type"))
        .contains("application/vnd.ipld.car; version=1");
    final List<Cid> roots = new ArrayList<>();
    final List<CarBlock> blocks = blocks(export.body(), roots);
    assertThat(roots.get(0)).isEqualTo(manifest);
    assertThat(blocks.get(0).cid()).isEqualTo(manifest);
    assertThat(blocks).extracting(CarBlock::cid)
        .contains(Cid.parse(db.get("entries").get(0).get("hash").asText()),
            Cid.parse(db.get("identityHash").asText()));

    final RelayNode second = relay("second");
    final HttpResponse<byte[]> again = send(second, "POST", "/pinning/import", export.body(),
        TOKEN);
    assertThat(again.statusCode()).isEqualTo(200);
    assertThat(JSON.readTree(again.body()).get("entries").asInt()).isEqualTo(3);
    final HttpResponse<byte[]> reExport = send(second, "GET", "/pinning/export?address="
        + URLEncoder.encode(address, StandardCharsets.UTF_8), null, null);
    assertThat(blocks(reExport.body(), new ArrayList<>())).hasSameSizeAs(blocks);

    // A fresh OrbitDB 4 reader connected only to the second relay gets the whole database.
    final String relayAddress = second.network().host().listenAddresses().stream()
        .filter(a -> !a.toString().endsWith("/ws")).findFirst().orElseThrow()
        .withPeerId(second.identity().peerId()).toString();
    try (JsPeer reader = NodeJs.start("stack-b", "../common/replication-peer.mjs", "bob",
        "--dial", relayAddress, "--open", address + "=events=3")) {
      final JsonNode done = reader.nextEvent("done", Duration.ofSeconds(90));
      assertThat(done.get("dbs").get(0).get("entries").asInt()).isEqualTo(3);
    }
  }

  /** A CAR with roots [manifest, head] of every block in {@code store} but {@code left}. */
  private static byte[] car(final io.relaypinner.ipfs.blockstore.MemoryBlockstore store,
      final OrbitDbAddress address, final Cid head, final List<Cid> left) throws Exception {
    final ByteArrayOutputStream out = new ByteArrayOutputStream();
    try (CarWriter writer = new CarWriter(out, List.of(address.manifest(), head))) {
      final List<Cid> all = new ArrayList<>();
      store.forEachKey(all::add);
      for (final Cid cid : all) {
        if (!left.contains(cid)) {
          writer.write(cid, store.get(cid).orElseThrow());
        }
      }
    }
    return out.toByteArray();
  }

  @Test
  void anImportIntoAFollowedDatabase_reachesTheReplicaTheRelayServes() throws Exception {
    final io.relaypinner.orbitdb.JavaWriter writer = new io.relaypinner.orbitdb.JavaWriter();
    final io.relaypinner.ipfs.blockstore.MemoryBlockstore store =
        new io.relaypinner.ipfs.blockstore.MemoryBlockstore();
    store.put(writer.identityCid(), writer.identityBlock());
    final OrbitDbAddress address = io.relaypinner.orbitdb.JavaWriter.database(store,
        "followed-import", List.of(writer.id()));
    final List<io.relaypinner.orbitdb.log.Entry> chain = writer.chain(store, address, 4);
    final RelayNode node = relay("followed");

    // The first two entries: imported, then followed (the import's sync follows it).
    assertThat(send(node, "POST", "/pinning/import", car(store, address, chain.get(1).cid(),
        List.of(chain.get(2).cid(), chain.get(3).cid())), TOKEN).statusCode()).isEqualTo(200);
    final io.relaypinner.orbitdb.OrbitDbReplicas replicas =
        node.replication().service().replicas();
    await().atMost(Duration.ofSeconds(20)).until(() -> replicas.replica(address)
        .map(r -> r.log().size() == 2).orElse(false));
    final io.relaypinner.orbitdb.OrbitDbReplica followed = replicas.replica(address).get();

    // The whole log: the followed replica, the one the relay serves readers from, has it.
    final HttpResponse<byte[]> second = send(node, "POST", "/pinning/import",
        car(store, address, chain.get(3).cid(), List.of()), TOKEN);
    assertThat(second.statusCode()).isEqualTo(200);
    assertThat(JSON.readTree(second.body()).get("heads").get(0).asText())
        .isEqualTo(chain.get(3).cid().toString());
    assertThat(replicas.replica(address).orElseThrow()).isSameAs(followed);
    assertThat(followed.log().heads()).containsExactly(chain.get(3).cid());
    assertThat(followed.log().size()).isEqualTo(4);
    assertThat(followed.log().isComplete()).isTrue();
  }

  @Test
  void anEntryByAnIdentityWithoutWriteAccessIsRejected_andNotStored() throws Exception {
    final JsonNode vectors = vectors();
    final JsonNode intruder = vectors.get("intruder");
    JsonNode db = null;
    for (final JsonNode candidate : vectors.get("dbs")) {
      if (candidate.get("address").asText().equals(intruder.get("db").asText())) {
        db = candidate;
      }
    }
    final Cid intruderCid = Cid.parse(intruder.get("hash").asText());
    final byte[] intruderBlock = Base64.getDecoder().decode(intruder.get("block").asText());
    // The intruder's entry announced as the only head.
    final ByteArrayOutputStream out = new ByteArrayOutputStream();
    final Cid manifest = Cid.parse(db.get("address").asText().substring("/orbitdb/".length()));
    final byte[] all = vectorCar(db, Map.of(intruderCid, intruderBlock));
    final CarReader reader = new CarReader(new ByteArrayInputStream(all),
        CarReader.Limits.DEFAULT);
    try (CarWriter writer = new CarWriter(out, List.of(manifest, intruderCid))) {
      for (Optional<CarBlock> next = reader.next(); next.isPresent(); next = reader.next()) {
        writer.write(next.get().cid(), next.get().data());
      }
    }
    final RelayNode node = relay("intruded");
    final HttpResponse<byte[]> response = send(node, "POST", "/pinning/import",
        out.toByteArray(), TOKEN);
    assertThat(response.statusCode()).isEqualTo(200);
    final JsonNode result = JSON.readTree(response.body());
    assertThat(result.get("entries").asInt()).isZero();
    assertThat(result.get("rejected").toString()).isNotEqualTo("{}");
    assertThat(node.storage().blockstore().has(intruderCid)).isFalse();
  }

  @Test
  void aMultiMebibyteExport_streamsIntoAFreshRelay_overTheLimitIsRefused_aCutOneStoresNothing()
      throws Exception {
    // A JS OrbitDB 4 writer adds a 6 MiB file and an entry naming it; the source relay pins it.
    final RelayNode source = relay("source");
    final String sourceAddress = source.network().host().listenAddresses().stream()
        .filter(a -> !a.toString().endsWith("/ws")).findFirst().orElseThrow()
        .withPeerId(source.identity().peerId()).toString();
    final Cid file;
    final String address;
    try (JsPeer alice = NodeJs.start("stack-b", "../common/replication-peer.mjs", "alice",
        "--dial", sourceAddress, "--files", "1", "--file-size", String.valueOf((6 << 20) + 1),
        "--entries", "2")) {
      final JsonNode ready = alice.nextEvent("ready", Duration.ofSeconds(120));
      file = Cid.parse(ready.get("files").get(0).get("cid").asText());
      final JsonNode db = ready.get("dbs").get(0);
      address = db.get("address").asText();
      final OrbitDbAddress parsed = OrbitDbAddress.parse(address);
      await().atMost(Duration.ofSeconds(120)).pollInterval(Duration.ofMillis(200)).until(() ->
          source.storage().pins().isPinned(file) && source.replication().service().replicas()
              .replica(parsed).map(r -> r.log().size()).orElse(0) == db.get("entries").asInt());
    }
    final HttpResponse<byte[]> export = send(source, "GET", "/pinning/export?media=true&address="
        + URLEncoder.encode(address, StandardCharsets.UTF_8), null, null);
    assertThat(export.statusCode()).isEqualTo(200);
    final byte[] car = export.body();
    assertThat(car.length).isGreaterThan(6 << 20);
    final Cid manifest = Cid.parse(address.substring("/orbitdb/".length()));

    // The target keeps the default 64 KiB body limit: the import route streams its body.
    final RelayNode target = relay("target");
    // Cut short in the middle of the file's blocks: 400, nothing stored.
    final HttpResponse<byte[]> cut = send(target, "POST", "/pinning/import",
        Arrays.copyOf(car, car.length - (3 << 20)), TOKEN);
    assertThat(cut.statusCode()).isEqualTo(400);
    assertThat(JSON.readTree(cut.body()).get("code").asText()).isEqualTo("invalid_car");
    assertThat(target.storage().blockstore().has(manifest)).isFalse();
    assertThat(target.storage().blockstore().has(file)).isFalse();

    // Declared larger than the limit: 413 before a byte of the body is read (over a socket:
    // nothing but the head is sent).
    try (Socket socket = new Socket("127.0.0.1", target.http().port().getAsInt())) {
      socket.setSoTimeout(30_000);
      socket.getOutputStream().write(("POST /pinning/import HTTP/1.1\r\nHost: relay\r\n"
          + "Authorization: Bearer " + TOKEN + "\r\nContent-Length: "
          + (ExportRoutes.MAX_IMPORT_BYTES + 1) + "\r\n\r\n")
          .getBytes(StandardCharsets.US_ASCII));
      final String answer = new String(socket.getInputStream().readAllBytes(),
          StandardCharsets.UTF_8);
      assertThat(answer).startsWith("HTTP/1.1 413 ").contains("car_too_large");
    }

    // The whole export, streamed: the entry verified and stored, the file's DAG pinned.
    final HttpResponse<byte[]> imported = send(target, "POST", "/pinning/import", car, TOKEN);
    assertThat(imported.statusCode()).isEqualTo(200);
    final JsonNode result = JSON.readTree(imported.body());
    assertThat(result.get("entries").asInt()).isPositive();
    assertThat(result.get("media").asInt()).isEqualTo(1);
    assertThat(target.storage().blockstore().has(manifest)).isTrue();
    assertThat(target.storage().pins().isPinned(file)).isTrue();
  }

  @Test
  void exportErrors() throws Exception {
    final RelayNode node = relay("errors");
    assertThat(send(node, "GET", "/pinning/export", null, null).statusCode()).isEqualTo(400);
    assertThat(send(node, "GET", "/pinning/export?address=nope", null, null).statusCode())
        .isEqualTo(400);
    // A base32 address of a well-formed manifest CID (no JS OrbitDB peer opens it) and a
    // garbage CID: 400 invalid_address, as on every route that takes an address.
    final Cid manifest = Cid.parse("zdpuApKrGrgmyK4NNmE1JBX3nz6SJDgGLo7kkkchqzQV7E4nA");
    for (final String refused : List.of("/orbitdb/" + manifest.toString(Multibase.Base.BASE32),
        "/orbitdb/zdpuGarbage0OIl")) {
      final HttpResponse<byte[]> response = send(node, "GET", "/pinning/export?address="
          + URLEncoder.encode(refused, StandardCharsets.UTF_8), null, null);
      assertThat(response.statusCode()).isEqualTo(400);
      final JsonNode body = JSON.readTree(response.body());
      assertThat(body.get("ok").asBoolean()).isFalse();
      assertThat(body.get("code").asText()).isEqualTo("invalid_address");
      assertThat(body.get("error").asText()).contains("base58btc");
    }
    final HttpResponse<byte[]> unknown = send(node, "GET", "/pinning/export?address="
        + URLEncoder.encode("/orbitdb/zdpuApKrGrgmyK4NNmE1JBX3nz6SJDgGLo7kkkchqzQV7E4nA",
            StandardCharsets.UTF_8), null, null);
    assertThat(unknown.statusCode()).isEqualTo(404);
    assertThat(JSON.readTree(unknown.body()).get("code").asText())
        .isEqualTo("database_not_found");
  }
}
