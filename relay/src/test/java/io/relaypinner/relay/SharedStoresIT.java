package io.relaypinner.relay;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.relaypinner.ipfs.blockstore.StoreUnavailableException;
import io.relaypinner.ipfs.pin.CodecLinkResolver;
import io.relaypinner.ipfs.unixfs.UnixFsImporter;
import io.relaypinner.libp2p.crypto.Ed25519PrivateKey;
import io.relaypinner.libp2p.crypto.PrivateKey;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.relay.config.RelayConfig;
import io.relaypinner.relay.coordination.SharedStoreGc;
import io.relaypinner.relay.identity.NodeIdentity;
import io.relaypinner.stores.PostgresStoreConfig;
import io.relaypinner.stores.S3Blockstore;
import io.relaypinner.stores.S3StoreConfig;
import io.relaypinner.testkit.MutableClock;
import io.relaypinner.testkit.PostgresServer;
import io.relaypinner.testkit.S3ProxyServer;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Relays on one S3 bucket (s3proxy) and one PostgreSQL database, both started by the test on
 * loopback: what one relay pins, every relay serves; an S3 outage is answered 503, a PostgreSQL
 * outage fails metadata writes clearly, and nothing is lost once the store is back.
 */
class SharedStoresIT {
  private static final String BUCKET = "relay-shared";
  @TempDir
  static Path shared;
  private static S3ProxyServer s3;
  private static PostgresServer postgres;

  @TempDir
  Path dataDirs;
  private final List<RelayNode> relays = new ArrayList<>();
  private final HttpClient client = HttpClient.newBuilder()
      .version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(5)).build();

  @BeforeAll
  static void startStores() {
    PostgresServer.ensureInstalled();
    s3 = new S3ProxyServer(shared.resolve("s3"), BUCKET).start();
    postgres = new PostgresServer().start();
  }

  @AfterAll
  static void stopStores() {
    if (s3 != null) {
      s3.close();
    }
    if (postgres != null) {
      postgres.close();
    }
  }

  @AfterEach
  void stopRelays() {
    for (final RelayNode relay : relays) {
      relay.close();
    }
  }

  private RelayNode relay(final int n) {
    final byte[] seed = new byte[32];
    seed[0] = (byte) n;
    final PrivateKey key = Ed25519PrivateKey.fromSeed(seed);
    final NodeIdentity identity = new NodeIdentity(key, key.publicKey().peerId(),
        NodeIdentity.servingZone(key.publicKey().peerId(), "libp2p.direct"),
        NodeIdentity.Source.ENVIRONMENT);
    final RelayConfig config = RelayConfig.builder().dataDir(dataDirs.resolve("relay" + n))
        .s3(S3StoreConfig.of(Optional.of(s3.endpoint()), BUCKET, S3ProxyServer.REGION,
            "blocks", Optional.of(S3ProxyServer.ACCESS_KEY),
            Optional.of(S3ProxyServer.SECRET_KEY)))
        .postgres(PostgresStoreConfig.of(postgres.jdbcUrl(), Optional.of(PostgresServer.USER),
            Optional.of(PostgresServer.PASSWORD)))
        .metricsHost("127.0.0.1").metricsPort(0)
        .listenIpv4("127.0.0.1").tcpPort(0).wsPort(0).ipv6Disabled(true).build();
    final RelayNode relay = new RelayNode(config, identity, new PrometheusRegistry(),
        Clock.systemUTC());
    relays.add(relay);
    relay.start();
    return relay;
  }

  private HttpResponse<byte[]> get(final RelayNode relay, final String path) throws Exception {
    return client.send(HttpRequest.newBuilder(
        URI.create("http://127.0.0.1:" + relay.httpPort().getAsInt() + path))
        .timeout(Duration.ofSeconds(30)).build(), HttpResponse.BodyHandlers.ofByteArray());
  }

  @Test
  void whatOneRelayPinsEveryRelayServes_andAnOutageIs503WithNothingLost() throws Exception {
    final RelayNode one = relay(1);
    final RelayNode two = relay(2);
    final byte[] file = new byte[700_000];
    new Random(7).nextBytes(file);
    final Cid cid = new UnixFsImporter(one.blockstore(), UnixFsImporter.Options.HELIA)
        .importBytes(file);
    one.pins().pin(cid);

    for (final RelayNode relay : List.of(one, two)) {
      final HttpResponse<byte[]> response = get(relay, "/ipfs/" + cid);
      assertThat(response.statusCode()).isEqualTo(200);
      assertThat(response.body()).isEqualTo(file);
    }
    assertThat(two.pins().isPinned(cid)).isTrue();

    s3.stop();
    try {
      final HttpResponse<byte[]> down = get(two, "/ipfs/" + cid);
      assertThat(down.statusCode()).isEqualTo(503);
      assertThat(new String(down.body(), StandardCharsets.UTF_8)).contains("unavailable");
    } finally {
      s3.start();
    }
    final byte[] second = "pinned after the outage".getBytes(StandardCharsets.UTF_8);
    final Cid secondCid = new UnixFsImporter(two.blockstore(), UnixFsImporter.Options.HELIA)
        .importBytes(second);
    postgres.stop();
    try {
      // Metadata cannot be written while PostgreSQL is down: a clear error, nothing half-done.
      assertThatThrownBy(() -> two.pins().pin(secondCid))
          .isInstanceOf(StoreUnavailableException.class).hasMessageContaining("postgres");
    } finally {
      postgres.start();
    }
    Awaitility.await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(500))
        .ignoreExceptions().until(() -> two.pins().pin(secondCid) != null);
    assertThat(get(one, "/ipfs/" + secondCid).body()).isEqualTo(second);
    Awaitility.await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(500))
        .untilAsserted(() -> {
          final HttpResponse<byte[]> back = get(two, "/ipfs/" + cid);
          assertThat(back.statusCode()).isEqualTo(200);
          assertThat(back.body()).isEqualTo(file);
        });
  }

  /**
   * GC safety on shared stores: the GC leader (relay 1 or 2, whichever holds the lease) never
   * removes a block pinned through the other relay, nor one the other relay is still writing
   * (stored, not yet pinned); it removes garbage only after it stayed unpinned for a grace
   * period. The relay that is not the leader does nothing. Time passes on a test clock (S3's
   * LastModified is real time, the clock starts at now).
   */
  @Test
  void theGcLeaderNeverRemovesWhatTheOtherRelayPinnedOrIsWriting() throws Exception {
    final RelayNode one = relay(1);
    final RelayNode two = relay(2);
    Awaitility.await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(100))
        .until(() -> one.coordination().gcLeader().getAsBoolean()
            || two.coordination().gcLeader().getAsBoolean());
    final boolean oneLeads = one.coordination().gcLeader().getAsBoolean();
    final RelayNode leader = oneLeads ? one : two;
    final RelayNode other = oneLeads ? two : one;
    assertThat(other.coordination().gcLeader().getAsBoolean()).isFalse();

    final Random random = new Random(24);
    final byte[] garbageBytes = new byte[300_000];
    random.nextBytes(garbageBytes);
    final byte[] pinnedBytes = new byte[300_000];
    random.nextBytes(pinnedBytes);
    final byte[] writingBytes = new byte[300_000];
    random.nextBytes(writingBytes);
    final Cid garbage = new UnixFsImporter(leader.blockstore(), UnixFsImporter.Options.HELIA)
        .importBytes(garbageBytes);
    final Cid pinned = new UnixFsImporter(other.blockstore(), UnixFsImporter.Options.HELIA)
        .importBytes(pinnedBytes);
    other.pins().pin(pinned);
    // Written through the other relay, its pin not made yet (an import or a media pin running).
    final Cid writing = new UnixFsImporter(other.blockstore(), UnixFsImporter.Options.HELIA)
        .importBytes(writingBytes);

    final MutableClock clock = new MutableClock(Instant.now());
    final Duration grace = Duration.ofMinutes(5);
    final SharedStoreGc gc = gc(leader, grace, clock);
    final SharedStoreGc notLeading = gc(other, grace, clock);
    assertThat(notLeading.run().leader()).isFalse();

    // Everything is younger than the grace period: nothing is even a candidate.
    assertThat(gc.run().candidates()).isZero();
    clock.advance(grace.plusMinutes(1));
    // Old now: garbage and the unpinned blocks are candidates, nothing is removed yet.
    final SharedStoreGc.Result first = gc.run();
    assertThat(first.candidates()).isPositive();
    assertThat(first.removed()).isZero();
    // The other relay's write ends with its pin, before the next run.
    other.pins().pin(writing);
    clock.advance(grace.plusMinutes(1));
    final SharedStoreGc.Result second = gc.run();
    assertThat(second.removed()).isPositive();

    assertThat(leader.blockstore().has(garbage)).isFalse();
    for (final RelayNode relay : List.of(one, two)) {
      assertThat(get(relay, "/ipfs/" + pinned).body()).isEqualTo(pinnedBytes);
      assertThat(get(relay, "/ipfs/" + writing).body()).isEqualTo(writingBytes);
    }
    assertThat(notLeading.run().leader()).isFalse();
  }

  private static SharedStoreGc gc(final RelayNode relay, final Duration grace,
      final MutableClock clock) {
    final S3Blockstore store = (S3Blockstore) relay.blockstore();
    return new SharedStoreGc(store, store::forEachKeyWithTime, relay.pins(),
        CodecLinkResolver.standard(), relay.coordination().gcLeader(), grace, clock);
  }
}
