package io.relaypinner.relay.coordination;

import static org.assertj.core.api.Assertions.assertThat;

import io.relaypinner.ipfs.blockstore.StoreUnavailableException;
import io.relaypinner.ipfs.datastore.Fence;
import io.relaypinner.testkit.MutableClock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class LeaseKeeperTest {
  private static final Duration TTL = Duration.ofSeconds(6);

  /** relay_leases in memory, on the same clock. */
  private static final class Table {
    final MutableClock clock = new MutableClock(Instant.parse("2026-11-24T00:00:00Z"));
    final Map<String, String> holders = new HashMap<>();
    final Map<String, Instant> expiries = new HashMap<>();
    final Map<String, Long> epochs = new HashMap<>();
    long nextEpoch = 1;
    boolean down;

    LeaseKeeper.Leases as(final String holder) {
      return new LeaseKeeper.Leases() {
        @Override
        public Map<String, Long> tryAcquire(final Collection<String> names) {
          check();
          final Map<String, Long> out = new HashMap<>();
          for (final String name : names) {
            final String current = holders.get(name);
            final boolean expired = current != null
                && expiries.get(name).isBefore(clock.instant());
            if (current == null || current.equals(holder) || expired) {
              if (current == null || !current.equals(holder) || expired) {
                epochs.put(name, nextEpoch++);
              }
              holders.put(name, holder);
              expiries.put(name, clock.instant().plus(TTL));
              out.put(name, epochs.get(name));
            }
          }
          return out;
        }

        @Override
        public Map<String, Long> renew(final Collection<String> names) {
          check();
          final Map<String, Long> out = new HashMap<>();
          for (final String name : names) {
            if (holder.equals(holders.get(name))
                && !expiries.get(name).isBefore(clock.instant())) {
              expiries.put(name, clock.instant().plus(TTL));
              out.put(name, epochs.get(name));
            }
          }
          return out;
        }

        @Override
        public String holder() {
          return holder;
        }

        @Override
        public void release(final String name) {
          check();
          if (holder.equals(holders.get(name))) {
            holders.remove(name);
          }
        }

        @Override
        public Duration ttl() {
          return TTL;
        }
      };
    }

    void check() {
      if (down) {
        throw new StoreUnavailableException("postgres", "down", null);
      }
    }
  }

  /** A keeper of {@code holder} whose monotonic clock is the table's (tests move both). */
  private static LeaseKeeper keeper(final Table table, final String holder) {
    return new LeaseKeeper(table.as(holder), table.clock, () -> table.clock.millis() * 1_000_000);
  }

  @Test
  void trust_shouldEndOnTheMonotonicClock_whenTheWallClockIsSetBack() {
    final Table table = new Table();
    final AtomicLong monotonic = new AtomicLong();
    final MutableClock wall = new MutableClock(Instant.parse("2026-11-24T12:00:00Z"));
    final LeaseKeeper one = new LeaseKeeper(table.as("one"), wall, monotonic::get);
    one.want("/orbitdb/a");
    one.tick();
    assertThat(one.owns("/orbitdb/a")).isTrue();
    assertThat(one.ownedUntil("/orbitdb/a"))
        .isEqualTo(wall.millis() + TTL.toMillis() - TTL.toMillis() / 10);
    // An hour back on the wall clock, the ttl passed on the monotonic one, no renewal: the
    // lease is not trusted any more (on the wall clock alone it would be for another hour).
    table.down = true;
    wall.advance(Duration.ofHours(-1));
    monotonic.addAndGet(TTL.toNanos());
    one.tick();
    assertThat(one.owns("/orbitdb/a")).isFalse();
    assertThat(one.ownedUntil("/orbitdb/a")).isEqualTo(Long.MIN_VALUE);
  }

  @Test
  void oneOwnerAtATime_andATakeoverWithinTheTtlAndATickAfterTheOwnerDies() {
    final Table table = new Table();
    final LeaseKeeper one = keeper(table, "one");
    final LeaseKeeper two = keeper(table, "two");
    final List<String> twoGot = new ArrayList<>();
    two.onAcquired(twoGot::add);
    one.want("/orbitdb/a");
    two.want("/orbitdb/a");
    one.tick();
    two.tick();
    assertThat(one.owns("/orbitdb/a")).isTrue();
    assertThat(two.owns("/orbitdb/a")).isFalse();
    // The owner keeps renewing: nobody takes it over.
    for (int i = 0; i < 10; i++) {
      table.clock.advance(two.tickPeriod());
      one.tick();
      two.tick();
    }
    assertThat(one.owns("/orbitdb/a")).isTrue();
    assertThat(twoGot).isEmpty();
    // The owner dies (stops ticking): two owns it within ttl + one period.
    Duration waited = Duration.ZERO;
    while (!two.owns("/orbitdb/a")) {
      table.clock.advance(two.tickPeriod());
      waited = waited.plus(two.tickPeriod());
      two.tick();
    }
    assertThat(waited).isLessThanOrEqualTo(TTL.plus(two.tickPeriod()));
    assertThat(twoGot).containsExactly("/orbitdb/a");
    // The old owner stopped trusting its lease before the takeover.
    assertThat(one.owns("/orbitdb/a")).isFalse();
    one.tick();
    assertThat(one.owns("/orbitdb/a")).isFalse();
    assertThat(one.lostCount()).isEqualTo(1);
  }

  @Test
  void fence_shouldKeepItsEpochOverRenewals_andEndWithTheTrust_whenTakenOver() {
    final Table table = new Table();
    final LeaseKeeper one = keeper(table, "one");
    final LeaseKeeper two = keeper(table, "two");
    one.want("/orbitdb/a");
    two.want("/orbitdb/a");
    assertThat(one.fence("/orbitdb/a")).isEmpty();
    one.tick();
    two.tick();
    final Fence first = one.fence("/orbitdb/a").orElseThrow();
    assertThat(first).isEqualTo(new Fence("/orbitdb/a", "one", table.epochs.get("/orbitdb/a")));
    assertThat(two.fence("/orbitdb/a")).isEmpty();
    table.clock.advance(one.tickPeriod());
    one.tick();
    assertThat(one.fence("/orbitdb/a")).contains(first);
    // one pauses (no ticks): its fence ends with its trust, two takes over at a higher epoch.
    while (!two.owns("/orbitdb/a")) {
      table.clock.advance(two.tickPeriod());
      two.tick();
    }
    assertThat(one.fence("/orbitdb/a")).isEmpty();
    assertThat(two.fence("/orbitdb/a").orElseThrow().epoch()).isGreaterThan(first.epoch());
  }

  @Test
  void anOwnerCutOffFromTheStoreStopsOwningBeforeTheLeaseExpires() {
    final Table table = new Table();
    final LeaseKeeper one = keeper(table, "one");
    one.want("/orbitdb/a");
    one.tick();
    assertThat(one.owns("/orbitdb/a")).isTrue();
    table.down = true;
    final Instant expiry = table.expiries.get("/orbitdb/a");
    while (one.owns("/orbitdb/a")) {
      table.clock.advance(Duration.ofMillis(100));
      one.tick();
    }
    assertThat(table.clock.instant()).isBefore(expiry);
    assertThat(one.failureCount()).isPositive();
    table.down = false;
    one.tick();
    assertThat(one.owns("/orbitdb/a")).isTrue();
  }

  @Test
  void anOwnerBackAfterItsLeaseExpired_takesItAgainInTheSameRound_unlessAnotherRelayHasIt() {
    final Table table = new Table();
    final LeaseKeeper one = keeper(table, "one");
    final LeaseKeeper two = keeper(table, "two");
    one.want("/orbitdb/a");
    one.tick();
    // PostgreSQL down for longer than the lease: nobody else wanted it, so it is taken again
    // in the round that finds it expired (not a round later).
    table.down = true;
    table.clock.advance(TTL.plusSeconds(1));
    one.tick();
    assertThat(one.owns("/orbitdb/a")).isFalse();
    table.down = false;
    one.tick();
    assertThat(one.owns("/orbitdb/a")).isTrue();
    assertThat(one.lostCount()).isEqualTo(1);
    assertThat(one.acquiredCount()).isEqualTo(2);
    // Down again, and another relay takes the expired lease first: one holder only.
    two.want("/orbitdb/a");
    table.down = true;
    table.clock.advance(TTL.plusSeconds(1));
    one.tick();
    table.down = false;
    two.tick();
    one.tick();
    assertThat(two.owns("/orbitdb/a")).isTrue();
    assertThat(one.owns("/orbitdb/a")).isFalse();
    assertThat(table.holders).containsEntry("/orbitdb/a", "two");
  }

  @Test
  void aDroppedNameIsReleased() {
    final Table table = new Table();
    final LeaseKeeper one = keeper(table, "one");
    one.want("/orbitdb/a");
    one.tick();
    one.drop("/orbitdb/a");
    assertThat(one.owns("/orbitdb/a")).isFalse();
    one.tick();
    assertThat(table.holders).doesNotContainKey("/orbitdb/a");
  }

  @Test
  void ownedUntil_isWhenOwnsTurnsFalse_withoutARenewal() {
    final Table table = new Table();
    final LeaseKeeper one = keeper(table, "one");
    assertThat(one.ownedUntil("/orbitdb/a")).isEqualTo(Long.MIN_VALUE);
    one.want("/orbitdb/a");
    one.tick();
    final long until = one.ownedUntil("/orbitdb/a");
    assertThat(until).isGreaterThan(table.clock.millis())
        .isLessThan(table.expiries.get("/orbitdb/a").toEpochMilli());

    table.down = true;
    table.clock.advance(Duration.ofMillis(until - 1 - table.clock.millis()));
    one.tick();
    assertThat(one.owns("/orbitdb/a")).isTrue();
    assertThat(one.ownedUntil("/orbitdb/a")).isEqualTo(until);
    table.clock.advance(Duration.ofMillis(1));
    assertThat(one.owns("/orbitdb/a")).isFalse();
    assertThat(one.ownedUntil("/orbitdb/a")).isEqualTo(Long.MIN_VALUE);
  }
}
