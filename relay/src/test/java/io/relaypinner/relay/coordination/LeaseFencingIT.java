package io.relaypinner.relay.coordination;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.relaypinner.ipfs.datastore.Fence;
import io.relaypinner.ipfs.datastore.StaleFenceException;
import io.relaypinner.stores.PostgresDatastore;
import io.relaypinner.stores.PostgresLeaseTable;
import io.relaypinner.stores.PostgresStoreConfig;
import io.relaypinner.testkit.MutableClock;
import io.relaypinner.testkit.PostgresServer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Fencing tokens on the test PostgreSQL: two relays' {@link LeaseKeeper}s, A and B, on leases of
 * 1 s, each on a fake monotonic clock that only the test moves. A takes a lease and "pauses"
 * (its clock stands still, so it still trusts the lease, as a process frozen after its check
 * would); B takes the lease over once PostgreSQL finds it expired. A's write fenced by its old
 * epoch is refused and writes nothing, B's lands; a takeover attempted while a fenced
 * transaction is open waits until it commits.
 */
class LeaseFencingIT {
  private static final Duration TTL = Duration.ofSeconds(1);
  private static PostgresServer server;
  private static PostgresDatastore storeA;
  private static PostgresDatastore storeB;

  @BeforeAll
  static void start() {
    PostgresServer.ensureInstalled();
    server = new PostgresServer().start();
    final PostgresStoreConfig config = new PostgresStoreConfig(server.jdbcUrl(),
        Optional.of(PostgresServer.USER), Optional.of(PostgresServer.PASSWORD), 4,
        Duration.ofSeconds(2));
    storeA = PostgresDatastore.open(config);
    storeB = PostgresDatastore.open(config);
  }

  @AfterAll
  static void stop() {
    if (storeA != null) {
      storeA.close();
    }
    if (storeB != null) {
      storeB.close();
    }
    if (server != null) {
      server.close();
    }
  }

  private static LeaseKeeper keeper(final PostgresDatastore store, final String holder,
      final AtomicLong monotonicNanos) {
    return new LeaseKeeper(PostgresCoordination.leases(new PostgresLeaseTable(store, holder, TTL)),
        new MutableClock(Instant.parse("2026-11-29T00:00:00Z")), monotonicNanos::get);
  }

  private static byte[] bytes(final String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }

  /** B ticks until it owns {@code name} (PostgreSQL found A's lease expired). */
  private static void takeOver(final LeaseKeeper b, final String name) {
    Awaitility.await().atMost(Duration.ofSeconds(15)).pollInterval(Duration.ofMillis(100))
        .until(() -> {
          b.tick();
          return b.owns(name);
        });
  }

  @Test
  void aPausedOwnersFencedWrite_isRefusedAndWritesNothing_afterATakeover() {
    final String name = "/orbitdb/zdpuFencedTakeover";
    final String key = "/orbitdb/logs/zdpuFencedTakeover/heads";
    final LeaseKeeper a = keeper(storeA, "relay-a", new AtomicLong());
    final LeaseKeeper b = keeper(storeB, "relay-b", new AtomicLong());
    a.want(name);
    b.want(name);
    a.tick();
    b.tick();
    final Fence e1 = a.fence(name).orElseThrow();
    assertThat(b.owns(name)).isFalse();
    storeA.write(Map.of(key, bytes("a-before")), List.of(), e1);

    // A pauses: no ticks, its monotonic clock stands still (it trusts its lease), while
    // PostgreSQL's lease expires and B takes it over.
    takeOver(b, name);
    final Fence e2 = b.fence(name).orElseThrow();
    assertThat(e2.epoch()).isGreaterThan(e1.epoch());
    assertThat(a.fence(name)).contains(e1);

    // A wakes and sends the write it had prepared: refused, nothing of it written.
    assertThatThrownBy(() -> storeA.write(Map.of(key, bytes("a-stale"),
        "/orbitdb/logs/zdpuFencedTakeover/other", bytes("a-stale")), List.of(), e1))
        .isInstanceOf(StaleFenceException.class);
    assertThat(storeB.get(key)).hasValueSatisfying(v -> assertThat(v).isEqualTo(bytes("a-before")));
    assertThat(storeB.get("/orbitdb/logs/zdpuFencedTakeover/other")).isEmpty();
    storeB.write(Map.of(key, bytes("b")), List.of(), e2);
    assertThat(storeA.get(key)).hasValueSatisfying(v -> assertThat(v).isEqualTo(bytes("b")));

    // A's next tick finds the lease gone: it stops owning and has no fence any more.
    a.tick();
    assertThat(a.owns(name)).isFalse();
    assertThat(a.fence(name)).isEmpty();
    assertThat(a.lostCount()).isEqualTo(1);
  }

  @Test
  void aTakeover_waitsUntilAnOpenFencedTransactionCommitted() throws Exception {
    final String name = "/orbitdb/zdpuFencedWait";
    final LeaseKeeper a = keeper(storeA, "relay-a", new AtomicLong());
    final LeaseKeeper b = keeper(storeB, "relay-b", new AtomicLong());
    a.want(name);
    a.tick();
    final Fence e1 = a.fence(name).orElseThrow();
    final CountDownLatch inside = new CountDownLatch(1);
    final CountDownLatch finish = new CountDownLatch(1);
    // A's fenced work (a page of GC deletes, say) starts while it holds the lease, then pauses.
    final CompletableFuture<String> work = CompletableFuture.supplyAsync(
        () -> storeA.underFence(e1, () -> {
          inside.countDown();
          try {
            finish.await(30, TimeUnit.SECONDS);
          } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
          }
          return "done";
        }));
    assertThat(inside.await(10, TimeUnit.SECONDS)).isTrue();
    // The lease expires meanwhile; B's takeover waits on the row A's transaction holds.
    Thread.sleep(TTL.toMillis() + 300);
    b.want(name);
    final CompletableFuture<Void> takeover = CompletableFuture.runAsync(b::tick);
    Thread.sleep(700);
    assertThat(takeover).isNotDone();
    assertThat(b.owns(name)).isFalse();
    finish.countDown();
    assertThat(work.get(10, TimeUnit.SECONDS)).isEqualTo("done");
    takeover.get(10, TimeUnit.SECONDS);
    assertThat(b.owns(name)).isTrue();
    assertThat(b.fence(name).orElseThrow().epoch()).isGreaterThan(e1.epoch());
    // Whatever A starts under its old fence now is refused.
    assertThatThrownBy(() -> storeA.underFence(e1, () -> "late"))
        .isInstanceOf(StaleFenceException.class);
  }
}
