package io.relaypinner.relay.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.relaypinner.ipfs.dagpb.DagPb;
import io.relaypinner.ipfs.unixfs.UnixFsImporter;
import io.relaypinner.libp2p.crypto.KeyType;
import io.relaypinner.libp2p.crypto.Keys;
import io.relaypinner.libp2p.crypto.PrivateKey;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.multiformats.Multiaddr;
import io.relaypinner.multiformats.PeerId;
import io.relaypinner.relay.RelayNode;
import io.relaypinner.relay.config.GatewayMode;
import io.relaypinner.relay.config.RelayConfig;
import io.relaypinner.relay.identity.NodeIdentity;
import io.relaypinner.relay.testing.TestPins;
import io.relaypinner.testkit.JsPeer;
import io.relaypinner.testkit.NodeJs;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.util.Base64;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The relay's HTTP interfaces against the real npm clients of interop/js/http-clients (Helia 6
 * generation) and interop/js/stack-c/http-clients.mjs (Helia 7): Helia with only a trustless
 * gateway block broker fetches a 5 MiB chunked file and an OrbitDB 4 entry block; verified-fetch
 * fetches a file and a raw block; the CAR parses with {@code @ipld/car} and every block hashes to
 * its CID; the delegated routing client finds the relay as provider; {@code @helia/remote-pinning}
 * pins a CID only a Helia peer holds, sees it pinned, lists and removes it.
 */
class HttpClientsJsInteropIT {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String TOKEN = "interop-pinning-token";

  @TempDir
  Path dir;
  private RelayNode node;
  private JsPeer holder;

  @AfterEach
  void close() {
    if (holder != null) {
      holder.close();
    }
    if (node != null) {
      node.close();
    }
  }

  private static String sha256(final byte[] data) throws Exception {
    return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(data));
  }

  /** An entry block written by OrbitDB 4 (the orbitdb module's stack B vectors). */
  private static Map.Entry<Cid, byte[]> orbitDbEntry() throws Exception {
    final JsonNode vectors = JSON.readTree(
        Path.of("../orbitdb/src/test/resources/orbitdb-vectors-stack-b.json").toFile());
    final Cid hash = Cid.parse(vectors.get("dbs").get(0).get("entries").get(0).get("hash")
        .asText());
    final Iterator<Map.Entry<String, JsonNode>> blocks = vectors.get("blocks").fields();
    while (blocks.hasNext()) {
      final Map.Entry<String, JsonNode> block = blocks.next();
      if (Cid.parse(block.getKey()).multihash().equals(hash.multihash())) {
        return Map.entry(hash, Base64.getDecoder().decode(block.getValue().asText()));
      }
    }
    throw new IllegalStateException("no block for entry " + hash);
  }

  /**
   * Once per client generation: the npm project {@code http-clients} (Helia 6, the holder on
   * stack B) and {@code stack-c}'s {@code http-clients.mjs} (Helia 7: an HTTP-only node with the
   * relay as delegated router and recursive gateway; the holder on stack C).
   */
  @ParameterizedTest(name = "{0}")
  @CsvSource({"http-clients, stack-b", "stack-c, stack-c"})
  void realHttpClients_fetchVerifyRouteAndPin(final String clients, final String holderStack)
      throws Exception {
    final PrivateKey key = Keys.generate(KeyType.ED25519, new SecureRandom());
    node = new RelayNode(RelayConfig.builder().dataDir(dir.resolve("relay"))
        .metricsHost("127.0.0.1").metricsPort(0).listenIpv4("127.0.0.1").tcpPort(0).wsPort(0)
        .quicPort(0)
        .ipv6Disabled(true).gatewayMode(GatewayMode.PINNED_FIRST)
        .pinningServiceTokens(List.of(TOKEN)).build(),
        new NodeIdentity(key, key.publicKey().peerId(),
            NodeIdentity.servingZone(key.publicKey().peerId(), "libp2p.direct"),
            NodeIdentity.Source.ENVIRONMENT), new PrometheusRegistry(), Clock.systemUTC());
    node.start();
    final byte[] file = new byte[5 * 1024 * 1024];
    new Random(51).nextBytes(file);
    final Cid fileCid = new UnixFsImporter(node.storage().blockstore(),
        UnixFsImporter.Options.HELIA).importBytes(file);
    node.storage().pins().pin(fileCid, TestPins.HOLDER);
    final Cid leaf = DagPb.decode(node.storage().blockstore().get(fileCid).orElseThrow())
        .links().get(2)
        .hash();
    final Map.Entry<Cid, byte[]> entry = orbitDbEntry();
    node.storage().blockstore().put(entry.getKey(), entry.getValue());
    node.storage().pins().pin(entry.getKey(), TestPins.HOLDER);

    // A Helia peer (of the clients' generation) holds what the pinning service is asked to pin.
    final Path held = dir.resolve("held.bin");
    final byte[] heldBytes = new byte[700_000];
    new Random(52).nextBytes(heldBytes);
    Files.write(held, heldBytes);
    holder = NodeJs.start(holderStack, "../common/bitswap-peer.mjs", "--listen", "--add",
        held.toString(), "--chunk", "262144");
    final Cid heldCid = Cid.parse(holder.nextEvent("added", Duration.ofSeconds(60)).get("cid")
        .asText());
    final JsonNode ready = holder.nextEvent("ready", Duration.ofSeconds(60));
    final String origin = Multiaddr.parse(ready.get("addrs").get(0).asText())
        .withPeerId(PeerId.parse(ready.get("peerId").asText())).toString();

    final String url = "http://127.0.0.1:" + node.http().port().getAsInt();
    final NodeJs.Result result = NodeJs.run(clients, "http-clients.mjs",
        Duration.ofMinutes(3), "--url", url, "--file", fileCid.toString(), "--entry",
        entry.getKey().toString(), "--raw", leaf.toString(), "--car", fileCid.toString(),
        "--peer", node.identity().peerId().toBase58(), "--pin", heldCid.toString(),
        "--origin", origin, "--token", TOKEN);
    final Map<String, JsonNode> checks = new HashMap<>();
    for (final String line : result.stdout().split("\n")) {
      if (!line.isBlank()) {
        final JsonNode json = JSON.readTree(line);
        checks.put(json.path("check").asText(), json);
      }
    }

    assertThat(checks.get("trustless-file").get("sha256").asText()).isEqualTo(sha256(file));
    assertThat(checks.get("trustless-entry").get("verified").asBoolean()).isTrue();
    assertThat(checks.get("trustless-entry").get("v").asInt()).isEqualTo(2);
    assertThat(checks.get("verified-fetch-file").get("sha256").asText()).isEqualTo(sha256(file));
    assertThat(checks.get("verified-fetch-raw").get("verified").asBoolean()).isTrue();
    assertThat(checks.get("verified-fetch-raw").get("bytes").asInt())
        .isEqualTo(node.storage().blockstore().get(leaf).orElseThrow().length);
    final JsonNode car = checks.get("car");
    assertThat(car.get("contentType").asText()).startsWith("application/vnd.ipld.car; version=1");
    assertThat(car.get("roots").get(0).asText()).isEqualTo(fileCid.toString());
    assertThat(car.get("blocks").asInt()).isEqualTo(6);
    assertThat(car.get("verified").asInt()).isEqualTo(6);
    final JsonNode routing = checks.get("routing");
    assertThat(routing.get("providers").get(0).get("id").asText())
        .isEqualTo(node.identity().peerId().toBase58());
    assertThat(routing.get("providers").get(0).get("protocols").get(0).asText())
        .isEqualTo("transport-bitswap");
    assertThat(routing.get("peers").get(0).asText())
        .isEqualTo(node.identity().peerId().toBase58());
    final JsonNode pinning = checks.get("remote-pinning");
    assertThat(checks.get("remote-pin-added").get("cid").asText()).isEqualTo(heldCid.toString());
    assertThat(pinning.get("status").asText()).isEqualTo("pinned");
    assertThat(pinning.get("listed").toString()).contains(heldCid.toString());
    assertThat(pinning.get("countAfterRemove").asInt()).isZero();
    await().atMost(Duration.ofSeconds(5)).until(() -> !node.storage().pins().isPinned(heldCid));
    // The bytes came over bitswap from the holder, and stay until GC.
    assertThat(node.storage().blockstore().has(heldCid)).isTrue();
  }
}
