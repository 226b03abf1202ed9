package io.relaypinner.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.relaypinner.ipfs.bitswap.Bitswap;
import io.relaypinner.ipfs.bitswap.BitswapConfig;
import io.relaypinner.ipfs.car.CarBlock;
import io.relaypinner.ipfs.car.CarReader;
import io.relaypinner.libp2p.crypto.KeyType;
import io.relaypinner.libp2p.crypto.Keys;
import io.relaypinner.libp2p.host.Host;
import io.relaypinner.libp2p.host.HostConfig;
import io.relaypinner.libp2p.netty.EventLoops;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.multiformats.Multiaddr;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
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
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 36's "8 concurrent fallback GETs of 200 MiB DAGs with a 256 MiB cache", performed
 * against a relay started as an operator starts it ({@link RelayProcess}: the launcher,
 * {@code packaging/jvm.options}, -Xmx160m, ExitOnOutOfMemoryError) with only
 * {@code RELAY_GATEWAY_CACHE_MAX_BYTES} set. A Java peer in this JVM, connected to the relay (the
 * fallback asks the connected bitswap peers), serves 8 distinct UnixFS files
 * ({@link GeneratedDags}: generated on demand, never held); 8 anonymous GETs of them at once,
 * plain and {@code ?format=car}. Each file alone fits the per-request cap (the cache's size), all
 * 8 are 6.25 times the node-wide total of fallback bytes in flight (the same size): before issue
 * 36 they were all fetched and stored. The relay must keep what the fallback has in flight within
 * the total and what it stores near the cache, answer the rest 503 {@code fallback_busy}
 * (counted), stay alive within its heap, and serve an honest client afterwards (Java and JS,
 * {@link HonestClient#assertServed(RelayProcess, HonestJsClient)}).
 *
 * <p>By default a quarter of the sizes (8 x 50 MiB, a 64 MiB cache): the full sizes cost
 * about four times as much (1.6 GB hashed here, ~570 MiB sent over Noise, 2026-11: 2.9 s and
 * ~19 s of CPU) for the same ratio; {@code -Drelaypinner.fallbackAttack.full=true} runs them.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class GatewayFallbackAttackIT {
  private static final long MIB = 1L << 20;
  /** {@code -Drelaypinner.fallbackAttack.full=true}: the sizes (see the class). */
  private static final boolean FULL = Boolean.getBoolean("relaypinner.fallbackAttack.full");
  /**
   * {@code RELAY_GATEWAY_CACHE_MAX_BYTES}: the cache, the largest DAG one request fetches, and
   * the node-wide total of fallback bytes in flight.
   */
  private static final long CACHE = (FULL ? 256 : 64) * MIB;
  private static final int FILES = 8;
  /** 1 MiB leaves per file: each file alone fits the per-request cap, all 8 are 6.25 x it. */
  private static final int LEAVES = FULL ? 200 : 50;
  /** Files on disk besides blocks' bytes (flatfs shard directories, the seeded file): slack. */
  private static final long DISK_SLACK = 4 * MIB;
  private static final ObjectMapper JSON = new ObjectMapper();

  private final HttpClient client = HttpClient.newBuilder()
      .version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(5)).build();
  private final ExecutorService peerStorage = Executors.newFixedThreadPool(2);
  private final HonestJsClient js = HonestJsClient.shared();
  private EventLoops loops;
  private Host peer;
  private Bitswap peerBitswap;
  private GeneratedDags dags;
  private RelayProcess relay;

  @BeforeAll
  void start(@TempDir final Path dir) throws Exception {
    final long building = System.nanoTime();
    final long buildingCpu = ownCpuNanos();
    dags = new GeneratedDags(FILES, LEAVES);
    System.out.printf("GatewayFallbackAttackIT: %d files of %d MiB hashed in %d ms (CPU %d ms)%n",
        FILES, dags.fileSize() / MIB, millis(System.nanoTime() - building),
        millis(ownCpuNanos() - buildingCpu));

    relay = RelayProcess.builder(dir.resolve("data"))
        .env("RELAY_GATEWAY_CACHE_MAX_BYTES", Long.toString(CACHE))
        .seedFile("an honest file".getBytes(StandardCharsets.UTF_8))
        .start();

    loops = EventLoops.create(2, "fallback-peer");
    peer = new Host(Keys.generate(KeyType.ED25519, new SecureRandom()),
        HostConfig.builder().listenAddresses(List.of()).build(), loops, Clock.systemUTC());
    peer.start().get(10, TimeUnit.SECONDS);
    peerBitswap = Bitswap.start(peer, dags, peerStorage, BitswapConfig.DEFAULT, peer.clock());
    peer.dial(Multiaddr.parse(relay.tcpMultiaddr())).get(15, TimeUnit.SECONDS);
    // The relay asks this peer once it knows the peer speaks bitswap (identify): a root block,
    // alone, comes through the fallback then.
    final String probe = "/ipfs/" + dags.root(FILES - 1) + "?format=raw";
    await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(200))
        .until(() -> relay.getBytes(probe).statusCode() == 200);
  }

  @AfterAll
  void stop() throws Exception {
    if (peerBitswap != null) {
      peerBitswap.close();
    }
    if (peer != null) {
      peer.close();
    }
    if (loops != null) {
      loops.shutdownGracefully(Duration.ofSeconds(2));
    }
    peerStorage.shutdownNow();
    if (relay != null) {
      relay.close();
    }
  }

  /** What one GET got: its status, its error code or whether its whole file came intact. */
  private record Outcome(int file, boolean car, int status, String code, long bytes) {}

  @Test
  void eightConcurrentFallbackGets_of200MiBDags_storeAtMostTheCache_restAre503_relayServes()
      throws Exception {
    final AtomicBoolean attacking = new AtomicBoolean(true);
    final AtomicLong peakDisk = new AtomicLong();
    final AtomicLong peakInFlight = new AtomicLong();
    final Thread sampler = new Thread(() -> {
      while (attacking.get()) {
        try {
          peakDisk.accumulateAndGet(blocksOnDisk(), Math::max);
          peakInFlight.accumulateAndGet((long) relay.metric(
              "relay_ipfs_fallback_bytes_in_flight").orElse(0), Math::max);
          Thread.sleep(100);
        } catch (final IOException | UncheckedIOException e) {
          // A file GC deleted while it was listed, a scrape cut: the next sample.
        } catch (final InterruptedException e) {
          return;
        }
      }
    }, "fallback-sampler");
    sampler.setDaemon(true);

    final long attack = System.nanoTime();
    final long ownCpu = ownCpuNanos();
    final long relayCpu = relayCpuNanos();
    final ExecutorService clients = Executors.newFixedThreadPool(FILES);
    final List<Outcome> outcomes = new ArrayList<>();
    try {
      sampler.start();
      final List<Future<Outcome>> answers = new ArrayList<>();
      for (int f = 0; f < FILES; f++) {
        final int file = f;
        answers.add(clients.submit(() -> file % 2 == 0 ? plain(file) : car(file)));
      }
      for (final Future<Outcome> answer : answers) {
        outcomes.add(answer.get(90, TimeUnit.SECONDS));
      }
    } finally {
      attacking.set(false);
      sampler.join(5_000);
      clients.shutdownNow();
    }
    System.out.printf("GatewayFallbackAttackIT: cache %d MiB, attack %d ms (CPU: relay %d ms, "
            + "peer and clients %d ms), %s, peer sent %d MiB, peak on disk %d MiB, peak in "
            + "flight %d MiB%n", CACHE / MIB, millis(System.nanoTime() - attack),
        millis(relayCpuNanos() - relayCpu), millis(ownCpuNanos() - ownCpu), outcomes,
        dags.leafBytesRead() / MIB, peakDisk.get() / MIB, peakInFlight.get() / MIB);

    // Each GET got its whole file, or 503 fallback_busy: never a partial body, a 404 or a 5xx.
    long busy = 0;
    for (final Outcome outcome : outcomes) {
      if (outcome.status() == 200) {
        assertThat(outcome.bytes()).as("%s", outcome).isGreaterThanOrEqualTo(dags.fileSize());
      } else {
        assertThat(outcome.status()).as("%s", outcome).isEqualTo(503);
        assertThat(outcome.code()).as("%s", outcome).isEqualTo("fallback_busy");
        busy++;
      }
    }
    // 8 x 200 MiB cannot all be fetched within 256 MiB: some were refused, and counted.
    assertThat(busy).as("refused by the node-wide total").isPositive();
    assertThat(series("relay_ipfs_gateway_limited_total{limit=\"fallback_total\"}"))
        .isEqualTo(busy);
    assertThat(series(
        "relay_resource_limit_hits_total{resource=\"disk\",scope=\"gateway_fallback\"}"))
        .isGreaterThanOrEqualTo(busy);

    // In flight: never more than the total, and nothing once the requests are answered.
    assertThat(peakInFlight.get()).isPositive().isLessThanOrEqualTo(CACHE);
    assertThat(relay.metric("relay_ipfs_fallback_bytes_in_flight")).hasValue(0);
    // On disk while the attack ran: what is in flight (<= the total) plus what the cache keeps
    // (<= its budget) plus what it evicted until GC deleted it; measured 1.4 x the cache (1.6
    // to 2 x at full size), never the 6.25 x of all files. Once GC ran: the cache's budget.
    assertThat(peakDisk.get()).isLessThan(3 * CACHE);
    try {
      await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(250))
          .ignoreExceptions().until(() -> blocksOnDisk() <= CACHE + DISK_SLACK);
    } catch (final ConditionTimeoutException e) {
      // What is stored beyond the cache, for the failure message.
      final StringBuilder why = new StringBuilder("on disk " + blocksOnDisk());
      for (final String line : relay.metrics().split("\n")) {
        if (line.matches("^(relay_storage_used|relay_gateway_cache|relay_gc|relay_ipfs_fallback"
            + "|bitswap_(blocks|unwanted|duplicate|client)).*")) {
          why.append('\n').append(line);
        }
      }
      try (Stream<Path> files = Files.walk(relay.dataDir().resolve("blocks"))) {
        files.filter(Files::isRegularFile).filter(f -> !f.toString().endsWith(".data"))
            .forEach(f -> why.append("\nfile ").append(f));
      }
      relay.stderr().lines().filter(l -> l.contains("GC") || l.contains("WARN")
          || l.contains("ERROR")).forEach(l -> why.append('\n').append(l));
      throw new AssertionError(why.toString(), e);
    }
    assertThat(relay.metric("relay_gateway_cache_bytes").orElseThrow())
        .isLessThanOrEqualTo(CACHE);

    assertThat(relay.isAlive()).as("relay alive; stderr:\n%s", relay.stderr()).isTrue();
    HonestClient.assertServed(relay, js);
    final long heap = relay.heapAfterGcBytes();
    System.out.printf("GatewayFallbackAttackIT: heap after GC %d MiB%n", heap / MIB);
    assertThat(heap).isLessThan(SurfaceAttackIT.HEAP_AFTER_ATTACK);
    assertThat(relay.metric("relay_unclean_exits_total")).hasValue(0);
  }

  /** A plain GET of file {@code f}: 200 with its bytes, compared leaf by leaf, or the error. */
  private Outcome plain(final int f) throws Exception {
    final HttpResponse<InputStream> response = send("/ipfs/" + dags.root(f));
    try (InputStream body = response.body()) {
      if (response.statusCode() != 200) {
        return new Outcome(f, false, response.statusCode(), code(body), 0);
      }
      long bytes = 0;
      try (InputStream expected = GeneratedDags.content(f, LEAVES)) {
        final byte[] got = new byte[64 * 1024];
        final byte[] want = new byte[got.length];
        for (int n = body.readNBytes(got, 0, got.length); n > 0;
            n = body.readNBytes(got, 0, got.length)) {
          assertThat(expected.readNBytes(want, 0, n)).isEqualTo(n);
          assertThat(Arrays.equals(got, 0, n, want, 0, n)).as("bytes of file %d at %d", f, bytes)
              .isTrue();
          bytes += n;
        }
        assertThat(expected.read()).as("end of file %d", f).isEqualTo(-1);
      }
      return new Outcome(f, false, 200, null, bytes);
    }
  }

  /**
   * A {@code ?format=car} GET of file {@code f}: 200 with a CAR of its root and every leaf, each
   * block checked against its CID (by {@link CarReader}) and known here, or the error.
   */
  private Outcome car(final int f) throws Exception {
    final HttpResponse<InputStream> response = send("/ipfs/" + dags.root(f) + "?format=car");
    try (InputStream body = response.body()) {
      if (response.statusCode() != 200) {
        return new Outcome(f, true, response.statusCode(), code(body), 0);
      }
      final CarReader reader = new CarReader(body, CarReader.Limits.DEFAULT);
      assertThat(reader.roots()).containsExactly(dags.root(f));
      long bytes = 0;
      int blocks = 0;
      for (Optional<CarBlock> block = reader.next(); block.isPresent(); block = reader.next()) {
        assertThat(dags.has(block.get().cid())).as("a block of file %d", f).isTrue();
        if (block.get().cid().equals(dags.root(f))) {
          continue;
        }
        bytes += block.get().data().length;
        blocks++;
      }
      assertThat(blocks).as("leaves of file %d", f).isEqualTo(LEAVES);
      return new Outcome(f, true, 200, null, bytes);
    }
  }

  private HttpResponse<InputStream> send(final String path) throws Exception {
    return client.send(HttpRequest.newBuilder(relay.url(path))
        .timeout(Duration.ofSeconds(90)).build(), HttpResponse.BodyHandlers.ofInputStream());
  }

  /** The JSON error's code; with its message when it is not {@code fallback_busy}. */
  private static String code(final InputStream body) throws IOException {
    final JsonNode json = JSON.readTree(body.readAllBytes());
    final String code = json.path("code").asText();
    return "fallback_busy".equals(code) ? code : code + ": " + json.path("error").asText();
  }

  private static long millis(final long nanos) {
    return TimeUnit.NANOSECONDS.toMillis(nanos);
  }

  /** CPU time of this JVM (the peer, the clients). */
  private static long ownCpuNanos() {
    return ((com.sun.management.OperatingSystemMXBean) java.lang.management.ManagementFactory
        .getOperatingSystemMXBean()).getProcessCpuTime();
  }

  /** CPU time of the relay's JVM. */
  private long relayCpuNanos() {
    return ProcessHandle.of(relay.pid()).flatMap(h -> h.info().totalCpuDuration())
        .map(Duration::toNanos).orElse(0L);
  }

  /** Bytes of every file under the relay's flatfs blockstore (staged ones included). */
  private long blocksOnDisk() throws IOException {
    try (Stream<Path> files = Files.walk(relay.dataDir().resolve("blocks"))) {
      return files.filter(Files::isRegularFile).mapToLong(file -> {
        try {
          return Files.size(file);
        } catch (final IOException e) {
          return 0;
        }
      }).sum();
    }
  }

  /** The value of one series of {@code /metrics} as written there (name and labels); 0 if none. */
  private double series(final String series) throws Exception {
    for (final String line : relay.metrics().split("\n")) {
      if (line.startsWith(series + " ")) {
        return Double.parseDouble(line.substring(series.length() + 1).trim());
      }
    }
    return 0;
  }
}
