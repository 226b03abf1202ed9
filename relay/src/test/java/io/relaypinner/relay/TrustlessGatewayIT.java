package io.relaypinner.relay;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.relaypinner.ipfs.blockstore.Blockstore;
import io.relaypinner.ipfs.blockstore.MemoryBlockstore;
import io.relaypinner.ipfs.car.CarBlock;
import io.relaypinner.ipfs.car.CarReader;
import io.relaypinner.ipfs.dagcbor.DagCbor;
import io.relaypinner.ipfs.dagcbor.DagCborValue;
import io.relaypinner.ipfs.dagpb.DagPb;
import io.relaypinner.ipfs.dagpb.PbLink;
import io.relaypinner.ipfs.dagpb.PbNode;
import io.relaypinner.ipfs.unixfs.UnixFsEntry;
import io.relaypinner.ipfs.unixfs.UnixFsImporter;
import io.relaypinner.ipfs.unixfs.UnixFsReader;
import io.relaypinner.ipfs.unixfs.pb.UnixFsProto;
import io.relaypinner.libp2p.crypto.Ed25519PrivateKey;
import io.relaypinner.libp2p.crypto.PrivateKey;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.multiformats.Multicodec;
import io.relaypinner.multiformats.Multihash;
import io.relaypinner.relay.config.RelayConfig;
import io.relaypinner.relay.identity.NodeIdentity;
import io.relaypinner.relay.testing.TestPins;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The trustless gateway on {@code /ipfs/} (raw blocks, CAR v1 with dag-scope, entity-bytes and
 * dups, headers, HEAD, bad input) through a real node's listener.
 */
class TrustlessGatewayIT {
  private static final Clock CLOCK =
      Clock.fixed(Instant.parse("2026-11-24T10:00:00Z"), ZoneOffset.UTC);
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final int CHUNK = 1024 * 1024;
  private static final int BIG = 3 * CHUNK + 12_345;

  private final HttpClient client = HttpClient.newBuilder()
      .version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(5)).build();
  @TempDir
  Path dataDir;
  private RelayNode node;
  private byte[] big;
  private Cid bigCid;
  private Cid dir;
  private Cid image;
  private Cid cbor;

  @BeforeEach
  void start() {
    final byte[] seed = new byte[32];
    Arrays.fill(seed, (byte) 7);
    final PrivateKey key = Ed25519PrivateKey.fromSeed(seed);
    final NodeIdentity identity = new NodeIdentity(key, key.publicKey().peerId(),
        NodeIdentity.servingZone(key.publicKey().peerId(), "libp2p.direct"),
        NodeIdentity.Source.ENVIRONMENT);
    node = new RelayNode(RelayConfig.builder().dataDir(dataDir).metricsHost("127.0.0.1")
        .metricsPort(0).listenIpv4("127.0.0.1").tcpPort(0).wsPort(0).quicPort(0).ipv6Disabled(true)
        .gatewayMode(io.relaypinner.relay.config.GatewayMode.PINNED_ONLY).build(),
        identity, new PrometheusRegistry(), CLOCK);
    node.start();
    final Blockstore store = node.storage().blockstore();
    final UnixFsImporter importer = new UnixFsImporter(store, UnixFsImporter.Options.HELIA);
    big = new byte[BIG];
    new Random(1).nextBytes(big);
    bigCid = importer.importBytes(big);
    final byte[] small = new byte[5_000];
    new Random(2).nextBytes(small);
    image = importer.importBytes(small);
    final byte[] data = UnixFsProto.Data.newBuilder()
        .setType(UnixFsProto.Data.DataType.Directory).build().toByteArray();
    final byte[] dirBlock = DagPb.encode(PbNode.of(data, List.of(
        PbLink.of(image, "a.jpg", small.length), PbLink.of(bigCid, "big.bin", BIG))));
    dir = DagPb.cidOf(dirBlock);
    store.put(dir, dirBlock);
    final byte[] cborBlock = DagCbor.encode(DagCborValue.map(Map.of(
        "payload", DagCborValue.of("hello"), "link", DagCborValue.of(image))));
    cbor = Cid.v1(Multicodec.DAG_CBOR, Multihash.sha2_256(cborBlock));
    store.put(cbor, cborBlock);
    node.storage().pins().pin(dir, TestPins.HOLDER);
    node.storage().pins().pin(cbor, TestPins.HOLDER);
  }

  @AfterEach
  void stop() {
    node.close();
  }

  private HttpResponse<byte[]> send(final String method, final String path,
      final String... headers) throws IOException, InterruptedException {
    final HttpRequest.Builder request = HttpRequest.newBuilder(
        URI.create("http://127.0.0.1:" + node.http().port().getAsInt() + path))
        .timeout(Duration.ofSeconds(20)).method(method, HttpRequest.BodyPublishers.noBody());
    for (int i = 0; i < headers.length; i += 2) {
      request.header(headers[i], headers[i + 1]);
    }
    return client.send(request.build(), HttpResponse.BodyHandlers.ofByteArray());
  }

  private static List<CarBlock> blocks(final byte[] car) throws IOException {
    final CarReader reader = new CarReader(new ByteArrayInputStream(car),
        CarReader.Limits.DEFAULT);
    final List<CarBlock> out = new ArrayList<>();
    for (Optional<CarBlock> next = reader.next(); next.isPresent(); next = reader.next()) {
      out.add(next.get());
    }
    return out;
  }

  private static void assertError(final HttpResponse<byte[]> response, final int status,
      final String code) throws IOException {
    assertThat(response.statusCode()).isEqualTo(status);
    final JsonNode body = JSON.readTree(response.body());
    assertThat(body.get("ok").asBoolean(true)).isFalse();
    assertThat(body.get("code").asText()).isEqualTo(code);
  }

  @Test
  void rawBlock_byAcceptOrFormat_withTheSpecHeaders_andHead() throws Exception {
    final byte[] expected = node.storage().blockstore().get(bigCid).orElseThrow();
    final HttpResponse<byte[]> byAccept = send("GET", "/ipfs/" + bigCid,
        "Accept", "application/vnd.ipld.raw", "Origin", "https://app.example");
    final HttpResponse<byte[]> byFormat = send("GET", "/ipfs/" + bigCid + "?format=raw");
    final HttpResponse<byte[]> head = send("HEAD", "/ipfs/" + bigCid + "?format=raw");

    for (final HttpResponse<byte[]> response : List.of(byAccept, byFormat)) {
      assertThat(response.statusCode()).isEqualTo(200);
      assertThat(response.body()).isEqualTo(expected);
      assertThat(response.headers().firstValue("content-type"))
          .contains("application/vnd.ipld.raw");
      assertThat(response.headers().firstValue("x-content-type-options")).contains("nosniff");
      assertThat(response.headers().allValues("vary").toString()).contains("Accept");
      assertThat(response.headers().firstValue("etag")).contains("\"" + bigCid + ".raw\"");
      assertThat(response.headers().firstValue("cache-control"))
          .contains("public, max-age=29030400, immutable");
      assertThat(response.headers().firstValue("content-disposition"))
          .contains("attachment; filename=\"" + bigCid + ".bin\"");
    }
    assertThat(byAccept.headers().firstValue("access-control-allow-origin")).isPresent();
    assertThat(head.statusCode()).isEqualTo(200);
    assertThat(head.body()).isEmpty();
    assertThat(head.headers().firstValue("content-length"))
        .contains(Integer.toString(expected.length));
    final HttpResponse<byte[]> cached = send("GET", "/ipfs/" + bigCid + "?format=raw",
        "If-None-Match", "\"" + bigCid + ".raw\"");
    assertThat(cached.statusCode()).isEqualTo(304);
  }

  @Test
  void rawBlock_ofAChildInsideAPinnedDag_isServed() throws Exception {
    final PbNode root = DagPb.decode(node.storage().blockstore().get(bigCid).orElseThrow());
    final Cid child = root.links().get(1).hash();
    final HttpResponse<byte[]> response = send("GET", "/ipfs/" + child + "?format=raw");
    assertThat(response.statusCode()).isEqualTo(200);
    assertThat(Multihash.sha2_256(response.body())).isEqualTo(child.multihash());
  }

  @Test
  void plainAnswer_isUnchanged_withoutAcceptOrFormat() throws Exception {
    final HttpResponse<byte[]> response = send("GET", "/ipfs/" + dir + "/big.bin",
        "Accept", "text/html,*/*");
    assertThat(response.statusCode()).isEqualTo(200);
    assertThat(response.body()).isEqualTo(big);
    assertThat(response.headers().firstValue("cache-control")).contains("private, no-store");
    assertThat(response.headers().firstValue("content-type"))
        .contains("application/octet-stream");
  }

  @Test
  void car_all_holdsEveryBlockOnceInDfsOrder_andEachHashesToItsCid() throws Exception {
    final HttpResponse<byte[]> response = send("GET", "/ipfs/" + dir,
        "Accept", "application/vnd.ipld.car");
    assertThat(response.statusCode()).isEqualTo(200);
    assertThat(response.headers().firstValue("content-type"))
        .contains("application/vnd.ipld.car; version=1; order=dfs; dups=n");
    assertThat(response.headers().firstValue("content-disposition"))
        .contains("attachment; filename=\"" + dir + ".car\"");
    final List<CarBlock> blocks = blocks(response.body());
    // dir, image (one raw leaf), big's root, its four leaves.
    assertThat(blocks).hasSize(7);
    assertThat(blocks.get(0).cid()).isEqualTo(dir);
    assertThat(blocks.get(1).cid()).isEqualTo(image);
    assertThat(blocks.get(2).cid()).isEqualTo(bigCid);
    final HttpResponse<byte[]> head = send("HEAD", "/ipfs/" + dir + "?format=car");
    assertThat(head.headers().firstValue("content-length"))
        .contains(Integer.toString(response.body().length));
  }

  @Test
  void car_scopes_path_rangesAndDups() throws Exception {
    final List<CarBlock> block = blocks(send("GET", "/ipfs/" + dir + "?format=car&dag-scope=block")
        .body());
    assertThat(block).extracting(CarBlock::cid).containsExactly(dir);
    final List<CarBlock> entity = blocks(send("GET", "/ipfs/" + dir
        + "?format=car&dag-scope=entity").body());
    assertThat(entity).extracting(CarBlock::cid).containsExactly(dir);
    final List<CarBlock> path = blocks(send("GET", "/ipfs/" + dir
        + "/big.bin?format=car&dag-scope=entity").body());
    assertThat(path).hasSize(6);
    assertThat(path.get(0).cid()).isEqualTo(dir);
    assertThat(path.get(1).cid()).isEqualTo(bigCid);
    // Bytes 1 MiB .. 1 MiB + 10 sit in the second leaf only.
    final List<CarBlock> range = blocks(send("GET", "/ipfs/" + bigCid
        + "?format=car&entity-bytes=" + CHUNK + ":" + (CHUNK + 10)).body());
    final PbNode root = DagPb.decode(node.storage().blockstore().get(bigCid).orElseThrow());
    assertThat(range).extracting(CarBlock::cid)
        .containsExactly(bigCid, root.links().get(1).hash());
    final List<CarBlock> tail = blocks(send("GET", "/ipfs/" + bigCid
        + "?format=car&entity-bytes=-10:*").body());
    assertThat(tail).extracting(CarBlock::cid)
        .containsExactly(bigCid, root.links().get(3).hash());
    // dag-cbor entity: the block alone; all: its link too.
    assertThat(blocks(send("GET", "/ipfs/" + cbor + "?format=car&dag-scope=entity").body()))
        .extracting(CarBlock::cid).containsExactly(cbor);
    assertThat(blocks(send("GET", "/ipfs/" + cbor + "?format=car").body()))
        .extracting(CarBlock::cid).containsExactly(cbor, image);
  }

  @Test
  void badInput_getsTheSpecErrors_andNothingIsServed() throws Exception {
    assertError(send("GET", "/ipfs/not-a-cid?format=raw"), 400, "invalid_cid");
    assertError(send("GET", "/ipfs/" + dir + "?format=tar"), 400, "unsupported_format");
    assertError(send("GET", "/ipfs/" + dir, "Accept", "application/vnd.ipld.car; version=2"),
        400, "unsupported_format");
    assertError(send("GET", "/ipfs/" + dir + "?format=car&dag-scope=everything"), 400,
        "invalid_query");
    assertError(send("GET", "/ipfs/" + bigCid + "?format=car&entity-bytes=abc"), 400,
        "invalid_entity_bytes");
    assertError(send("GET", "/ipfs/" + bigCid + "?format=car&entity-bytes=20:10"), 400,
        "invalid_entity_bytes");
    assertError(send("GET", "/ipfs/" + bigCid + "?format=car&entity-bytes=" + BIG + ":*"), 400,
        "range_not_satisfiable");
    assertError(send("GET", "/ipfs/" + dir + "/a.jpg?format=raw"), 400, "invalid_path");
    final Cid absent = Cid.v1(Multicodec.RAW, Multihash.sha2_256(new byte[] {1, 2, 3}));
    assertError(send("GET", "/ipfs/" + absent + "?format=raw"), 404, "content_not_found");
    assertError(send("GET", "/ipfs/" + absent + "?format=car"), 404, "content_not_found");
    final HttpResponse<byte[]> head = send("HEAD", "/ipfs/" + absent + "?format=raw");
    assertThat(head.statusCode()).isEqualTo(404);
  }

  /**
   * A HAMT-sharded directory made by {@code @helia/unixfs} addAll with the sharding threshold
   * lowered (interop/js/http-clients/make-hamt-car.mjs, committed as
   * {@code gateway/hamt-dir.car}): the CAR for a path through it carries the root shard, the
   * inner shards on the way and the file, so a client holding only the CAR follows the path
   * itself; a path into a sharded subdirectory too.
   */
  @Test
  void car_forAPathThroughAHamtDirectory_carriesTheInnerShardsOnTheWay() throws Exception {
    final MemoryBlockstore fixture = new MemoryBlockstore();
    final Cid root;
    try (var in = TrustlessGatewayIT.class.getResourceAsStream("/gateway/hamt-dir.car")) {
      final CarReader reader = new CarReader(in, CarReader.Limits.DEFAULT);
      root = reader.roots().get(0);
      for (Optional<CarBlock> next = reader.next(); next.isPresent(); next = reader.next()) {
        fixture.put(next.get().cid(), next.get().data());
        node.storage().blockstore().put(next.get().cid(), next.get().data());
      }
    }
    node.storage().pins().pin(root, TestPins.HOLDER);
    final UnixFsReader whole = new UnixFsReader(fixture);
    assertThat(whole.stat(root).kind()).isEqualTo(UnixFsEntry.Kind.HAMT_DIRECTORY);
    // A name whose bucket in the root is a sub-shard (the root alone does not hold it).
    String name = null;
    for (int i = 0; i < 300 && name == null; i++) {
      final List<Cid> through = new ArrayList<>();
      whole.resolve(root, "/f" + i + ".txt", through::add);
      if (through.size() > 1) {
        name = "f" + i + ".txt";
      }
    }
    assertThat(name).as("a file below an inner shard").isNotNull();

    for (final String[] path : List.of(new String[] {name, "file " + name.substring(1,
        name.length() - 4) + "\n"}, new String[] {"inner/deep.txt", "deep\n"})) {
      final HttpResponse<byte[]> response = send("GET", "/ipfs/" + root + "/" + path[0]
          + "?format=car&dag-scope=entity");
      assertThat(response.statusCode()).isEqualTo(200);
      final MemoryBlockstore fromCar = new MemoryBlockstore();
      final List<CarBlock> blocks = blocks(response.body());
      blocks.forEach(b -> fromCar.put(b.cid(), b.data()));
      assertThat(blocks.get(0).cid()).isEqualTo(root);
      final List<Cid> through = new ArrayList<>();
      final UnixFsReader carOnly = new UnixFsReader(fromCar);
      final UnixFsEntry file = carOnly.resolve(root, "/" + path[0], through::add);
      assertThat(new String(carOnly.open(file.cid()).readAllBytes(), StandardCharsets.UTF_8))
          .isEqualTo(path[1]);
      assertThat(blocks).extracting(CarBlock::cid).startsWith(through.toArray(Cid[]::new));
    }
  }

  @Test
  void routingV1_namesThisRelayAsProviderOfWhatItHolds_jsonAndNdjson() throws Exception {
    final HttpResponse<byte[]> json = send("GET", "/routing/v1/providers/" + bigCid);
    assertThat(json.statusCode()).isEqualTo(200);
    final JsonNode provider = JSON.readTree(json.body()).get("Providers").get(0);
    assertThat(provider.get("Schema").asText()).isEqualTo("peer");
    assertThat(provider.get("ID").asText()).isEqualTo(node.identity().peerId().toBase58());
    assertThat(provider.get("Protocols").get(0).asText()).isEqualTo("transport-bitswap");
    assertThat(provider.get("Addrs").size()).isPositive();
    final HttpResponse<byte[]> ndjson = send("GET", "/routing/v1/providers/" + bigCid,
        "Accept", "application/x-ndjson");
    assertThat(ndjson.headers().firstValue("content-type")).contains("application/x-ndjson");
    assertThat(JSON.readTree(new String(ndjson.body(), java.nio.charset.StandardCharsets.UTF_8)
        .split("\n")[0]).get("ID").asText()).isEqualTo(node.identity().peerId().toBase58());
    final Cid absent = Cid.v1(Multicodec.RAW, Multihash.sha2_256(new byte[] {9}));
    assertThat(send("GET", "/routing/v1/providers/" + absent).statusCode()).isEqualTo(404);
    assertError(send("GET", "/routing/v1/providers/zzz"), 400, "invalid_cid");
    final HttpResponse<byte[]> self = send("GET", "/routing/v1/peers/"
        + node.identity().peerId().toBase36Cid());
    assertThat(self.statusCode()).isEqualTo(200);
    assertThat(JSON.readTree(self.body()).get("Peers").get(0).get("ID").asText())
        .isEqualTo(node.identity().peerId().toBase58());
    assertThat(send("GET", "/routing/v1/peers/12D3KooWDpJ7As7BWAwRMfu1VU2WCqNjvq387JEYKDBj4kx6nXTN")
        .statusCode()).isEqualTo(404);
    assertError(send("GET", "/routing/v1/peers/nope"), 400, "invalid_peer_id");
  }
}
