package io.relaypinner.relay.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.relaypinner.ipfs.bitswap.Bitswap;
import io.relaypinner.ipfs.bitswap.BitswapConfig;
import io.relaypinner.ipfs.blockstore.Blocks;
import io.relaypinner.ipfs.blockstore.MemoryBlockstore;
import io.relaypinner.ipfs.car.CarBlock;
import io.relaypinner.ipfs.car.CarReader;
import io.relaypinner.ipfs.dagcbor.DagCbor;
import io.relaypinner.ipfs.dagcbor.DagCborValue;
import io.relaypinner.ipfs.unixfs.UnixFsImporter;
import io.relaypinner.libp2p.crypto.KeyType;
import io.relaypinner.libp2p.crypto.Keys;
import io.relaypinner.libp2p.crypto.PrivateKey;
import io.relaypinner.libp2p.host.Host;
import io.relaypinner.libp2p.host.HostConfig;
import io.relaypinner.libp2p.netty.EventLoops;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.multiformats.Multiaddr;
import io.relaypinner.multiformats.Multicodec;
import io.relaypinner.multiformats.Multihash;
import io.relaypinner.relay.RelayNode;
import io.relaypinner.relay.config.RelayConfig;
import io.relaypinner.relay.identity.NodeIdentity;
import io.relaypinner.relay.testing.TestPins;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The {@code car-dups} attack of issue 36, performed against a relay in this JVM: a dag-cbor
 * root with 100 links to one 2 MB dag-cbor block, held only by a peer, asked for anonymously as
 * a CAR with {@code dups=y}. The relay's network fallback fetches the two blocks, then the plan
 * used to read the child once per link into its frontier (about 200 MB of heap for one request,
 * answered 404 "Java heap space" under the launcher's 160 MiB). Now the plan holds one block at
 * a time ({@code relay_ipfs_car_plan_held_bytes_max}), the answer is the correct CAR (100
 * copies streamed from the block's file), and an honest {@code /ipfs/} GET is answered while it
 * streams.
 *
 * <p>The same attack against the launcher's relay JVM (-Xmx160m, heap after GC bounded) is
 * {@code SurfaceAttackIT} in the cli module; this one stays for what only a relay in this JVM
 * shows: the fallback fetching the DAG, the CAR checked block by block and the plan's peak
 * held bytes.
 */
class CarDupsAttackIT {
  private static final int LINKS = 100;
  private static final int CHILD_FILLER = 2_000_000;

  private final HttpClient client = HttpClient.newBuilder()
      .version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(5)).build();
  private final EventLoops loops = EventLoops.create(2, "car-dups-it");
  private final ExecutorService storage = Executors.newSingleThreadExecutor();
  private final List<AutoCloseable> toClose = new ArrayList<>();
  private int relayPort;

  @AfterEach
  void close() throws Exception {
    for (int i = toClose.size() - 1; i >= 0; i--) {
      toClose.get(i).close();
    }
    storage.shutdownNow();
    loops.shutdownGracefully(Duration.ofSeconds(3));
  }

  @Test
  void carDups_ofOneBigBlockLinkedAHundredTimes_isStreamedWithOneBlockHeld_andHonestGetsAnswer(
      @TempDir final Path dir) throws Exception {
    final RelayNode relay = relay(dir);
    final byte[] honestBytes = new byte[300_000];
    new Random(9).nextBytes(honestBytes);
    final Cid honest = new UnixFsImporter(relay.storage().blockstore(),
        UnixFsImporter.Options.HELIA).importBytes(honestBytes);
    relay.storage().pins().pin(honest, TestPins.HOLDER);

    final MemoryBlockstore peer = peer(relay);
    final byte[] filler = new byte[CHILD_FILLER];
    new Random(3).nextBytes(filler);
    final byte[] childBlock = DagCbor.encode(DagCborValue.map(Map.of("filler",
        DagCborValue.of(filler))));
    final Cid child = Cid.v1(Multicodec.DAG_CBOR, Multihash.sha2_256(childBlock));
    peer.put(child, childBlock);
    final List<DagCborValue> links = new ArrayList<>();
    for (int i = 0; i < LINKS; i++) {
      links.add(DagCborValue.of(child));
    }
    final byte[] rootBlock = DagCbor.encode(DagCborValue.map(Map.of("links",
        DagCborValue.list(links))));
    final Cid root = Cid.v1(Multicodec.DAG_CBOR, Multihash.sha2_256(rootBlock));
    peer.put(root, rootBlock);

    // The attack, as the query form; read as it streams, each block checked against its CID.
    final CompletableFuture<HttpResponse<InputStream>> attack = client.sendAsync(
        request("/ipfs/" + root + "?format=car&car-dups=y").build(),
        HttpResponse.BodyHandlers.ofInputStream());
    final HttpResponse<InputStream> car = attack.get(60, TimeUnit.SECONDS);
    assertThat(car.statusCode()).isEqualTo(200);
    assertThat(car.headers().firstValue("content-type")).hasValueSatisfying(
        type -> assertThat(type).contains("dups=y"));
    final long declared = car.headers().firstValueAsLong("content-length").orElseThrow();
    assertThat(declared).isGreaterThan((long) LINKS * CHILD_FILLER);

    // An honest GET while the CAR is still being sent.
    final HttpResponse<byte[]> plain = client.send(request("/ipfs/" + honest).build(),
        HttpResponse.BodyHandlers.ofByteArray());
    assertThat(plain.statusCode()).isEqualTo(200);
    assertThat(plain.body()).isEqualTo(honestBytes);

    final List<Cid> order = new ArrayList<>();
    try (InputStream body = car.body()) {
      final CarReader reader = new CarReader(body, CarReader.Limits.DEFAULT);
      assertThat(reader.roots()).containsExactly(root);
      for (Optional<CarBlock> next = reader.next(); next.isPresent(); next = reader.next()) {
        order.add(next.get().cid());
      }
    }
    assertThat(order).hasSize(1 + LINKS);
    assertThat(order.get(0)).isEqualTo(root);
    assertThat(order.subList(1, order.size())).containsOnly(child);

    // The same attack in the Accept form, HEAD: planned again (same length), nothing held.
    final HttpResponse<Void> head = client.send(request("/ipfs/" + root)
        .method("HEAD", HttpRequest.BodyPublishers.noBody())
        .header("Accept", "application/vnd.ipld.car; version=1; order=dfs; dups=y").build(),
        HttpResponse.BodyHandlers.discarding());
    assertThat(head.statusCode()).isEqualTo(200);
    assertThat(head.headers().firstValueAsLong("content-length")).hasValue(declared);

    // What one plan held at most: the 2 MB child once (and the CIDs), never a copy per link.
    final double held = gauge("relay_ipfs_car_plan_held_bytes_max");
    assertThat(held).isGreaterThanOrEqualTo(CHILD_FILLER)
        .isLessThanOrEqualTo(Blocks.MAX_BLOCK_SIZE + 64 * 1024);

    // And the relay still answers honest requests afterwards.
    assertThat(client.send(request("/ipfs/" + honest).build(),
        HttpResponse.BodyHandlers.ofByteArray()).body()).isEqualTo(honestBytes);
  }

  private HttpRequest.Builder request(final String path) {
    return HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
        + relayPort + path)).timeout(Duration.ofSeconds(60));
  }

  private double gauge(final String name) throws Exception {
    final String text = client.send(request("/metrics").build(),
        HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8)).body();
    final Matcher value = Pattern.compile("(?m)^" + name + " (\\S+)$").matcher(text);
    assertThat(value.find()).as(name + " in /metrics").isTrue();
    return Double.parseDouble(value.group(1));
  }

  private RelayNode relay(final Path dir) {
    final PrivateKey key = Keys.generate(KeyType.ED25519, new SecureRandom());
    final NodeIdentity identity = new NodeIdentity(key, key.publicKey().peerId(),
        NodeIdentity.servingZone(key.publicKey().peerId(), "libp2p.direct"),
        NodeIdentity.Source.ENVIRONMENT);
    final RelayNode node = new RelayNode(RelayConfig.builder().dataDir(dir)
        .metricsHost("127.0.0.1").metricsPort(0).listenIpv4("127.0.0.1").tcpPort(0).wsPort(0)
        .quicPort(0)
        .ipv6Disabled(true).ipfsFallbackTimeout(Duration.ofSeconds(30)).build(), identity,
        new PrometheusRegistry(), Clock.systemUTC());
    toClose.add(node);
    node.start();
    relayPort = node.http().port().getAsInt();
    return node;
  }

  /** A Java peer serving its blocks over bitswap, connected to {@code relay}. */
  private MemoryBlockstore peer(final RelayNode relay) throws Exception {
    final Host host = new Host(Keys.generate(KeyType.ED25519, new SecureRandom()),
        HostConfig.builder().listenAddresses(List.of()).build(), loops, Clock.systemUTC());
    host.start().get(5, TimeUnit.SECONDS);
    toClose.add(host);
    final MemoryBlockstore blocks = new MemoryBlockstore();
    toClose.add(Bitswap.start(host, blocks, storage, BitswapConfig.DEFAULT, host.clock()));
    final Host relayHost = relay.network().host();
    final Multiaddr tcp = relayHost.listenAddresses().stream()
        .filter(a -> !a.toString().endsWith("/ws")).findFirst().orElseThrow();
    host.dial(tcp.withPeerId(relayHost.peerId())).get(10, TimeUnit.SECONDS);
    return blocks;
  }
}
