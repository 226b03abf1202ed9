package io.relaypinner.common;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

class ShutdownTest {
  @Test
  void shutdownGracefully_shouldLetRunningWorkFinish_whenNotInterruptingFirst() throws Exception {
    final ExecutorService executor = Executors.newSingleThreadExecutor();
    final CountDownLatch running = new CountDownLatch(1);
    final AtomicBoolean interrupted = new AtomicBoolean();
    executor.execute(() -> {
      running.countDown();
      try {
        Thread.sleep(200);
      } catch (final InterruptedException e) {
        interrupted.set(true);
      }
    });
    running.await(5, TimeUnit.SECONDS);

    assertThat(Shutdown.shutdownGracefully(executor, Duration.ofSeconds(5), false, "test"))
        .isTrue();
    assertThat(interrupted).isFalse();
    assertThat(executor.isTerminated()).isTrue();
  }

  @Test
  void shutdownGracefully_shouldInterruptAtOnce_whenInterruptingFirst() throws Exception {
    final ExecutorService executor = Executors.newSingleThreadExecutor();
    final CountDownLatch running = new CountDownLatch(1);
    final AtomicBoolean interrupted = new AtomicBoolean();
    executor.execute(() -> {
      running.countDown();
      try {
        Thread.sleep(60_000);
      } catch (final InterruptedException e) {
        interrupted.set(true);
      }
    });
    running.await(5, TimeUnit.SECONDS);

    assertThat(Shutdown.shutdownGracefully(executor, Duration.ofSeconds(5), true, "test"))
        .isTrue();
    assertThat(interrupted).isTrue();
  }

  @Test
  void shutdownGracefully_shouldInterruptWhatOutlivesTheWait_whenNotInterruptingFirst()
      throws Exception {
    final ExecutorService executor = Executors.newSingleThreadExecutor();
    final CountDownLatch running = new CountDownLatch(1);
    final CountDownLatch interrupted = new CountDownLatch(1);
    executor.execute(() -> {
      running.countDown();
      try {
        Thread.sleep(60_000);
      } catch (final InterruptedException e) {
        interrupted.countDown();
      }
    });
    running.await(5, TimeUnit.SECONDS);

    assertThat(Shutdown.shutdownGracefully(executor, Duration.ofMillis(50), false, "test"))
        .isFalse();
    assertThat(interrupted.await(5, TimeUnit.SECONDS)).isTrue();
  }
}
