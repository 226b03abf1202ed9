package io.relaypinner.relay.storage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.relaypinner.ipfs.bitswap.Bitswap;
import io.relaypinner.ipfs.bitswap.BitswapConfig;
import io.relaypinner.ipfs.blockstore.Blockstore;
import io.relaypinner.ipfs.blockstore.MemoryBlockstore;
import io.relaypinner.ipfs.pin.CodecLinkResolver;
import io.relaypinner.ipfs.pin.DagWalker;
import io.relaypinner.ipfs.unixfs.UnixFsImporter;
import io.relaypinner.libp2p.crypto.KeyType;
import io.relaypinner.libp2p.crypto.Keys;
import io.relaypinner.libp2p.crypto.PrivateKey;
import io.relaypinner.libp2p.host.Host;
import io.relaypinner.libp2p.host.HostConfig;
import io.relaypinner.libp2p.netty.EventLoops;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.multiformats.Multiaddr;
import io.relaypinner.multiformats.Multihash;
import io.relaypinner.relay.RelayNode;
import io.relaypinner.relay.config.RelayConfig;
import io.relaypinner.relay.config.StorageLimits;
import io.relaypinner.relay.gateway.FallbackTotal;
import io.relaypinner.relay.identity.NodeIdentity;
import io.relaypinner.relay.testing.TestPins;
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
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The {@code /ipfs/} network fallback against a Java peer serving DAGs over bitswap: what it
 * fetches is cached within {@code RELAY_GATEWAY_CACHE_MAX_BYTES}, never pinned, evicted and
 * collected; the quota {@code RELAY_STORAGE_MAX_BYTES} refuses what does not fit (507) and GC
 * under pressure makes room; pinned data is never touched.
 */
class GatewayCacheIT {
  private static final int MIB = 1 << 20;
  /** Two 1 MiB leaves and a root: about 1.5 MiB. */
  private static final int FILE = 3 * MIB / 2;

  private final HttpClient client = HttpClient.newBuilder()
      .version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(5)).build();
  private final EventLoops loops = EventLoops.create(2, "gateway-cache-it");
  private final ExecutorService storage = Executors.newSingleThreadExecutor();
  private final List<AutoCloseable> toClose = new ArrayList<>();
  private final Random random = new Random(18);

  @AfterEach
  void close() throws Exception {
    for (int i = toClose.size() - 1; i >= 0; i--) {
      toClose.get(i).close();
    }
    storage.shutdownNow();
    loops.shutdownGracefully(Duration.ofSeconds(3));
  }

  private RelayNode relay(final Path dir, final long quota, final long cache) {
    final PrivateKey key = Keys.generate(KeyType.ED25519, new SecureRandom());
    final NodeIdentity identity = new NodeIdentity(key, key.publicKey().peerId(),
        NodeIdentity.servingZone(key.publicKey().peerId(), "libp2p.direct"),
        NodeIdentity.Source.ENVIRONMENT);
    // No scheduled GC and a long grace: only evictions and pressure collect here.
    final RelayNode node = new RelayNode(RelayConfig.builder().dataDir(dir)
        .metricsHost("127.0.0.1").metricsPort(0).listenIpv4("127.0.0.1").tcpPort(0).wsPort(0)
        .quicPort(0)
        .ipv6Disabled(true).ipfsFallbackTimeout(Duration.ofSeconds(20))
        .storageLimits(new StorageLimits(quota, cache, Duration.ZERO, Duration.ofHours(1)))
        .build(), identity, new PrometheusRegistry(), Clock.systemUTC());
    toClose.add(node);
    node.start();
    return node;
  }

  /** A Java peer serving {@code blocks} over bitswap, connected to {@code relay}. */
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

  private record File(Cid cid, byte[] bytes) {}

  private File file(final Blockstore store) {
    return file(store, FILE);
  }

  private File file(final Blockstore store, final int size) {
    final byte[] bytes = new byte[size];
    random.nextBytes(bytes);
    return new File(new UnixFsImporter(store, UnixFsImporter.Options.HELIA).importBytes(bytes),
        bytes);
  }

  private HttpResponse<byte[]> get(final RelayNode relay, final Cid cid) throws Exception {
    return client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
            + relay.http().port().getAsInt() + "/ipfs/" + cid)).timeout(Duration.ofSeconds(30))
        .build(), HttpResponse.BodyHandlers.ofByteArray());
  }

  private static Set<Multihash> dag(final Blockstore store, final Cid root) {
    return new DagWalker(store, CodecLinkResolver.standard(), 1_000).walk(List.of(root))
        .reached();
  }

  private static boolean holdsAll(final Blockstore store, final Set<Multihash> blocks) {
    return blocks.stream().allMatch(mh -> store.has(Cid.v1(
        io.relaypinner.multiformats.Multicodec.RAW, mh)));
  }

  private static boolean holdsNone(final Blockstore store, final Set<Multihash> blocks) {
    return blocks.stream().noneMatch(mh -> store.has(Cid.v1(
        io.relaypinner.multiformats.Multicodec.RAW, mh)));
  }

  @Test
  void fetchedDags_areCachedWithinTheBudget_evictedAndCollected_pinsUnchanged(
      @TempDir final Path dir) throws Exception {
    final RelayNode relay = relay(dir, 0, 7 * MIB / 2);
    final File pinned = file(relay.storage().blockstore());
    relay.storage().pins().pin(pinned.cid(), TestPins.HOLDER);
    final List<Cid> pinsBefore = relay.storage().pins().list();
    final Set<Multihash> pinnedBlocks = dag(relay.storage().blockstore(), pinned.cid());
    final MemoryBlockstore peer = peer(relay);
    final File a = file(peer);
    final File b = file(peer);
    final File c = file(peer);
    final StorageGc gc = relay.storage().gc();

    for (final File f : List.of(a, b, c)) {
      final HttpResponse<byte[]> answer = get(relay, f.cid());
      assertThat(answer.statusCode()).isEqualTo(200);
      assertThat(answer.body()).isEqualTo(f.bytes());
      assertThat(gc.cache().bytes()).isLessThanOrEqualTo(gc.cache().maxBytes());
      assertThat(relay.storage().pins().isPinned(f.cid())).isFalse();
    }

    // Three of 1.5 MiB in 3.5 MiB: a, the least recently used, was evicted, and GC took it.
    assertThat(gc.cache().evictions()).isPositive();
    final Set<Multihash> aBlocks = dag(peer, a.cid());
    await().atMost(Duration.ofSeconds(20))
        .until(() -> holdsNone(relay.storage().blockstore(), aBlocks));
    assertThat(holdsAll(relay.storage().blockstore(), dag(peer, c.cid()))).isTrue();
    assertThat(relay.storage().pins().list()).isEqualTo(pinsBefore);
    assertThat(holdsAll(relay.storage().blockstore(), pinnedBlocks)).isTrue();
    final long pinnedBytes = pinned.bytes().length;
    assertThat(gc.quota().usedBytes() - pinnedBytes)
        .as("unpinned bytes on disk after GC").isLessThanOrEqualTo(gc.cache().maxBytes() + 4096);

    // a again: fetched again (and served), b becomes the one to go.
    assertThat(get(relay, a.cid()).body()).isEqualTo(a.bytes());
    final Set<Multihash> bBlocks = dag(peer, b.cid());
    await().atMost(Duration.ofSeconds(20))
        .until(() -> holdsNone(relay.storage().blockstore(), bBlocks));
    assertThat(holdsAll(relay.storage().blockstore(), pinnedBlocks)).isTrue();
    assertThat(relay.storage().pins().list()).isEqualTo(pinsBefore);
    assertThat(gc.removedBlocks()).isGreaterThanOrEqualTo(6);
  }

  /**
   * Issue 36: the fallback was capped per request only, so N concurrent requests of distinct
   * DAGs stored N times the cap. Scaled down from "8 concurrent GETs of 200 MiB DAGs with a
   * 256 MiB cache": 8 concurrent GETs of distinct 5 MiB DAGs with an 8 MiB cache. All fetches
   * together never have more than the cache's budget in flight; who finds no room gets 503
   * {@code fallback_busy} (counted), the others their file; afterwards what is stored unpinned
   * is within the budget, and a GET is answered again.
   */
  @Test
  void concurrentFallbacks_ofDistinctDags_holdAtMostTheCacheBudgetInFlight_restAre503(
      @TempDir final Path dir) throws Exception {
    final long budget = 8L * MIB;
    final RelayNode relay = relay(dir, 0, budget);
    final MemoryBlockstore peer = peer(relay);
    final List<File> files = new ArrayList<>();
    for (int i = 0; i < 8; i++) {
      files.add(file(peer, 5 * MIB));
    }

    final List<CompletableFuture<HttpResponse<byte[]>>> answers = new ArrayList<>();
    for (final File f : files) {
      answers.add(client.sendAsync(HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
              + relay.http().port().getAsInt() + "/ipfs/" + f.cid()))
          .timeout(Duration.ofSeconds(60)).build(), HttpResponse.BodyHandlers.ofByteArray()));
    }
    int served = 0;
    int busy = 0;
    for (int i = 0; i < files.size(); i++) {
      final HttpResponse<byte[]> answer = answers.get(i).get(60, TimeUnit.SECONDS);
      if (answer.statusCode() == 200) {
        assertThat(answer.body()).isEqualTo(files.get(i).bytes());
        served++;
      } else {
        assertThat(answer.statusCode()).isEqualTo(503);
        assertThat(new String(answer.body(), StandardCharsets.UTF_8))
            .contains("\"code\":\"fallback_busy\"");
        busy++;
      }
    }
    final FallbackTotal total = relay.content().fallbackTotal().orElseThrow();
    assertThat(total.maxBytes()).isEqualTo(budget);
    assertThat(total.peakInFlight()).isLessThanOrEqualTo(budget);
    assertThat(total.inFlight()).isZero();
    assertThat(served).as("answered with their file").isPositive();
    assertThat(busy).as("refused by the total").isPositive();
    final String metrics = client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
        + relay.http().port().getAsInt() + "/metrics")).build(),
        HttpResponse.BodyHandlers.ofString()).body();
    assertThat(metrics).contains(
        "relay_ipfs_gateway_limited_total{limit=\"fallback_total\"} " + busy + ".0");

    // Partial fetches were cached too: evicted beyond the budget and collected.
    final StorageGc gc = relay.storage().gc();
    await().atMost(Duration.ofSeconds(20))
        .until(() -> gc.quota().usedBytes() <= budget + 4096);
    assertThat(gc.cache().bytes()).isLessThanOrEqualTo(budget);

    // Nothing in flight now: a GET is answered.
    final File last = files.get(files.size() - 1);
    assertThat(get(relay, last.cid()).body()).isEqualTo(last.bytes());
  }

  @Test
  void theQuota_refusesWhatDoesNotFit_gcUnderPressureMakesRoom_pinnedDataStays(
      @TempDir final Path dir) throws Exception {
    final RelayNode relay = relay(dir, 4 * MIB, 7 * MIB / 2);
    final File pinned = file(relay.storage().blockstore());
    relay.storage().pins().pin(pinned.cid(), TestPins.HOLDER);
    final Set<Multihash> pinnedBlocks = dag(relay.storage().blockstore(), pinned.cid());
    final MemoryBlockstore peer = peer(relay);
    final File a = file(peer);
    final File b = file(peer);
    final StorageGc gc = relay.storage().gc();

    assertThat(get(relay, a.cid()).statusCode()).isEqualTo(200);
    // 1.5 pinned + 1.5 cached + 1.5 more > 4 MiB: refused, counted, never over the quota.
    final HttpResponse<byte[]> refused = get(relay, b.cid());
    assertThat(refused.statusCode()).isEqualTo(507);
    assertThat(new String(refused.body(), java.nio.charset.StandardCharsets.UTF_8))
        .contains("storage_full");
    assertThat(gc.quota().refusedCount("bitswap")).isPositive();
    assertThat(gc.quota().usedBytes()).isLessThanOrEqualTo(gc.quota().maxBytes());

    // The refusal asked GC to run: the cache gave up blocks of a (least recently used) until
    // the refused block fits below the pressure line, so b fits now.
    await().atMost(Duration.ofSeconds(20)).until(() -> gc.runs() >= 1);
    assertThat(gc.cache().evictions()).isPositive();
    assertThat(gc.removedBlocks()).isPositive();
    assertThat(holdsAll(relay.storage().blockstore(), dag(peer, a.cid()))).isFalse();
    final HttpResponse<byte[]> retried = get(relay, b.cid());
    assertThat(retried.statusCode()).isEqualTo(200);
    assertThat(retried.body()).isEqualTo(b.bytes());
    assertThat(holdsAll(relay.storage().blockstore(), pinnedBlocks)).isTrue();
    assertThat(relay.storage().pins().list()).containsExactly(pinned.cid());
    assertThat(gc.quota().usedBytes()).isLessThanOrEqualTo(gc.quota().maxBytes());
  }
}
