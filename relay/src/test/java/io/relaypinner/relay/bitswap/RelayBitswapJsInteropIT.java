package io.relaypinner.relay.bitswap;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.relaypinner.ipfs.bitswap.Bitswap;
import io.relaypinner.libp2p.crypto.KeyType;
import io.relaypinner.libp2p.crypto.Keys;
import io.relaypinner.libp2p.crypto.PrivateKey;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.multiformats.Multiaddr;
import io.relaypinner.multiformats.Multicodec;
import io.relaypinner.multiformats.Multihash;
import io.relaypinner.multiformats.PeerId;
import io.relaypinner.relay.RelayNode;
import io.relaypinner.relay.config.GatewayMode;
import io.relaypinner.relay.config.RelayConfig;
import io.relaypinner.relay.identity.NodeIdentity;
import io.relaypinner.testkit.JsPeer;
import io.relaypinner.testkit.NodeJs;
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
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The relay's {@code GET /ipfs/<cid>} network fallback (spec 4.6, pinned-first) against content
 * only a connected Helia peer holds (interop/js/common/bitswap-peer.mjs), and the pinned-only
 * mode that never asks the network.
 */
class RelayBitswapJsInteropIT {
  private static final Duration LINE = Duration.ofSeconds(60);
  private static final ObjectMapper JSON = new ObjectMapper();
  private final HttpClient client = HttpClient.newBuilder()
      .version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(5)).build();
  private final List<AutoCloseable> toClose = new ArrayList<>();

  @TempDir
  Path dir;

  @AfterEach
  void close() throws Exception {
    for (int i = toClose.size() - 1; i >= 0; i--) {
      toClose.get(i).close();
    }
  }

  private RelayNode relay(final GatewayMode mode, final Duration fallbackTimeout) {
    final PrivateKey key = Keys.generate(KeyType.ED25519, new SecureRandom());
    final NodeIdentity identity = new NodeIdentity(key, key.publicKey().peerId(),
        NodeIdentity.servingZone(key.publicKey().peerId(), "libp2p.direct"),
        NodeIdentity.Source.ENVIRONMENT);
    final RelayNode node = new RelayNode(RelayConfig.builder().dataDir(dir.resolve("relay"))
        .metricsHost("127.0.0.1").metricsPort(0).listenIpv4("127.0.0.1").tcpPort(0).wsPort(0)
        .quicPort(0)
        .ipv6Disabled(true).gatewayMode(mode).ipfsFallbackTimeout(fallbackTimeout).build(),
        identity, new PrometheusRegistry(), Clock.systemUTC());
    toClose.add(node);
    node.start();
    return node;
  }

  /** Starts Helia holding {@code content}, connects the relay to it; returns the file's CID. */
  private Cid heliaWith(final RelayNode node, final String stack, final byte[] content)
      throws Exception {
    final Path file = dir.resolve("helia.bin");
    Files.write(file, content);
    final JsPeer helia = NodeJs.start(stack, "../common/bitswap-peer.mjs", "--listen", "--add",
        file.toString(), "--chunk", "262144");
    toClose.add(helia);
    final Cid cid = Cid.parse(helia.nextEvent("added", LINE).get("cid").asText());
    final JsonNode ready = helia.nextEvent("ready", LINE);
    final PeerId heliaId = PeerId.parse(ready.get("peerId").asText());
    node.network().host().dial(Multiaddr.parse(ready.get("addrs").get(0).asText())
        .withPeerId(heliaId)).get(10, TimeUnit.SECONDS);
    final Bitswap bitswap = node.content().bitswap();
    await().atMost(LINE).until(() -> bitswap.peers().get().contains(heliaId));
    return cid;
  }

  private HttpResponse<byte[]> get(final RelayNode node, final String path) throws Exception {
    return client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
        + node.http().port().getAsInt() + path)).timeout(Duration.ofSeconds(60)).build(),
        HttpResponse.BodyHandlers.ofByteArray());
  }

  private static byte[] randomBytes(final int size, final long seed) {
    final byte[] content = new byte[size];
    new Random(seed).nextBytes(content);
    return content;
  }

  @ParameterizedTest
  @ValueSource(strings = {"stack-a", "stack-b", "stack-c"})
  void get_shouldStreamContentOnlyAConnectedHeliaHolds_whenPinnedFirst(final String stack)
      throws Exception {
    final RelayNode node = relay(GatewayMode.PINNED_FIRST, Duration.ofSeconds(30));
    final byte[] content = randomBytes(2 * 1024 * 1024 + 333, 21);
    final Cid cid = heliaWith(node, stack, content);

    final HttpResponse<byte[]> response = get(node, "/ipfs/" + cid);

    assertThat(response.statusCode()).isEqualTo(200);
    assertThat(response.body()).isEqualTo(content);
    // Fetched, kept, not pinned.
    assertThat(node.storage().pins().isPinned(cid)).isFalse();
    assertThat(node.storage().blockstore().has(cid)).isTrue();
    final String metrics = new String(get(node, "/metrics").body(), StandardCharsets.UTF_8);
    assertThat(metrics).contains("bitswap_blocks_received_total 10.0")
        .contains("bitswap_bytes_received_total").contains("bitswap_wantlist_size")
        .contains("bitswap_duplicate_blocks_total");
  }

  @Test
  void get_shouldAnswer404WithoutAskingPeers_whenPinnedOnly() throws Exception {
    final RelayNode node = relay(GatewayMode.PINNED_ONLY, Duration.ofSeconds(30));
    final Cid cid = heliaWith(node, "stack-b", randomBytes(300_000, 22));

    final HttpResponse<byte[]> response = get(node, "/ipfs/" + cid);

    assertThat(response.statusCode()).isEqualTo(404);
    assertThat(JSON.readTree(response.body()).get("code").asText())
        .isEqualTo("content_not_found");
    assertThat(node.content().bitswap().stats().messagesSent()).isZero();
    assertThat(node.storage().blockstore().has(cid)).isFalse();
  }

  @Test
  void get_shouldAnswer504_whenNoConnectedPeerHasTheContentInTime() throws Exception {
    final RelayNode node = relay(GatewayMode.PINNED_FIRST, Duration.ofMillis(1_500));
    heliaWith(node, "stack-b", randomBytes(1_000, 23));
    final Cid nobodyHas = Cid.v1(Multicodec.RAW, Multihash.sha2_256(
        "nobody has this".getBytes(StandardCharsets.UTF_8)));

    final HttpResponse<byte[]> response = get(node, "/ipfs/" + nobodyHas);

    assertThat(response.statusCode()).isEqualTo(504);
    final JsonNode body = JSON.readTree(response.body());
    assertThat(body.get("ok").asBoolean()).isFalse();
    assertThat(body.get("code").asText()).isEqualTo("gateway_timeout");
    assertThat(body.get("error").asText()).isNotEmpty();
  }
}
