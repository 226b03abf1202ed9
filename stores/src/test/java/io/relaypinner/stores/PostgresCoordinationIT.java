package io.relaypinner.stores;

import static org.assertj.core.api.Assertions.assertThat;

import io.relaypinner.testkit.PostgresServer;
import java.time.Duration;
import java.util.List;
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
      assertThat(one.tryAcquire("/orbitdb/zdpuTtl")).isTrue();
      assertThat(two.tryAcquire("/orbitdb/zdpuTtl")).isFalse();
      assertThat(one.renew(List.of("/orbitdb/zdpuTtl", "/orbitdb/zdpuOther")))
          .containsExactly("/orbitdb/zdpuTtl");
      assertThat(two.holderOf("/orbitdb/zdpuTtl")).contains("relay-1");
      assertThat(two.tryAcquire(List.of("/orbitdb/zdpuTtl", "/orbitdb/zdpuFree")))
          .containsExactly("/orbitdb/zdpuFree");
      // relay-1 stops renewing (it died): relay-2 gets the lease once it expired, and relay-1's
      // late renewal finds nothing.
      Awaitility.await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(200))
          .until(() -> two.tryAcquire("/orbitdb/zdpuTtl"));
      assertThat(one.renew(List.of("/orbitdb/zdpuTtl"))).isEmpty();
      assertThat(one.tryAcquire("/orbitdb/zdpuTtl")).isFalse();
      two.release("/orbitdb/zdpuTtl");
      assertThat(one.tryAcquire("/orbitdb/zdpuTtl")).isTrue();
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
