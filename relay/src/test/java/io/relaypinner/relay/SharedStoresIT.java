package io.relaypinner.relay;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.relaypinner.ipfs.blockstore.StoreUnavailableException;
import io.relaypinner.ipfs.unixfs.UnixFsImporter;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.multiformats.Multiaddr;
import io.relaypinner.multiformats.Multibase;
import io.relaypinner.orbitdb.OrbitDbAddress;
import io.relaypinner.orbitdb.log.Entry;
import io.relaypinner.relay.storage.GatewayCache;
import io.relaypinner.relay.storage.LogMembers;
import io.relaypinner.relay.storage.StorageGc;
import io.relaypinner.relay.storage.StorageQuota;
import io.relaypinner.relay.sync.SyncHistory;
import io.relaypinner.relay.testing.SharedStores;
import io.relaypinner.relay.testing.TestPins;
import io.relaypinner.relay.testing.WriterPeer;
import io.relaypinner.testkit.MutableClock;
import io.relaypinner.testkit.PostgresServer;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

/**
 * Relays on one S3 bucket (s3proxy) and one PostgreSQL database, both started by the test on
 * loopback: what one relay pins, every relay serves; an S3 outage is answered 503, a PostgreSQL
 * outage fails metadata writes clearly, and nothing is lost once the store is back.
 */
class SharedStoresIT {
  @RegisterExtension
  static final SharedStores STORES = new SharedStores("relay-shared");

  @TempDir
  Path dataDirs;
  private final List<RelayNode> relays = new ArrayList<>();
  private final HttpClient client = HttpClient.newBuilder()
      .version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(5)).build();

  @AfterEach
  void stopRelays() {
    for (final RelayNode relay : relays) {
      relay.close();
    }
  }

  private RelayNode relay(final int n) {
    final RelayNode relay = STORES.relay(dataDirs.resolve("relay" + n), n);
    relays.add(relay);
    relay.start();
    return relay;
  }

  private HttpResponse<byte[]> get(final RelayNode relay, final String path) throws Exception {
    return client.send(HttpRequest.newBuilder(
        URI.create("http://127.0.0.1:" + relay.http().port().getAsInt() + path))
        .timeout(Duration.ofSeconds(30)).build(), HttpResponse.BodyHandlers.ofByteArray());
  }

  @Test
  void whatOneRelayPinsEveryRelayServes_andAnOutageIs503WithNothingLost() throws Exception {
    final RelayNode one = relay(1);
    final RelayNode two = relay(2);
    final byte[] file = new byte[700_000];
    new Random(7).nextBytes(file);
    final Cid cid = new UnixFsImporter(one.storage().blockstore(), UnixFsImporter.Options.HELIA)
        .importBytes(file);
    one.storage().pins().pin(cid, TestPins.HOLDER);

    for (final RelayNode relay : List.of(one, two)) {
      final HttpResponse<byte[]> response = get(relay, "/ipfs/" + cid);
      assertThat(response.statusCode()).isEqualTo(200);
      assertThat(response.body()).isEqualTo(file);
    }
    assertThat(two.storage().pins().isPinned(cid)).isTrue();

    STORES.s3().stop();
    try {
      final HttpResponse<byte[]> down = get(two, "/ipfs/" + cid);
      assertThat(down.statusCode()).isEqualTo(503);
      assertThat(new String(down.body(), StandardCharsets.UTF_8)).contains("unavailable");
    } finally {
      STORES.s3().start();
    }
    final byte[] second = "pinned after the outage".getBytes(StandardCharsets.UTF_8);
    final Cid secondCid = new UnixFsImporter(two.storage().blockstore(),
        UnixFsImporter.Options.HELIA).importBytes(second);
    STORES.postgres().stop();
    try {
      // Metadata cannot be written while PostgreSQL is down: a clear error, nothing half-done.
      assertThatThrownBy(() -> two.storage().pins().pin(secondCid, TestPins.HOLDER))
          .isInstanceOf(StoreUnavailableException.class).hasMessageContaining("postgres");
    } finally {
      STORES.postgres().start();
    }
    Awaitility.await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(500))
        .ignoreExceptions()
        .until(() -> two.storage().pins().pin(secondCid, TestPins.HOLDER) != null);
    assertThat(get(one, "/ipfs/" + secondCid).body()).isEqualTo(second);
    Awaitility.await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(500))
        .untilAsserted(() -> {
          final HttpResponse<byte[]> back = get(two, "/ipfs/" + cid);
          assertThat(back.statusCode()).isEqualTo(200);
          assertThat(back.body()).isEqualTo(file);
        });
  }

  /**
   * GC safety on shared stores: the relays' one GC ({@code StorageGc}, guarded by the GC-leader
   * lease) runs on the leader only (relay 1 or 2, whichever holds the lease), never removes a
   * block pinned through the other relay, nor one the other relay is still writing (stored, not
   * yet pinned); it removes garbage only on a second look, a grace period after it first saw it
   * unpinned. Time passes on a test clock for a StorageGc built like the relay's; the relays'
   * own GC shows the policy (the other skips, the leader keeps what it just saw).
   */
  @Test
  void theGcLeaderNeverRemovesWhatTheOtherRelayPinnedOrIsWriting() throws Exception {
    final RelayNode one = relay(1);
    final RelayNode two = relay(2);
    Awaitility.await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(100))
        .until(() -> one.storage().coordination().gcPolicy().mayCollect()
            || two.storage().coordination().gcPolicy().mayCollect());
    final boolean oneLeads = one.storage().coordination().gcPolicy().mayCollect();
    final RelayNode leader = oneLeads ? one : two;
    final RelayNode other = oneLeads ? two : one;
    assertThat(other.storage().coordination().gcPolicy().mayCollect()).isFalse();
    assertThat(leader.storage().coordination().gcPolicy().sharedStores()).isTrue();

    final Random random = new Random(24);
    final byte[] garbageBytes = new byte[300_000];
    random.nextBytes(garbageBytes);
    final byte[] pinnedBytes = new byte[300_000];
    random.nextBytes(pinnedBytes);
    final byte[] writingBytes = new byte[300_000];
    random.nextBytes(writingBytes);
    final byte[] lateBytes = new byte[300_000];
    random.nextBytes(lateBytes);
    final Cid garbage = new UnixFsImporter(leader.storage().blockstore(),
        UnixFsImporter.Options.HELIA).importBytes(garbageBytes);
    final Cid pinned = new UnixFsImporter(other.storage().blockstore(),
        UnixFsImporter.Options.HELIA).importBytes(pinnedBytes);
    other.storage().pins().pin(pinned, TestPins.HOLDER);
    // Written through the other relay, its pin not made yet (an import or a media pin running).
    final Cid writing = new UnixFsImporter(other.storage().blockstore(),
        UnixFsImporter.Options.HELIA).importBytes(writingBytes);
    // An entry the other relay verified, waiting for its media pin: only its marker, under the
    // other relay's scope, keeps it. Behind 5,000 records of another scope: the leader's GC
    // finds it on the second page of its paged read of the shared datastore.
    final byte[] entryBytes = new byte[1_000];
    random.nextBytes(entryBytes);
    final Cid waitingEntry = new UnixFsImporter(other.storage().blockstore(),
        UnixFsImporter.Options.HELIA).importBytes(entryBytes);
    final String log = "/orbitdb/logs/zdpuGcMembers/";
    final Map<String, byte[]> markers = new LinkedHashMap<>();
    for (int i = 0; i < 5_000; i++) {
      markers.put(log + "r/relay1/e/not-a-cid-" + i, new byte[0]);
    }
    markers.put(log + "r/relay2/e/" + waitingEntry, new byte[0]);
    other.storage().datastore().write(markers, List.of());

    // The relays' own GC: the one without the lease skips; the leader deletes nothing it sees
    // for the first time.
    assertThat(other.storage().gc().runOnce()).isEqualTo(StorageGc.Outcome.SKIPPED);
    assertThat(leader.storage().gc().runOnce()).isEqualTo(StorageGc.Outcome.DONE);
    assertThat(leader.storage().gc().removedBlocks()).isZero();

    final MutableClock clock = new MutableClock(Instant.now());
    final Duration grace = Duration.ofMinutes(5);
    final StorageGc gc = gc(leader, grace, clock);
    final StorageGc notLeading = gc(other, grace, clock);
    assertThat(notLeading.runOnce()).isEqualTo(StorageGc.Outcome.SKIPPED);

    // First sighting: garbage and the unpinned blocks are noted, nothing is removed.
    assertThat(gc.runOnce()).isEqualTo(StorageGc.Outcome.DONE);
    assertThat(gc.removedBlocks()).isZero();
    // The other relay's write ends with its pin, and it starts another write, within the grace.
    other.storage().pins().pin(writing, TestPins.HOLDER);
    final Cid late = new UnixFsImporter(other.storage().blockstore(), UnixFsImporter.Options.HELIA)
        .importBytes(lateBytes);
    clock.advance(grace.plusMinutes(1));
    // Second look: the garbage goes; the block written since is seen for the first time.
    assertThat(gc.runOnce()).isEqualTo(StorageGc.Outcome.DONE);
    assertThat(gc.removedBlocks()).isPositive();

    assertThat(leader.storage().blockstore().has(garbage)).isFalse();
    assertThat(leader.storage().blockstore().has(late)).isTrue();
    assertThat(leader.storage().blockstore().has(waitingEntry)).isTrue();
    other.storage().datastore().write(Map.of(), markers.keySet());
    for (final RelayNode relay : List.of(one, two)) {
      assertThat(get(relay, "/ipfs/" + pinned).body()).isEqualTo(pinnedBytes);
      assertThat(get(relay, "/ipfs/" + writing).body()).isEqualTo(writingBytes);
    }
    assertThat(notLeading.runOnce()).isEqualTo(StorageGc.Outcome.SKIPPED);
    assertThat(notLeading.removedBlocks()).isZero();
  }

  /**
   * A GC of {@code relay}'s stores as the relay builds it (keeping the replicated logs'
   * members), on {@code clock}.
   */
  private static StorageGc gc(final RelayNode relay, final Duration grace,
      final MutableClock clock) {
    return new StorageGc(relay.storage().pins(), new GatewayCache(1 << 20),
        new StorageQuota(0, () -> 0L, () -> { }), clock, grace,
        relay.storage().coordination().gcPolicy(), new LogMembers(relay.storage().datastore()));
  }

  /**
   * Issue 24, store outages during syncs: a relay on s3proxy and PostgreSQL replicates a Java
   * writer's database (entries naming media files, served over bitswap, part withheld so the
   * sync is in progress) when s3proxy stops, and later (more entries being written) when
   * PostgreSQL stops, each restarted on the same port and data. While a store is down the routes
   * that need it answer 503 {@code store_unavailable}, {@code /health} reports it down, one WARN
   * line tells of the outage, {@code relay_store_failures_total} rises, nothing is recorded as
   * synced; the relay without PostgreSQL stops acting as the database's owner. Once the store is
   * back the sync retries on its own and completes: every entry and media file is stored (hash
   * verified) and pinned, the sync history lists the database, the lease has one holder, no
   * media claim is left.
   */
  @Test
  void storeOutagesDuringSyncs_are503_retried_andLoseNothing() throws Exception {
    final ListAppender<ILoggingEvent> logs = new ListAppender<>();
    logs.start();
    final Logger root = (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
    root.addAppender(logs);
    try (WriterPeer writer = new WriterPeer("outage")) {
      final RelayNode relay = relay(1);
      phase("relay started");
      final String address = writer.address().toString();
      writer.write(FIRST, MEDIA_BYTES, true);
      writer.dial(Multiaddr.parse(tcp(relay)));
      writer.subscribe();
      // The explicit sync once the relay follows the topic: sent earlier, it can run before the
      // writer's blocks are reachable, fail at once and put the database into its 60 s cooldown
      // (seen once in CI: the mid-sync state below was then never reached within 30 s).
      until(Duration.ofSeconds(30), () -> relay.replication().topics().followed()
          .contains(address));
      syncSoon(relay, address);
      // Mid-sync: the relay owns the database and holds part of the log (the rest withheld).
      // Its first sync ran before it held the lease, as a follower, which records the database
      // as synced with what it joined (scale-out semantics); the owner's syncs record only a
      // complete log.
      until(Duration.ofSeconds(30), () -> {
        writer.publishHead();
        return relay.storage().coordination().ownership().owns(address)
            && logSize(relay, address) > 0
            && lastSynced(relay, address).isPresent();
      });
      final Cid stored = writer.log().get(FIRST - 1).cid();
      phase("mid-sync");

      // s3proxy stops; the writer serves everything now.
      final Optional<Instant> syncedBefore = lastSynced(relay, address);
      STORES.s3().stop();
      final long s3Warnings;
      try {
        writer.release();
        writer.publishHead();
        assertUnavailable(get(relay, "/ipfs/" + stored), "s3");
        assertUnavailable(get(relay, "/ipfs/" + stored), "s3");
        until(Duration.ofSeconds(30), () -> storeState(relay, "s3").equals("down"));
        assertThat(failures(relay, "s3")).isPositive();
        // Nothing is recorded as synced while the log cannot be completed.
        assertThat(lastSynced(relay, address)).isEqualTo(syncedBefore);
        s3Warnings = warnings(logs, "s3 unavailable");
      } finally {
        STORES.s3().start();
      }
      assertThat(s3Warnings).isEqualTo(1);
      phase("s3 outage");
      // Back: the sync completes on its own (no new message, no explicit request).
      untilComplete(relay, writer, FIRST);
      assertThat(storeState(relay, "s3")).isEqualTo("up");
      phase("complete after s3");

      // More entries, the older ones and their media withheld; PostgreSQL stops mid-sync.
      writer.write(SECOND, MEDIA_BYTES, true);
      until(Duration.ofSeconds(30), () -> {
        writer.publishHead();
        return logSize(relay, address) > FIRST;
      });
      phase("second batch mid-sync");
      STORES.postgres().stop();
      final long pgWarnings;
      try {
        writer.release();
        writer.publishHead();
        assertUnavailable(get(relay, "/ipfs/" + stored), "postgres");
        until(Duration.ofSeconds(30), () -> storeState(relay, "postgres").equals("down"));
        // No renewal: the relay stops acting as the owner before the lease can pass to another.
        until(Duration.ofSeconds(15),
            () -> !relay.storage().coordination().ownership().owns(address));
        assertThat(failures(relay, "postgres")).isPositive();
        pgWarnings = warnings(logs, "postgres unavailable");
      } finally {
        STORES.postgres().start();
      }
      assertThat(pgWarnings).isEqualTo(1);
      phase("postgres outage");
      untilComplete(relay, writer, FIRST + SECOND);
      assertThat(relay.storage().coordination().ownership().owns(address)).isTrue();
      assertThat(storeState(relay, "postgres")).isEqualTo("up");
      phase("complete after postgres");

      // Nothing lost, nothing doubled.
      for (final Entry entry : writer.log()) {
        assertThat(relay.storage().blockstore().get(entry.cid())).as("entry stored").isPresent();
        assertThat(relay.storage().pins().isPinned(entry.cid())).as("entry pinned").isTrue();
      }
      for (int i = 0; i < writer.media().size(); i++) {
        final HttpResponse<byte[]> file = get(relay, "/ipfs/" + writer.media().get(i));
        assertThat(file.statusCode()).isEqualTo(200);
        assertThat(file.body()).isEqualTo(writer.mediaBytes(i));
      }
      final List<Cid> blocks = new ArrayList<>();
      relay.storage().blockstore().forEachKey(blocks::add);
      for (final Cid cid : blocks) {
        // Every read is hash-verified (CorruptBlockException otherwise).
        assertThat(relay.storage().blockstore().get(cid)).isPresent();
      }
      assertThat(relay.replication().syncEngine().history().get(address)).isPresent();
      try (Connection c = DriverManager.getConnection(STORES.postgres().jdbcUrl(), PostgresServer.USER,
          PostgresServer.PASSWORD); Statement s = c.createStatement()) {
        try (ResultSet r = s.executeQuery("SELECT holder FROM relay_leases WHERE name = '"
            + address + "'")) {
          assertThat(r.next()).isTrue();
          assertThat(r.getString(1)).isEqualTo(relay.identity().peerId().toBase58());
          assertThat(r.next()).isFalse();
        }
        try (ResultSet r = s.executeQuery("SELECT count(*) FROM relay_media_work")) {
          r.next();
          assertThat(r.getInt(1)).as("media claims left").isZero();
        }
        try (ResultSet r = s.executeQuery("SELECT count(*) FROM relay_datastore WHERE key LIKE '"
            + "/orbitdb/logs/" + writer.address().manifest().toString(Multibase.Base.BASE58BTC)
            + "/r/" + relay.identity().peerId().toBase58() + "/e/%'")) {
          r.next();
          assertThat(r.getInt(1)).as("entry markers").isEqualTo(FIRST + SECOND);
        }
      }
      assertThat(logs.list).noneMatch(e -> e.getThrowableProxy() != null
          && e.getLevel().isGreaterOrEqual(Level.WARN)
          && StoreUnavailableException.find(((ch.qos.logback.classic.spi.ThrowableProxy)
              e.getThrowableProxy()).getThrowable()) != null);
    } finally {
      root.detachAppender(logs);
    }
  }

  private static final int FIRST = 8;
  private static final int SECOND = 4;
  private static final int MEDIA_BYTES = 150_000;

  private long phaseStart = System.nanoTime();

  private void phase(final String name) {
    final long now = System.nanoTime();
    System.out.println("SharedStoresIT: " + name + ": " + (now - phaseStart) / 1_000_000 + " ms");
    phaseStart = now;
  }

  private static Optional<Instant> lastSynced(final RelayNode relay, final String address) {
    return relay.replication().syncEngine().history().get(address)
        .map(SyncHistory.Entry::lastSyncedAt);
  }

  private static void until(final Duration limit,
      final java.util.concurrent.Callable<Boolean> condition) {
    Awaitility.await().atMost(limit).pollInterval(Duration.ofMillis(200)).until(condition);
  }

  private static String tcp(final RelayNode relay) {
    return relay.network().host().listenAddresses().stream()
        .filter(a -> !a.toString().endsWith("/ws")).findFirst().orElseThrow()
        .withPeerId(relay.identity().peerId()).toString();
  }

  private static int logSize(final RelayNode relay, final String address) {
    return relay.replication().service().replicas().replica(OrbitDbAddress.parse(address))
        .map(r -> r.log().size()).orElse(0);
  }

  /** The log holds {@code entries} entries, complete; every media file is pinned; synced. */
  private static boolean complete(final RelayNode relay, final WriterPeer writer,
      final int entries) {
    final String address = writer.address().toString();
    final boolean logDone = relay.replication().service().replicas()
        .replica(writer.address()).map(r -> r.log().size() == entries && r.log().isComplete())
        .orElse(false);
    if (!logDone) {
      return false;
    }
    for (final Cid media : writer.media().subList(0, entries)) {
      if (!relay.storage().pins().isPinned(media)) {
        return false;
      }
    }
    return relay.replication().syncEngine().history().get(address).isPresent();
  }

  /** Awaits {@link #complete}; on timeout fails with the relay's state. */
  private static void untilComplete(final RelayNode relay, final WriterPeer writer,
      final int entries) {
    try {
      until(Duration.ofSeconds(60), () -> complete(relay, writer, entries));
    } catch (final org.awaitility.core.ConditionTimeoutException e) {
      final var replication = relay.replication().service();
      final var log = replication.replicas().replica(writer.address()).map(r -> r.log());
      throw new AssertionError("not complete: log " + log.map(l -> l.size() + " entries, "
          + l.missing().size() + " missing, " + l.incompleteCount() + " incomplete, complete "
          + l.isComplete() + ", " + l.counters()).orElse("none")
          + "; media pinned " + writer.media().subList(0, entries).stream()
              .filter(relay.storage().pins()::isPinned).count() + "/" + entries
          + "; history " + relay.replication().syncEngine().history()
              .get(writer.address().toString())
          + "; syncing " + relay.replication().syncEngine().inFlight()
          + "; problems " + relay.replication().syncEngine().recentProblems()
          + "; owns " + relay.storage().coordination().ownership().owns(writer.address().toString())
          + "; replication " + replication.counters()
          + "; pins ok/failed/store-retries " + replication.pinQueue().pinnedCount() + "/"
          + replication.pinQueue().failedCount() + "/"
          + replication.pinQueue().storeRetryCount(), e);
    }
  }

  private void syncSoon(final RelayNode relay, final String address) {
    client.sendAsync(HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
            + relay.http().port().getAsInt() + "/pinning/sync"))
        .header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString("{\"dbAddress\":\"" + address + "\"}"))
        .timeout(Duration.ofSeconds(30)).build(), HttpResponse.BodyHandlers.discarding());
  }

  private static void assertUnavailable(final HttpResponse<byte[]> response, final String store)
      throws Exception {
    assertThat(response.statusCode()).isEqualTo(503);
    final JsonNode body = new ObjectMapper().readTree(response.body());
    assertThat(body.path("ok").asBoolean(true)).isFalse();
    assertThat(body.path("code").asText()).isEqualTo("store_unavailable");
    assertThat(body.path("error").asText()).contains(store);
  }

  /** {@code up} or {@code down}: the store's state in {@code /health}. */
  private String storeState(final RelayNode relay, final String store) throws Exception {
    final JsonNode health = new ObjectMapper().readTree(get(relay, "/health").body());
    return health.path("stores").path(store).asText();
  }

  private double failures(final RelayNode relay, final String store) throws Exception {
    final String text = new String(get(relay, "/metrics").body(), StandardCharsets.UTF_8);
    for (final String line : text.split("\n")) {
      if (line.startsWith("relay_store_failures_total{store=\"" + store + "\"}")) {
        return Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
      }
    }
    return 0;
  }

  private static long warnings(final ListAppender<ILoggingEvent> logs, final String text) {
    synchronized (logs.list) {
      return logs.list.stream().filter(e -> e.getLevel() == Level.WARN
          && e.getFormattedMessage().contains(text)).count();
    }
  }
}
