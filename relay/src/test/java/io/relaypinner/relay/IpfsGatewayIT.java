package io.relaypinner.relay;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.relaypinner.ipfs.blockstore.Blockstore;
import io.relaypinner.ipfs.dagpb.DagPb;
import io.relaypinner.ipfs.dagpb.PbNode;
import io.relaypinner.ipfs.unixfs.UnixFsImporter;
import io.relaypinner.libp2p.crypto.Ed25519PrivateKey;
import io.relaypinner.libp2p.crypto.PrivateKey;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.multiformats.Multicodec;
import io.relaypinner.multiformats.Multihash;
import io.relaypinner.relay.config.RelayConfig;
import io.relaypinner.relay.identity.NodeIdentity;
import io.relaypinner.relay.testing.RawHttpResponse;
import io.relaypinner.relay.testing.TestPins;
import io.relaypinner.relay.testing.UnixFsFixtures;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
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
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code GET /ipfs/<cid>[/<path>]} (spec 4.6) through a real node's listener. */
class IpfsGatewayIT {
  private static final Clock CLOCK =
      Clock.fixed(Instant.parse("2026-11-22T10:00:00Z"), ZoneOffset.UTC);
  private static final ObjectMapper JSON = new ObjectMapper();
  /** Above three 1 MiB chunks, not a multiple of the chunk size. */
  private static final int BIG = 3 * 1024 * 1024 + 12_345;

  private final HttpClient client = HttpClient.newBuilder()
      .version(HttpClient.Version.HTTP_1_1)
      .connectTimeout(Duration.ofSeconds(5))
      .build();
  private final List<AutoCloseable> toClose = new ArrayList<>();
  @TempDir
  Path dataDir;

  /** What the tests serve: a big file and a directory with {@code a/b.jpg}. */
  private record Content(byte[] big, Cid bigCid, byte[] image, Cid imageCid, Cid dir) {}

  @AfterEach
  void tearDown() throws Exception {
    for (int i = toClose.size() - 1; i >= 0; i--) {
      toClose.get(i).close();
    }
  }

  private static NodeIdentity identity() {
    final byte[] seed = new byte[32];
    Arrays.fill(seed, (byte) 9);
    final PrivateKey key = Ed25519PrivateKey.fromSeed(seed);
    return new NodeIdentity(key, key.publicKey().peerId(),
        NodeIdentity.servingZone(key.publicKey().peerId(), "libp2p.direct"),
        NodeIdentity.Source.ENVIRONMENT);
  }

  private RelayNode start() {
    final RelayConfig config = RelayConfig.builder().dataDir(dataDir)
        .metricsHost("127.0.0.1").metricsPort(0)
        .listenIpv4("127.0.0.1").tcpPort(0).wsPort(0).quicPort(0).ipv6Disabled(true).build();
    final RelayNode node = new RelayNode(config, identity(), new PrometheusRegistry(), CLOCK);
    toClose.add(node);
    node.start();
    return node;
  }

  /** Bytes that never repeat a chunk: identical chunks would share one block. */
  private static byte[] pattern(final int length, final int seed) {
    final byte[] out = new byte[length];
    new Random(seed).nextBytes(out);
    return out;
  }

  /** Imports and pins the test content. */
  private static Content content(final RelayNode node) {
    final Blockstore store = node.storage().blockstore();
    final UnixFsImporter importer = new UnixFsImporter(store, UnixFsImporter.Options.HELIA);
    final byte[] big = pattern(BIG, 1);
    final Cid bigCid = importer.importBytes(big);
    final byte[] image = pattern(5_000, 2);
    final Cid imageCid = importer.importBytes(image);
    final Cid dir = UnixFsFixtures.directory(store, "a",
        UnixFsFixtures.directory(store, "b.jpg", imageCid));
    node.storage().pins().pin(bigCid, TestPins.HOLDER);
    node.storage().pins().pin(dir, TestPins.HOLDER);
    return new Content(big, bigCid, image, imageCid, dir);
  }

  private URI uri(final RelayNode node, final String path) {
    return URI.create("http://127.0.0.1:" + node.http().port().getAsInt() + path);
  }

  private HttpResponse<byte[]> get(final RelayNode node, final String path,
      final String... headers) throws IOException, InterruptedException {
    final HttpRequest.Builder request =
        HttpRequest.newBuilder(uri(node, path)).timeout(Duration.ofSeconds(10));
    for (int i = 0; i < headers.length; i += 2) {
      request.header(headers[i], headers[i + 1]);
    }
    return client.send(request.build(), HttpResponse.BodyHandlers.ofByteArray());
  }

  private static void assertError(final HttpResponse<byte[]> response, final int status,
      final String code) throws IOException {
    assertThat(response.statusCode()).isEqualTo(status);
    assertThat(response.headers().firstValue("content-type"))
        .contains("application/json; charset=utf-8");
    final JsonNode body = JSON.readTree(response.body());
    assertThat(body.get("ok").asBoolean(true)).isFalse();
    assertThat(body.get("code").asText()).isEqualTo(code);
    assertThat(body.get("error").isTextual()).isTrue();
  }

  private Socket connect(final RelayNode node) throws IOException {
    final Socket socket = new Socket();
    toClose.add(socket);
    socket.connect(new InetSocketAddress("127.0.0.1", node.http().port().getAsInt()), 5_000);
    socket.setSoTimeout(10_000);
    return socket;
  }

  private static void send(final Socket socket, final String text) throws IOException {
    socket.getOutputStream().write(text.getBytes(StandardCharsets.ISO_8859_1));
    socket.getOutputStream().flush();
  }

  @Test
  void get_shouldStreamAPinnedFile_withTheSpecHeaders() throws Exception {
    final RelayNode node = start();
    final Content content = content(node);

    final HttpResponse<byte[]> response =
        get(node, "/ipfs/" + content.bigCid(), "Origin", "https://app.example");

    assertThat(response.statusCode()).isEqualTo(200);
    assertThat(response.body()).isEqualTo(content.big());
    assertThat(response.headers().firstValue("content-type"))
        .contains("application/octet-stream");
    assertThat(response.headers().firstValue("cache-control")).contains("private, no-store");
    assertThat(response.headers().firstValue("content-length")).contains(Integer.toString(BIG));
    assertThat(response.headers().firstValue("etag")).contains("\"" + content.bigCid() + "\"");
    assertThat(response.headers().firstValue("accept-ranges")).contains("bytes");
    assertThat(response.headers().firstValue("access-control-allow-origin")).isPresent();
  }

  @Test
  void get_shouldServeAFileInsideAPinnedDirectory_byPathAndEncodedPath() throws Exception {
    final RelayNode node = start();
    final Content content = content(node);

    final HttpResponse<byte[]> plain = get(node, "/ipfs/" + content.dir() + "/a/b.jpg");
    final HttpResponse<byte[]> encoded = get(node, "/ipfs/" + content.dir() + "/a/b%2Ejpg");

    assertThat(plain.statusCode()).isEqualTo(200);
    assertThat(plain.body()).isEqualTo(content.image());
    assertThat(plain.headers().firstValue("etag")).contains("\"" + content.imageCid() + "\"");
    assertThat(encoded.statusCode()).isEqualTo(200);
    assertThat(encoded.body()).isEqualTo(content.image());
  }

  @Test
  void get_shouldSendAOneBlockFileFromItsBlockFile_wholeRangedAndHead() throws Exception {
    final RelayNode node = start();
    final byte[] data = pattern(1024 * 1024, 4);
    final Cid cid = new UnixFsImporter(node.storage().blockstore(), UnixFsImporter.Options.HELIA)
        .importBytes(data);
    node.storage().pins().pin(cid, TestPins.HOLDER);
    final String path = "/ipfs/" + cid;

    final HttpResponse<byte[]> whole = get(node, path);
    final HttpResponse<byte[]> ranged = get(node, path, "Range", "bytes=1000-1999");
    final HttpResponse<Void> head = client.send(HttpRequest.newBuilder(uri(node, path))
        .method("HEAD", HttpRequest.BodyPublishers.noBody()).build(),
        HttpResponse.BodyHandlers.discarding());

    assertThat(cid.codecName()).isEqualTo("raw");
    assertThat(whole.statusCode()).isEqualTo(200);
    assertThat(whole.body()).isEqualTo(data);
    assertThat(whole.headers().firstValue("etag")).contains("\"" + cid + "\"");
    assertThat(ranged.statusCode()).isEqualTo(206);
    assertThat(ranged.body()).isEqualTo(Arrays.copyOfRange(data, 1000, 2000));
    assertThat(ranged.headers().firstValue("content-range"))
        .contains("bytes 1000-1999/" + data.length);
    assertThat(head.statusCode()).isEqualTo(200);
    assertThat(head.headers().firstValue("content-length"))
        .contains(Integer.toString(data.length));
    assertError(get(node, path, "Range", "bytes=" + data.length + "-"), 416,
        "range_not_satisfiable");
    node.storage().blockstore().delete(cid);
    assertError(get(node, path), 404, "content_not_found");
  }

  @Test
  void get_shouldServeTheOtherCidVersion_ofAPinnedDagPbRoot() throws Exception {
    final RelayNode node = start();
    final Content content = content(node);
    final Cid v0 = Cid.v0(content.bigCid().multihash());

    final HttpResponse<byte[]> response = get(node, "/ipfs/" + v0);

    assertThat(response.statusCode()).isEqualTo(200);
    assertThat(response.body()).isEqualTo(content.big());
  }

  @Test
  void get_shouldAnswerEachClientErrorOfTheSpec_withItsJsonCode() throws Exception {
    final RelayNode node = start();
    final Content content = content(node);
    // Neither pinned nor held (no bitswap peer is connected, so pinned-first answers at once).
    final Cid unpinned = Cid.v1(Multicodec.RAW, Multihash.sha2_256(pattern(100, 3)));

    assertError(get(node, "/ipfs/"), 400, "invalid_cid");
    assertError(get(node, "/ipfs/not-a-cid"), 400, "invalid_cid");
    assertError(get(node, "/ipfs/" + content.dir()), 400, "directory_path_required");
    assertError(get(node, "/ipfs/" + content.dir() + "/"), 400, "directory_path_required");
    assertError(get(node, "/ipfs/" + content.dir() + "/a"), 400, "directory_path_required");
    assertError(get(node, "/ipfs/" + unpinned), 404, "content_not_found");
    assertError(get(node, "/ipfs/" + content.dir() + "/a/nope.jpg"), 404, "content_not_found");
    assertError(get(node, "/ipfs/" + content.dir() + "/a/b.jpg/deeper"), 404,
        "content_not_found");
    assertError(get(node, "/ipfs/" + content.dir() + "/a%2Fb.jpg"), 404, "content_not_found");
    assertError(get(node, "/ipfs/" + content.dir() + "/a/%C3%28.jpg"), 400,
        "invalid_path_encoding");
  }

  @Test
  void get_shouldAnswer400_whenPercentEncodingIsBroken() throws Exception {
    final RelayNode node = start();
    final Socket socket = connect(node);

    send(socket, "GET /ipfs/%ZZ HTTP/1.1\r\nHost: x\r\n\r\n");
    final RawHttpResponse response = RawHttpResponse.read(socket.getInputStream(), false);

    assertThat(response.status()).isEqualTo(400);
    assertThat(JSON.readTree(response.body()).get("code").asText())
        .isEqualTo("invalid_path_encoding");
  }

  @Test
  void get_shouldAnswer404_whenABlockOfAPinnedDagIsMissing() throws Exception {
    final RelayNode node = start();
    final Content content = content(node);
    node.storage().blockstore().delete(content.imageCid());

    assertError(get(node, "/ipfs/" + content.dir() + "/a/b.jpg"), 404, "content_not_found");
  }

  @Test
  void get_shouldCloseTheConnection_whenABlockGoesMissingAfterTheHeaders() throws Exception {
    final RelayNode node = start();
    final Content content = content(node);
    final PbNode root = DagPb.decode(
        node.storage().blockstore().get(content.bigCid()).orElseThrow());
    node.storage().blockstore().delete(root.links().get(2).hash());
    final Socket socket = connect(node);

    send(socket, "GET /ipfs/" + content.bigCid() + " HTTP/1.1\r\nHost: x\r\n\r\n");
    final InputStream in = socket.getInputStream();
    final RawHttpResponse head = RawHttpResponse.read(in, true);

    assertThat(head.status()).isEqualTo(200);
    final byte[] received = in.readAllBytes();
    // The two blocks before the missing one arrive whole, then the connection ends.
    assertThat(received.length).isGreaterThanOrEqualTo(2 * 1024 * 1024).isLessThan(BIG);
    assertThat(Arrays.equals(received, Arrays.copyOf(content.big(), received.length)))
        .as("received bytes are a prefix of the content").isTrue();
  }

  @Test
  void range_shouldAnswer206_forStartMiddleSuffixAndOpenRanges() throws Exception {
    final RelayNode node = start();
    final Content content = content(node);
    final String path = "/ipfs/" + content.bigCid();
    final byte[] big = content.big();
    final int middle = 1024 * 1024 - 10;

    final HttpResponse<byte[]> start = get(node, path, "Range", "bytes=0-99");
    final HttpResponse<byte[]> across =
        get(node, path, "Range", "bytes=" + middle + "-" + (middle + 19));
    final HttpResponse<byte[]> suffix = get(node, path, "Range", "bytes=-100");
    final HttpResponse<byte[]> open = get(node, path, "Range", "bytes=3000000-");

    assertThat(start.statusCode()).isEqualTo(206);
    assertThat(start.body()).isEqualTo(Arrays.copyOfRange(big, 0, 100));
    assertThat(start.headers().firstValue("content-range")).contains("bytes 0-99/" + BIG);
    assertThat(start.headers().firstValue("content-length")).contains("100");
    assertThat(across.statusCode()).isEqualTo(206);
    assertThat(across.body()).isEqualTo(Arrays.copyOfRange(big, middle, middle + 20));
    assertThat(suffix.statusCode()).isEqualTo(206);
    assertThat(suffix.body()).isEqualTo(Arrays.copyOfRange(big, BIG - 100, BIG));
    assertThat(suffix.headers().firstValue("content-range"))
        .contains("bytes " + (BIG - 100) + "-" + (BIG - 1) + "/" + BIG);
    assertThat(open.statusCode()).isEqualTo(206);
    assertThat(open.body()).isEqualTo(Arrays.copyOfRange(big, 3_000_000, BIG));
  }

  @Test
  void range_shouldAnswer416_outsideTheContent_and200_forSeveralRanges() throws Exception {
    final RelayNode node = start();
    final Content content = content(node);
    final String path = "/ipfs/" + content.bigCid();

    final HttpResponse<byte[]> outside = get(node, path, "Range", "bytes=" + BIG + "-");
    final HttpResponse<byte[]> several = get(node, path, "Range", "bytes=0-1,5-6");

    assertError(outside, 416, "range_not_satisfiable");
    assertThat(outside.headers().firstValue("content-range")).contains("bytes */" + BIG);
    assertThat(several.statusCode()).isEqualTo(200);
    assertThat(several.body()).isEqualTo(content.big());
  }

  @Test
  void head_shouldSendTheHeadersWithoutBody_andKeepTheConnectionInOrder() throws Exception {
    final RelayNode node = start();
    final Content content = content(node);
    final Socket socket = connect(node);
    final String image = "/ipfs/" + content.dir() + "/a/b.jpg";

    // Pipelined: HEAD, then a ranged GET, then a full GET, in one write.
    send(socket, "HEAD /ipfs/" + content.bigCid() + " HTTP/1.1\r\nHost: x\r\n\r\n"
        + "GET " + image + " HTTP/1.1\r\nHost: x\r\nRange: bytes=10-19\r\n\r\n"
        + "GET " + image + " HTTP/1.1\r\nHost: x\r\n\r\n");
    final InputStream in = socket.getInputStream();
    final RawHttpResponse head = RawHttpResponse.read(in, true);
    final RawHttpResponse ranged = RawHttpResponse.read(in, false);
    final RawHttpResponse full = RawHttpResponse.read(in, false);

    assertThat(head.status()).isEqualTo(200);
    assertThat(head.header("content-length")).isEqualTo(Integer.toString(BIG));
    assertThat(head.header("etag")).isEqualTo("\"" + content.bigCid() + "\"");
    assertThat(head.header("accept-ranges")).isEqualTo("bytes");
    assertThat(head.header("content-type")).isEqualTo("application/octet-stream");
    assertThat(ranged.status()).isEqualTo(206);
    assertThat(ranged.body()).isEqualTo(Arrays.copyOfRange(content.image(), 10, 20));
    assertThat(full.status()).isEqualTo(200);
    assertThat(full.body()).isEqualTo(content.image());
  }

  @Test
  void restart_shouldServeWhatWasPinnedBefore() throws Exception {
    final RelayNode first = start();
    final Content content = content(first);
    first.close();

    final RelayNode second = start();
    final HttpResponse<byte[]> response = get(second, "/ipfs/" + content.bigCid());

    assertThat(second.storage().pins().isPinned(content.bigCid())).isTrue();
    assertThat(response.statusCode()).isEqualTo(200);
    assertThat(response.body()).isEqualTo(content.big());
  }

  @Test
  void metrics_shouldCountRequestsByStatus_andBytes() throws Exception {
    final RelayNode node = start();
    final Content content = content(node);
    get(node, "/ipfs/" + content.dir() + "/a/b.jpg");
    get(node, "/ipfs/" + content.dir() + "/a/none");

    // Bytes are counted when the socket write completes, which may trail the client's read.
    await().atMost(Duration.ofSeconds(5)).untilAsserted(() ->
        assertThat(new String(get(node, "/metrics").body(), StandardCharsets.UTF_8))
            .contains("relay_ipfs_gateway_requests_total{status=\"200\"} 1.0")
            .contains("relay_ipfs_gateway_requests_total{status=\"404\"} 1.0")
            .contains("relay_ipfs_gateway_bytes_total 5000.0"));
  }

  @Test
  void blockstore_shouldBeUnavailable_beforeStart() {
    final RelayNode node = new RelayNode(RelayConfig.builder().dataDir(dataDir).build(),
        identity(), new PrometheusRegistry(), CLOCK);
    toClose.add(node);

    assertThatThrownBy(node::storage).isInstanceOf(IllegalStateException.class);
  }

}
