package io.relaypinner.stores;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.relaypinner.ipfs.blockstore.StoreUnavailableException;
import io.relaypinner.ipfs.datastore.Fence;
import io.relaypinner.ipfs.datastore.StaleFenceException;
import io.relaypinner.testkit.PostgresServer;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.CopyOnWriteArrayList;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Leases, notifications and media work between relays on one PostgreSQL. */
class PostgresCoordinationIT {
  private static PostgresServer server;

  @BeforeAll
  static void startServer() {
    PostgresServer.ensureInstalled();
    server = new PostgresServer().start();
  }

  @AfterAll
  static void stopServer() {
    if (server != null) {
      server.close();
    }
  }

  private static PostgresStoreConfig config() {
    return PostgresDatastoreIT.config(server.jdbcUrl(), PostgresServer.PASSWORD);
  }

  @Test
  void headsChangesReachEveryRelay() {
    try (PostgresDatastore store = PostgresDatastore.open(config())) {
      final List<String> heardByTwo = new CopyOnWriteArrayList<>();
      try (PostgresNotifier one = new PostgresNotifier(config(), store.dataSource(),
          "relay_heads", payload -> { });
          PostgresNotifier two = new PostgresNotifier(config(), store.dataSource(),
              "relay_heads", heardByTwo::add)) {
        Awaitility.await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
          one.notify("/orbitdb/zdpuA");
          assertThat(heardByTwo).contains("/orbitdb/zdpuA");
        });
      }
    }
  }

  @Test
  void aTtlLeaseIsRenewedByItsHolderAndTakenOverOnceItExpires() {
    try (PostgresDatastore store = PostgresDatastore.open(config())) {
      final PostgresLeaseTable one = new PostgresLeaseTable(store.dataSource(), config(),
          "relay-1", Duration.ofMillis(1500));
      final PostgresLeaseTable two = new PostgresLeaseTable(store.dataSource(), config(),
          "relay-2", Duration.ofMillis(1500));
      assertThat(one.tryAcquire("/orbitdb/zdpuTtl")).isPresent();
      assertThat(two.tryAcquire("/orbitdb/zdpuTtl")).isEmpty();
      assertThat(one.renew(List.of("/orbitdb/zdpuTtl", "/orbitdb/zdpuOther")))
          .containsOnlyKeys("/orbitdb/zdpuTtl");
      assertThat(two.holderOf("/orbitdb/zdpuTtl")).contains("relay-1");
      assertThat(two.tryAcquire(List.of("/orbitdb/zdpuTtl", "/orbitdb/zdpuFree")))
          .containsOnlyKeys("/orbitdb/zdpuFree");
      // relay-1 stops renewing (it died): relay-2 gets the lease once it expired, and relay-1's
      // late renewal finds nothing.
      Awaitility.await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(200))
          .until(() -> two.tryAcquire("/orbitdb/zdpuTtl").isPresent());
      assertThat(one.renew(List.of("/orbitdb/zdpuTtl"))).isEmpty();
      assertThat(one.tryAcquire("/orbitdb/zdpuTtl")).isEmpty();
      two.release("/orbitdb/zdpuTtl");
      assertThat(one.tryAcquire("/orbitdb/zdpuTtl")).isPresent();
    }
  }

  @Test
  void epochs_stayOnRenewal_growOnTakeoverAndRetake_andNeverGoBackAfterRelease() {
    try (PostgresDatastore store = PostgresDatastore.open(config())) {
      final String name = "/orbitdb/zdpuEpochs";
      final PostgresLeaseTable one = new PostgresLeaseTable(store.dataSource(), config(),
          "relay-1", Duration.ofMillis(1000));
      final PostgresLeaseTable two = new PostgresLeaseTable(store.dataSource(), config(),
          "relay-2", Duration.ofMillis(1000));
      final long first = one.tryAcquire(name).orElseThrow();
      // A renewal, by either statement, keeps the epoch.
      assertThat(one.renew(List.of(name))).containsEntry(name, first);
      assertThat(one.tryAcquire(name)).hasValue(first);
      assertThat(one.tryAcquire(List.of(name))).containsEntry(name, first);
      // Expired, then taken over by relay-2: a higher epoch.
      final long takeover = Awaitility.await().atMost(Duration.ofSeconds(10))
          .pollInterval(Duration.ofMillis(50))
          .until(() -> two.tryAcquire(name), OptionalLong::isPresent).getAsLong();
      assertThat(takeover).isGreaterThan(first);
      // relay-2 lets it expire and takes it again itself: a retake gets a new epoch too.
      Awaitility.await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(50))
          .until(() -> two.holderOf(name).isEmpty());
      final long retake = two.tryAcquire(name).orElseThrow();
      assertThat(retake).isGreaterThan(takeover);
      // Released (the row deleted) and inserted again: still higher, one sequence for all.
      two.release(name);
      assertThat(one.tryAcquire(name).orElseThrow()).isGreaterThan(retake);
    }
  }

  @Test
  void aFencedWrite_landsWhileItsEpochHolds_andIsRefusedWithNothingWrittenOnceTakenOver() {
    try (PostgresDatastore store = PostgresDatastore.open(config())) {
      final String name = "/orbitdb/zdpuFenced";
      final PostgresLeaseTable one = new PostgresLeaseTable(store.dataSource(), config(),
          "relay-1", Duration.ofMillis(1000));
      final PostgresLeaseTable two = new PostgresLeaseTable(store.dataSource(), config(),
          "relay-2", Duration.ofMillis(1000));
      final Fence fence = new Fence(name, "relay-1", one.tryAcquire(name).orElseThrow());
      store.write(Map.of("/fenced/a", new byte[] {1}), List.of(), fence);
      assertThat(store.get("/fenced/a")).hasValueSatisfying(v -> assertThat(v).containsExactly(1));
      assertThat(store.underFence(fence, () -> "ran")).isEqualTo("ran");
      Awaitility.await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(50))
          .until(() -> two.tryAcquire(name).isPresent());
      final long failures = store.failures();
      assertThatThrownBy(() -> store.write(Map.of("/fenced/a", new byte[] {2},
          "/fenced/b", new byte[] {2}), List.of("/fenced/a"), fence))
          .isInstanceOf(StaleFenceException.class)
          .isInstanceOf(StoreUnavailableException.class);
      assertThat(store.get("/fenced/a")).hasValueSatisfying(v -> assertThat(v).containsExactly(1));
      assertThat(store.get("/fenced/b")).isEmpty();
      assertThatThrownBy(() -> store.underFence(fence, () -> {
        throw new AssertionError("ran under a stale fence");
      })).isInstanceOf(StaleFenceException.class);
      // Refused by the lease, not an outage.
      assertThat(store.failures()).isEqualTo(failures);
      assertThat(store.availability().up()).isTrue();
    }
  }

  @Test
  void aMediaPinIsWorkedOnByOneRelayAtATime_andFreedWhenItsHolderDies() {
    try (PostgresDatastore store = PostgresDatastore.open(config())) {
      final PostgresMediaWork one = new PostgresMediaWork(config(), 4);
      final PostgresMediaWork two = new PostgresMediaWork(config(), 4);
      final var claim = one.claim("bafkqaaa").orElseThrow();
      assertThat(two.claim("bafkqaaa")).isEmpty();
      assertThat(two.claim("bafkqaab")).isPresent().get()
          .satisfies(other -> other.close(true));
      // Not done (the pin failed, or the holder's session ended): free for the next claim.
      claim.close(false);
      final var again = two.claim("bafkqaaa").orElseThrow();
      assertThat(one.claim("bafkqaaa")).isEmpty();
      again.close(true);
    }
  }
}
