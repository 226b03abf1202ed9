package io.relaypinner.libp2p.host;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.util.concurrent.DefaultPromise;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.GlobalEventExecutor;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/**
 * {@link Host#close()} closes its connections together, not one timeout after another: every
 * close is started before the first wait, and one shared deadline ends the wait (before the fix,
 * each connection was closed and waited for in turn, 2 s each).
 */
class HostCloseTest {
  /** A close that never completes (a peer that does not read our GO_AWAY); records waits. */
  private static final class StuckClose extends DefaultPromise<Void> {
    private final List<String> events;
    private final int index;

    StuckClose(final List<String> events, final int index) {
      super(GlobalEventExecutor.INSTANCE);
      this.events = events;
      this.index = index;
    }

    @Override
    public boolean awaitUninterruptibly(final long timeout, final TimeUnit unit) {
      events.add("wait " + index);
      return super.awaitUninterruptibly(timeout, unit);
    }
  }

  @Test
  void closeAll_startsEveryClose_beforeWaitingForAny_andWaitsOnce() {
    final List<String> events = new CopyOnWriteArrayList<>();
    final List<Supplier<Future<?>>> closes = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      final int index = i;
      closes.add(() -> {
        events.add("start " + index);
        return new StuckClose(events, index);
      });
    }
    Host.closeAll(closes, Duration.ofMillis(200));
    // The first wait uses up the shared deadline; nothing waits a second time.
    assertThat(events).containsExactly("start 0", "start 1", "start 2", "start 3", "start 4",
        "wait 0");
  }
}
