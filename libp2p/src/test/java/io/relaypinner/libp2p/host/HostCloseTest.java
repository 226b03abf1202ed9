package io.relaypinner.libp2p.host;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.util.concurrent.DefaultPromise;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.GlobalEventExecutor;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/** {@link Host#close()} closes its connections together, not one timeout after another. */
class HostCloseTest {
  @Test
  void closeAll_startsEveryClose_beforeWaitingForAny() {
    final List<Long> started = new CopyOnWriteArrayList<>();
    final List<Supplier<Future<?>>> closes = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      // Connections whose close never completes (a peer that does not read our GO_AWAY).
      closes.add(() -> {
        started.add(System.nanoTime());
        return new DefaultPromise<Void>(GlobalEventExecutor.INSTANCE);
      });
    }
    final Duration timeout = Duration.ofMillis(500);
    Host.closeAll(closes, timeout);
    assertThat(started).hasSize(5);
    // One after another, each close would start a whole timeout after the previous one.
    assertThat(started.get(4) - started.get(0)).isLessThan(timeout.toNanos());
  }
}
