package io.relaypinner.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.relaypinner.ipfs.blockstore.FlatFsBlockstore;
import io.relaypinner.ipfs.dagcbor.DagCbor;
import io.relaypinner.libp2p.crypto.KeyType;
import io.relaypinner.libp2p.crypto.Keys;
import io.relaypinner.libp2p.host.Host;
import io.relaypinner.libp2p.host.HostConfig;
import io.relaypinner.libp2p.netty.EventLoops;
import io.relaypinner.libp2p.pubsub.GossipsubConfig;
import io.relaypinner.libp2p.pubsub.PubSub;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.multiformats.Multiaddr;
import io.relaypinner.orbitdb.OrbitDbAddress;
import io.relaypinner.testkit.JsPeer;
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
import java.util.Locale;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 36's attacks that need a real OrbitDB writer, performed against one relay started as an
 * operator starts it ({@link RelayProcess}: {@code ./relay-pinner run} with
 * {@code packaging/jvm.options}, -Xmx160m and ExitOnOutOfMemoryError). The writers are JS peers
 * ({@link HonestJsClient}: {@code replication-peer.mjs} on stack B, OrbitDB 4); the attackers are
 * Java peers or HTTP clients of this JVM. After each attack an honest client is served
 * ({@link HonestClient}: /health, a seeded /ipfs GET, a libp2p dial, and a round of the honest
 * JS client: a dial, a new database replicated and synced, its file served) and the heap after
 * a full collection stays under {@link SurfaceAttackIT#HEAP_AFTER_ATTACK}.
 *
 * <p>Settings beyond the shipped defaults: a pinning-service token for the tenant, GC every
 * second with a 3 s grace (so a released block is gone within seconds, not the default 10 + 15
 * minutes), and a pinned-only gateway (no network fallback that could fetch a deleted block
 * again and hide the deletion).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class JsWriterAttackIT {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String TENANT = "tenant-token";
  private static final int SQUATTERS = 12;
  private static final int TOPICS_PER_SQUATTER = 1_000;
  /** The bound: a real writer's database is replicated this soon after it writes. */
  private static final Duration REPLICATED_WITHIN = Duration.ofSeconds(10);
  private static final Duration GC_GRACE = Duration.ofSeconds(3);

  private final HttpClient client = HttpClient.newBuilder()
      .version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(5)).build();
  private final EventLoops loops = EventLoops.create(2, "js-attack-squatters");
  private final List<AutoCloseable> squatters = new ArrayList<>();
  private final HonestJsClient js = HonestJsClient.shared();
  private RelayProcess relay;

  @BeforeAll
  void start(@TempDir final Path dir) throws Exception {
    relay = RelayProcess.builder(dir.resolve("data"))
        .env("RELAY_PINNING_SERVICE_TOKENS", TENANT)
        .env("RELAY_GC_INTERVAL_MS", "1000")
        .env("RELAY_GC_GRACE_MS", Long.toString(GC_GRACE.toMillis()))
        .env("RELAY_IPFS_GATEWAY_MODE", "pinned-only")
        .seedFile("an honest file".getBytes(StandardCharsets.UTF_8))
        .start();
  }

  @AfterAll
  void stop() throws Exception {
    closeSquatters();
    if (relay != null) {
      relay.close();
    }
    loops.shutdownGracefully(Duration.ofSeconds(2));
  }

  private void closeSquatters() throws Exception {
    for (int i = squatters.size() - 1; i >= 0; i--) {
      squatters.get(i).close();
    }
    squatters.clear();
  }

  /** Honest client served, heap bounded, no OutOfMemoryError exit (the relay is this run). */
  private void assertSurvived() throws Exception {
    assertThat(relay.isAlive()).as("relay alive; stderr:\n%s", relay.stderr()).isTrue();
    HonestClient.assertServed(relay, js);
    assertThat(relay.heapAfterGcBytes()).isLessThan(SurfaceAttackIT.HEAP_AFTER_ATTACK);
    assertThat(relay.metric("relay_unclean_exits_total")).hasValue(0);
  }

  @Test
  @Order(1)
  void squatting_twelvePeersHoldingAThousandMadeUpTopicsEach_shouldNotDelayAJsWriter()
      throws Exception {
    // 12 peers hold 1,000 made-up database addresses each (valid by the address rule, no
    // database behind them) and dial the relay at once: each announces its 1,000 subscriptions
    // in its first RPC, and holds them for the whole test. They do not speak bitswap, so every
    // check of theirs waits its whole admission timeout: their slots stay taken.
    final Random random = new Random(36);
    final List<Host> hosts = new ArrayList<>();
    final List<CompletableFuture<?>> pending = new ArrayList<>();
    for (int p = 0; p < SQUATTERS; p++) {
      final Host host = new Host(Keys.generate(KeyType.ED25519, new SecureRandom()),
          HostConfig.builder().listenAddresses(List.of()).build(), loops, Clock.systemUTC());
      squatters.add(host);
      hosts.add(host);
      pending.add(host.start());
    }
    CompletableFuture.allOf(pending.toArray(CompletableFuture[]::new)).get(10, TimeUnit.SECONDS);
    pending.clear();
    for (int p = 0; p < SQUATTERS; p++) {
      final PubSub pubsub = PubSub.start(hosts.get(p), GossipsubConfig.DEFAULT,
          Clock.systemUTC(), new Random(p));
      squatters.add(pubsub::close);
      for (int i = 0; i < TOPICS_PER_SQUATTER; i++) {
        final byte[] bytes = new byte[16];
        random.nextBytes(bytes);
        pending.add(pubsub.subscribe(new OrbitDbAddress(DagCbor.cid(bytes)).toString()));
      }
    }
    CompletableFuture.allOf(pending.toArray(CompletableFuture[]::new)).get(10, TimeUnit.SECONDS);
    pending.clear();
    for (final Host host : hosts) {
      pending.add(host.dial(Multiaddr.parse(relay.tcpMultiaddr())));
    }
    CompletableFuture.allOf(pending.toArray(CompletableFuture[]::new)).get(30, TimeUnit.SECONDS);

    // Each squatter has checks running and more queued; they hold them until the first round
    // of checks timed out (at 10 s; the issue held them 8 s before its writer came), so their
    // retries wait for slots too.
    try {
      await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(100)).until(() ->
          relay.metric("relay_orbitdb_topic_admissions_pending").orElse(0) >= SQUATTERS
              && relay.metric("relay_orbitdb_topic_admissions_queued").orElse(0) > 0);
      await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(100)).until(() ->
          series("relay_orbitdb_topic_admissions_total{event=\"not-admitted\"}") > 0);
    } finally {
      System.out.println("SQUAT held: " + admissions());
    }
    final long heldAt = System.currentTimeMillis();

    // Then a JS OrbitDB writer dials, opens two databases and writes four entries, each naming
    // a file of its own; no explicit sync. The relay has them (every file pinned as media, both
    // databases synced) within 10 s of the writer's first write.
    try (JsPeer writer = HonestJsClient.startWriter(relay, 4, 16 * 1024, 4)) {
      final JsonNode writing = writer.nextEvent("writing", HonestJsClient.START);
      final long writingAt = writing.get("at").asLong();
      assertThat(writingAt).isGreaterThan(heldAt);
      final List<String> databases = new ArrayList<>();
      writing.get("dbs").forEach(db -> databases.add(db.asText()));
      final List<String> files = new ArrayList<>();
      writing.get("files").forEach(file -> files.add(file.asText()));
      final long deadline = writingAt + REPLICATED_WITHIN.toMillis();
      try {
        await().atMost(Duration.ofMillis(Math.max(1, deadline - System.currentTimeMillis())))
            .pollInterval(Duration.ofMillis(100))
            .until(() -> HonestJsClient.replicated(relay, databases, files));
      } finally {
        System.out.println("SQUAT replicated after "
            + (System.currentTimeMillis() - writingAt) + " ms; "
            + admissions());
      }
      final HonestJsClient.Written written = HonestJsClient.awaitReady(writer);
      assertThat(written.databases()).containsExactlyElementsOf(databases);
      HonestJsClient.assertFilesServed(relay, written);
    }
    // The relay followed the writer's databases and none of the made-up ones.
    assertThat(relay.metric("relay_orbitdb_topics_followed")).hasValue(2);
    assertThat(relay.metrics()).containsPattern(
        "relay_orbitdb_topic_admissions_total\\{event=\"not-admitted\"\\} [1-9]");
    // Meanwhile the squatters still hold their topics.
    assertSurvived();
    closeSquatters();
  }

  @Test
  @Order(2)
  void pinsDelete_ofAReplicatedMediaCidInAnotherSpelling_thenGc_shouldKeepTheMedia()
      throws Exception {
    // A JS writer's entries name file 0 (and 1); file 2 is named by no entry.
    final HonestJsClient.Written written;
    final Cid media;
    final Cid tenantsOwn;
    final String mediaRequest;
    final String ownRequest;
    try (JsPeer writer = HonestJsClient.startWriter(relay, 3, 300_000, 2)) {
      written = HonestJsClient.awaitReady(writer);
      final List<String> named = List.of(written.files().get(0).cid(),
          written.files().get(1).cid());
      await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200))
          .until(() -> HonestJsClient.replicated(relay, written.databases(), named));
      media = Cid.parse(written.files().get(0).cid());
      tenantsOwn = Cid.parse(written.files().get(2).cid());
      // 300 kB in 256 KiB chunks: a dag-pb root, so a CIDv0 spelling exists.
      assertThat(media.toString()).startsWith("bafybei");

      // The tenant pins the replicated media as CIDv0 ("Qm…"), and the file no entry names as
      // upper-case base32 ("BAFY…"), fetched from the writer still connected.
      mediaRequest = pinRequest(Cid.v0(media.multihash()).toString());
      ownRequest = pinRequest(tenantsOwn.toString().toUpperCase(Locale.ROOT));
    }
    // The writer left: nothing can fetch a deleted block again (nor does the gateway try).

    final double removedBefore = relay.metric("relay_gc_removed_blocks_total").orElse(0);
    assertThat(send("DELETE", "/pins/" + mediaRequest, null).statusCode()).isEqualTo(202);
    assertThat(send("DELETE", "/pins/" + ownRequest, null).statusCode()).isEqualTo(202);

    // GC runs every second; the tenant's own file goes once its grace is over (its two blocks
    // and the root), which shows GC ran after the deletes.
    await().atMost(GC_GRACE.plusSeconds(20)).pollInterval(Duration.ofMillis(200))
        .until(() -> !stored(tenantsOwn)
            && relay.metric("relay_gc_removed_blocks_total").orElse(0) >= removedBefore + 3);
    assertThat(relay.getBytes("/ipfs/" + tenantsOwn).statusCode()).isEqualTo(404);

    // The replicated media stays: on disk, served byte for byte, and the stats agree.
    assertThat(stored(media)).isTrue();
    HonestJsClient.assertFilesServed(relay, new HonestJsClient.Written(written.peerId(),
        written.databases(), written.files().subList(0, 2)));
    assertThat(HonestJsClient.pinnedMedia(relay)).contains(media.toString());
    assertThat(series("relay_pinning_service_events_total{event=\"released\"}"))
        .isEqualTo(2.0);
    assertThat(series("relay_pinning_service_events_total{event=\"still_held\"}"))
        .isEqualTo(1.0);
    assertThat(JSON.readTree(send("GET", "/pins?status=queued,pinning,pinned,failed", null)
        .body()).get("count").asInt()).isZero();
    assertSurvived();
  }

  /**
   * Whether the block of {@code cid} is a file in the relay's flatfs store, looked at from
   * outside while the relay runs ({@code blocks/<next-to-last 2 of the key>/<key>.data}).
   */
  private boolean stored(final Cid cid) {
    final String key = FlatFsBlockstore.keyOf(cid.multihash());
    return Files.isRegularFile(relay.dataDir().resolve("blocks")
        .resolve(key.substring(key.length() - 3, key.length() - 1)).resolve(key + ".data"));
  }

  /** Posts a pin request of the tenant for {@code cid} as spelled, waits until pinned; its id. */
  private String pinRequest(final String cid) throws Exception {
    final HttpResponse<String> added = send("POST", "/pins",
        JSON.createObjectNode().put("cid", cid).toString());
    assertThat(added.statusCode()).as(added.body()).isEqualTo(202);
    final String id = JSON.readTree(added.body()).get("requestid").asText();
    await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200)).until(() ->
        JSON.readTree(send("GET", "/pins/" + id, null).body()).get("status").asText()
            .equals("pinned"));
    return id;
  }

  private HttpResponse<String> send(final String method, final String path, final String body)
      throws Exception {
    final HttpRequest.Builder request = HttpRequest.newBuilder(relay.url(path))
        .header("Authorization", "Bearer " + TENANT).timeout(Duration.ofSeconds(30));
    if (body != null) {
      request.header("Content-Type", "application/json")
          .method(method, HttpRequest.BodyPublishers.ofString(body));
    } else {
      request.method(method, HttpRequest.BodyPublishers.noBody());
    }
    return client.send(request.build(), HttpResponse.BodyHandlers.ofString());
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

  private String admissions() {
    try {
      final StringBuilder out = new StringBuilder();
      for (final String line : relay.metrics().split("\n")) {
        if (line.startsWith("relay_orbitdb_topic")) {
          out.append(line).append("; ");
        }
      }
      return out.toString();
    } catch (final Exception e) {
      return "no metrics: " + e;
    }
  }
}
