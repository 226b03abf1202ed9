package io.relaypinner.relay.sync;

import io.relaypinner.relay.testing.MutableClock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.OptionalLong;

/** A {@link SyncEngine.Timer} driven by a {@link MutableClock}: tasks run in {@link #advance}. */
public final class ManualTimer implements SyncEngine.Timer {
  private record Task(long due, long order, Runnable task) {}

  private final MutableClock clock;
  private final List<Task> tasks = new ArrayList<>();
  private long order;

  public ManualTimer(final MutableClock clock) {
    this.clock = clock;
  }

  @Override
  public synchronized Runnable schedule(final Runnable task, final Duration delay) {
    final Task entry = new Task(clock.millis() + delay.toMillis(), order++, task);
    tasks.add(entry);
    return () -> {
      synchronized (this) {
        tasks.remove(entry);
      }
    };
  }

  /** When the earliest task is due (clock millis); empty when none is scheduled. */
  public synchronized OptionalLong nextDue() {
    return tasks.stream().mapToLong(Task::due).min();
  }

  /** Moves the clock and runs every task that is due, in order, on the calling thread. */
  public void advance(final Duration duration) {
    clock.advance(duration);
    while (true) {
      final Task next;
      synchronized (this) {
        next = tasks.stream().filter(t -> t.due() <= clock.millis())
            .min(Comparator.comparingLong(Task::due).thenComparingLong(Task::order))
            .orElse(null);
        if (next == null) {
          return;
        }
        tasks.remove(next);
      }
      next.task().run();
    }
  }
}
