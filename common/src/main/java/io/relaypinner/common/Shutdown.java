package io.relaypinner.common;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The one way the modules stop an executor: bounded, and interrupting only when asked to. */
public final class Shutdown {
  private static final Logger LOG = LoggerFactory.getLogger(Shutdown.class);

  private Shutdown() {}

  /**
   * Stops {@code executor} and waits at most {@code timeout} for its threads to end.
   *
   * <p>{@code interruptFirst}: running tasks are interrupted at once ({@code shutdownNow}), for
   * work that may simply be abandoned. Otherwise running tasks finish first ({@code shutdown}) and
   * only those still running after {@code timeout} are interrupted, with a warning naming
   * {@code name}: for work an interrupt would harm (an interrupt during a datastore write closes
   * the store's file channel for everyone). Queued, not yet started tasks never run either way.
   * An interrupt of the caller interrupts the executor's threads and is kept.
   *
   * @return whether the executor's threads ended within the wait
   */
  public static boolean shutdownGracefully(final ExecutorService executor, final Duration timeout,
      final boolean interruptFirst, final String name) {
    Objects.requireNonNull(executor, "executor");
    Objects.requireNonNull(timeout, "timeout");
    Objects.requireNonNull(name, "name");
    if (interruptFirst) {
      executor.shutdownNow();
    } else {
      executor.shutdown();
    }
    try {
      if (executor.awaitTermination(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
        return true;
      }
      if (interruptFirst) {
        LOG.debug("{} did not stop within {} ms", name, timeout.toMillis());
      } else {
        LOG.warn("{} did not stop within {} ms", name, timeout.toMillis());
        executor.shutdownNow();
      }
      return false;
    } catch (final InterruptedException e) {
      executor.shutdownNow();
      Thread.currentThread().interrupt();
      return false;
    }
  }
}
