package io.relaypinner.ipfs.bitswap;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.relaypinner.ipfs.blockstore.MemoryBlockstore;
import io.relaypinner.ipfs.datastore.MemoryDatastore;
import io.relaypinner.ipfs.pin.CodecLinkResolver;
import io.relaypinner.ipfs.pin.PinHolder;
import io.relaypinner.ipfs.pin.PinResult;
import io.relaypinner.ipfs.pin.PinStore;
import io.relaypinner.ipfs.unixfs.UnixFsImporter;
import io.relaypinner.ipfs.unixfs.UnixFsReader;
import io.relaypinner.libp2p.crypto.KeyType;
import io.relaypinner.libp2p.crypto.Keys;
import io.relaypinner.libp2p.host.Host;
import io.relaypinner.libp2p.host.HostConfig;
import io.relaypinner.libp2p.netty.EventLoops;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.multiformats.Multiaddr;
import io.relaypinner.multiformats.PeerId;
import io.relaypinner.testkit.JsPeer;
import io.relaypinner.testkit.NodeJs;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Bitswap between the Java node and Helia: stack A (Helia 5 generation, {@code @helia/bitswap}
 * 2.2) and stack B (Helia 6 generation, {@code @helia/bitswap} 3.2), via
 * interop/js/common/bitswap-peer.mjs.
 */
class BitswapJsInteropIT {
  private static final Logger LOG = LoggerFactory.getLogger(BitswapJsInteropIT.class);
  private static final Duration LINE = Duration.ofSeconds(60);
  private final EventLoops loops = EventLoops.create(2, "bitswap-interop");
  private final ExecutorService storage = Executors.newFixedThreadPool(4);
  private final List<JsPeer> jsPeers = new ArrayList<>();
  private final MemoryBlockstore blocks = new MemoryBlockstore();
  private Host host;
  private Bitswap bitswap;

  @TempDir
  Path dir;

  @BeforeEach
  void start() throws Exception {
    host = new Host(Keys.generate(KeyType.ED25519, new SecureRandom()), HostConfig.builder()
        .listenAddresses(List.of(Multiaddr.parse("/ip4/127.0.0.1/tcp/0")))
        .agentVersion("relay-pinner/interop-test").build(), loops, Clock.systemUTC());
    host.start().get(5, TimeUnit.SECONDS);
    bitswap = Bitswap.start(host, blocks, storage, BitswapConfig.DEFAULT, host.clock());
  }

  @AfterEach
  void stop() {
    LOG.info("bitswap stats after the test: {}", bitswap.stats());
    jsPeers.forEach(JsPeer::close);
    bitswap.close();
    host.close();
    storage.shutdownNow();
    loops.shutdownGracefully(Duration.ofSeconds(3));
  }

  private JsPeer js(final String stack, final String... args) {
    final JsPeer peer = NodeJs.start(stack, "../common/bitswap-peer.mjs", args);
    jsPeers.add(peer);
    return peer;
  }

  private static byte[] randomBytes(final int size, final long seed) {
    final byte[] content = new byte[size];
    new Random(seed).nextBytes(content);
    return content;
  }

  @ParameterizedTest
  @ValueSource(strings = {"stack-a", "stack-b", "stack-c"})
  void networkPin_shouldFetchHeliasFile_whenConnectedToHelia(final String stack)
      throws Exception {
    final byte[] content = randomBytes(5 * 1024 * 1024, 11);
    final Path file = dir.resolve("helia-file.bin");
    Files.write(file, content);
    final JsPeer helia = js(stack, "--listen", "--add", file.toString(), "--chunk", "262144");
    final Cid root = Cid.parse(helia.nextEvent("added", LINE).get("cid").asText());
    final JsonNode ready = helia.nextEvent("ready", LINE);
    final PeerId heliaId = PeerId.parse(ready.get("peerId").asText());
    host.dial(Multiaddr.parse(ready.get("addrs").get(0).asText()).withPeerId(heliaId))
        .get(10, TimeUnit.SECONDS);
    await().atMost(LINE).until(() -> bitswap.peers().get().contains(heliaId));
    final PinStore pins = new PinStore(new MemoryDatastore(), blocks,
        CodecLinkResolver.standard());

    final PinResult.Pinned pinned = new NetworkPinner(bitswap, pins,
        CodecLinkResolver.standard(), storage)
        .pin(root, PinHolder.of("test", "bitswap"), new NetworkPinner.Limits(16, 10_000, 64L << 20, Duration.ofSeconds(90)))
        .get(120, TimeUnit.SECONDS);

    assertThat(pinned.root()).isEqualTo(root);
    // 20 leaves of 256 KiB under one dag-pb root.
    assertThat(pinned.blocks()).isEqualTo(21);
    assertThat(pins.isPinned(root)).isTrue();
    assertThat(new UnixFsReader(blocks).open(root).readAllBytes()).isEqualTo(content);
    assertThat(bitswap.stats().blocksReceived()).isEqualTo(21);
    assertThat(bitswap.stats().rejected()).doesNotContainKeys("malformed", "too-large",
        "bad-block");
  }

  @ParameterizedTest
  @ValueSource(strings = {"stack-a", "stack-b", "stack-c"})
  void heliaCat_shouldFetchJavasFile_whenConnectedOnlyToJava(final String stack)
      throws Exception {
    final byte[] content = randomBytes(3 * 1024 * 1024 + 777, 12);
    final Cid root = new UnixFsImporter(blocks, UnixFsImporter.Options.HELIA)
        .importBytes(content);
    final Path out = dir.resolve("cat.bin");
    final String javaAddress = host.listenAddresses().get(0).withPeerId(host.peerId())
        .toString();

    final JsPeer helia = js(stack, "--dial", javaAddress, "--cat", root.toString(), "--out",
        out.toString());

    final JsonNode cat = helia.nextEvent("cat", Duration.ofSeconds(120));
    assertThat(cat.get("cid").asText()).isEqualTo(root.toString());
    assertThat(Files.readAllBytes(out)).isEqualTo(content);
    assertThat(bitswap.stats().blocksSent()).isGreaterThanOrEqualTo(4);
    assertThat(bitswap.stats().bytesSent()).isGreaterThanOrEqualTo(content.length);
  }
}
