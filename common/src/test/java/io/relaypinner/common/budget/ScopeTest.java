package io.relaypinner.common.budget;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.InetAddress;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class ScopeTest {
  private final List<String> hits = new ArrayList<>();
  private final Scope system = Scope.root("system",
      Limits.NONE.with(Resource.MEMORY, 100).with(Resource.CONNECTIONS, 10),
      (scope, resource) -> hits.add(scope.kind() + "/" + resource.label()));

  @Test
  void reservation_shouldTakeFromEveryAncestor_andGiveBackOnce() {
    final Scope gateway = system.child("gateway", "gateway", Limits.NONE.with(Resource.MEMORY, 60));
    final Reservation r = gateway.reserve(Resource.MEMORY, 40);
    assertThat(r).isNotNull();
    assertThat(gateway.used(Resource.MEMORY)).isEqualTo(40);
    assertThat(system.used(Resource.MEMORY)).isEqualTo(40);
    r.close();
    r.close();
    assertThat(gateway.used(Resource.MEMORY)).isZero();
    assertThat(system.used(Resource.MEMORY)).isZero();
    assertThat(hits).isEmpty();
  }

  @Test
  void fullChild_shouldRefuse_countTheChild_andHoldNothing() {
    final Scope gateway = system.child("gateway", "gateway", Limits.NONE.with(Resource.MEMORY, 60));
    assertThat(gateway.tryReserve(Resource.MEMORY, 50)).isTrue();
    assertThat(gateway.tryReserve(Resource.MEMORY, 20)).isFalse();
    assertThat(hits).containsExactly("gateway/memory");
    assertThat(gateway.used(Resource.MEMORY)).isEqualTo(50);
    assertThat(system.used(Resource.MEMORY)).isEqualTo(50);
  }

  @Test
  void concurrentReservations_shouldNeverShowAScopeOverItsLimit_norRefuseWhatFits()
      throws Exception {
    final java.util.concurrent.atomic.AtomicLong refused = new java.util.concurrent.atomic.AtomicLong();
    final Scope root = Scope.root("system", Limits.NONE.with(Resource.DISK, 10),
        (scope, resource) -> refused.incrementAndGet());
    final Scope child = root.child("fallback", "fallback", Limits.NONE.with(Resource.DISK, 9));
    final java.util.concurrent.atomic.AtomicLong over = new java.util.concurrent.atomic.AtomicLong();
    final java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
    final Thread sampler = new Thread(() -> {
      while (!stop.get()) {
        if (child.used(Resource.DISK) > 9 || root.used(Resource.DISK) > 10) {
          over.incrementAndGet();
        }
      }
    });
    sampler.start();
    // Three threads at 3 each: 9 fits the child exactly, so no reservation is ever refused
    // while one at a time over the limit (the old add-then-undo) would show 12.
    final List<Thread> threads = new ArrayList<>();
    for (int t = 0; t < 3; t++) {
      threads.add(new Thread(() -> {
        for (int n = 0; n < 200_000; n++) {
          if (child.tryReserve(Resource.DISK, 3)) {
            child.release(Resource.DISK, 3);
          }
        }
      }));
    }
    // And a fourth that does not fit while the three hold theirs.
    threads.add(new Thread(() -> {
      for (int n = 0; n < 200_000; n++) {
        if (child.tryReserve(Resource.DISK, 3)) {
          child.release(Resource.DISK, 3);
        }
      }
    }));
    threads.forEach(Thread::start);
    for (final Thread t : threads) {
      t.join();
    }
    stop.set(true);
    sampler.join();
    assertThat(over.get()).as("samples over a limit").isZero();
    assertThat(child.used(Resource.DISK)).isZero();
    assertThat(root.used(Resource.DISK)).isZero();
  }

  @Test
  void fullParent_shouldRefuse_countTheParent_andUndoTheChild() {
    final Scope a = system.child("gateway", "gateway", Limits.NONE.with(Resource.MEMORY, 80));
    final Scope b = system.child("import", "import", Limits.NONE.with(Resource.MEMORY, 80));
    assertThat(a.tryReserve(Resource.MEMORY, 70)).isTrue();
    assertThat(b.tryReserve(Resource.MEMORY, 40)).isFalse();
    assertThat(hits).containsExactly("system/memory");
    assertThat(b.used(Resource.MEMORY)).isZero();
    assertThat(system.used(Resource.MEMORY)).isEqualTo(70);
  }

  @Test
  void zeroLimit_shouldRefuseEverything_unlimitedNothing() {
    final Scope off = system.child("off", "off", Limits.NONE.with(Resource.STREAMS, 0));
    assertThat(off.tryReserve(Resource.STREAMS, 1)).isFalse();
    assertThat(off.tryReserve(Resource.DISK, Long.MAX_VALUE / 4)).isTrue();
    assertThat(off.available(Resource.DISK)).isEqualTo(Limits.UNLIMITED);
  }

  @Test
  void growingReservation_shouldStopAtTheLimit_andShrink() {
    final Reservation r = system.reserve(Resource.MEMORY, 10);
    assertThat(r.grow(80)).isTrue();
    assertThat(r.grow(20)).isFalse();
    assertThat(r.held()).isEqualTo(90);
    r.shrink(50);
    assertThat(system.used(Resource.MEMORY)).isEqualTo(40);
    r.close();
    assertThat(r.grow(1)).isFalse();
    assertThat(system.used(Resource.MEMORY)).isZero();
  }

  @Test
  void force_shouldCountWhatIsHeldBeyondTheLimit_andRefuseUntilReleased() {
    final Scope fallback = system.child("fallback", "fallback", Limits.NONE.with(Resource.DISK, 10));
    assertThat(fallback.tryReserve(Resource.DISK, 8)).isTrue();
    fallback.force(Resource.DISK, 5);
    assertThat(fallback.used(Resource.DISK)).isEqualTo(13);
    assertThat(fallback.tryReserve(Resource.DISK, 1)).isFalse();
    fallback.release(Resource.DISK, 13);
    assertThat(fallback.tryReserve(Resource.DISK, 10)).isTrue();
  }

  @Test
  void releasingMoreThanHeld_shouldFailLoudly() {
    assertThatThrownBy(() -> system.release(Resource.MEMORY, 1))
        .isInstanceOf(IllegalStateException.class);
    assertThat(system.used(Resource.MEMORY)).isZero();
  }

  @Test
  void keyedScopes_shouldShareOneScopePerKey_dropItWhenLastHolderCloses_andBoundKeys() {
    final KeyedScopes ips = new KeyedScopes(system, "ip",
        Limits.NONE.with(Resource.CONNECTIONS, 2), 2, system.listener());
    final KeyedScopes.Handle a1 = ips.open("10.0.0.1/32");
    final KeyedScopes.Handle a2 = ips.open("10.0.0.1/32");
    assertThat(a1.scope()).isSameAs(a2.scope());
    assertThat(a1.scope().tryReserve(Resource.CONNECTIONS, 1)).isTrue();
    assertThat(a2.scope().tryReserve(Resource.CONNECTIONS, 1)).isTrue();
    assertThat(a2.scope().tryReserve(Resource.CONNECTIONS, 1)).isFalse();
    assertThat(hits).containsExactly("ip/connections");
    final KeyedScopes.Handle b = ips.open("10.0.0.2/32");
    assertThat(ips.open("10.0.0.3/32")).isNull();
    assertThat(hits).containsExactly("ip/connections", "system/work");
    b.close();
    b.close();
    assertThat(ips.size()).isEqualTo(1);
    a1.scope().release(Resource.CONNECTIONS, 2);
    a1.close();
    assertThat(ips.peek("10.0.0.1/32")).isNotNull();
    a2.close();
    assertThat(ips.size()).isZero();
    assertThat(system.used(Resource.CONNECTIONS)).isZero();
  }

  @Test
  void ipPrefix_shouldKeyIpv4ByAddress_ipv6ByItsSlash64_andMappedAsIpv4() throws Exception {
    assertThat(IpPrefix.DEFAULT.key(InetAddress.getByName("192.0.2.7"))).isEqualTo("192.0.2.7/32");
    assertThat(IpPrefix.DEFAULT.key(InetAddress.getByName("2001:db8:1:2:aaaa::1")))
        .isEqualTo(IpPrefix.DEFAULT.key(InetAddress.getByName("2001:db8:1:2:bbbb::9")))
        .isEqualTo("2001:db8:1:2:0:0:0:0/64");
    assertThat(IpPrefix.DEFAULT.key(InetAddress.getByName("2001:db8:1:3::1")))
        .isNotEqualTo(IpPrefix.DEFAULT.key(InetAddress.getByName("2001:db8:1:2::1")));
    assertThat(IpPrefix.DEFAULT.key(InetAddress.getByName("::ffff:192.0.2.7")))
        .isEqualTo("192.0.2.7/32");
    assertThat(new IpPrefix(24, 48).key(InetAddress.getByName("192.0.2.7")))
        .isEqualTo("192.0.2.0/24");
  }
}
