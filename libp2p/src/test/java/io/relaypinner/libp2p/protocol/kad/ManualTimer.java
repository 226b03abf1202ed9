package io.relaypinner.libp2p.protocol.kad;

import io.relaypinner.testkit.MutableClock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/** A {@link KadLookup.Timer} whose tasks run when the test advances its clock. */
final class ManualTimer implements KadLookup.Timer {
  private record Task(Instant due, Runnable run, boolean[] cancelled) {}

  private final MutableClock clock;
  /** Cancelled tasks leave at once: a reprovider cancels a timeout per send, by the thousand. */
  private final Set<Task> tasks = new LinkedHashSet<>();

  ManualTimer(final MutableClock clock) {
    this.clock = clock;
  }

  @Override
  public synchronized Runnable schedule(final Runnable task, final Duration delay) {
    final boolean[] cancelled = {false};
    final Task scheduled = new Task(clock.instant().plus(delay), task, cancelled);
    tasks.add(scheduled);
    return () -> {
      synchronized (ManualTimer.this) {
        cancelled[0] = true;
        tasks.remove(scheduled);
      }
    };
  }

  /** Advances the clock and runs every task now due. */
  void advance(final Duration by) {
    clock.advance(by);
    final List<Task> due = new ArrayList<>();
    synchronized (this) {
      for (final Task task : List.copyOf(tasks)) {
        if (!task.due().isAfter(clock.instant())) {
          tasks.remove(task);
          if (!task.cancelled()[0]) {
            due.add(task);
          }
        }
      }
    }
    due.forEach(t -> t.run().run());
  }

  /** Tasks scheduled and neither run nor cancelled. */
  synchronized long pending() {
    return tasks.stream().filter(t -> !t.cancelled()[0]).count();
  }
}
