package io.relaypinner.common.budget;

import java.util.concurrent.atomic.AtomicLong;

/**
 * An amount of one resource held from a {@link Scope}: given back once, by {@link #close()},
 * however many times it is called and from whichever thread. It can {@link #grow} while held
 * (a streamed body, a walk) and give part back with {@link #shrink}.
 */
public final class Reservation implements AutoCloseable {
  private final Scope scope;
  private final Resource resource;
  private final AtomicLong held;

  Reservation(final Scope scope, final Resource resource, final long amount) {
    this.scope = scope;
    this.resource = resource;
    this.held = new AtomicLong(amount);
  }

  public Scope scope() {
    return scope;
  }

  public Resource resource() {
    return resource;
  }

  /** What this reservation holds now (0 once closed). */
  public long held() {
    return Math.max(0, held.get());
  }

  /**
   * Takes {@code amount} more: false (nothing taken, the refusing scope counted) when a scope
   * on the way up is full, or when this reservation is closed.
   */
  public boolean grow(final long amount) {
    if (held.get() < 0) {
      return false;
    }
    if (!scope.tryReserve(resource, amount)) {
      return false;
    }
    if (held.getAndAdd(amount) < 0) {
      // Closed meanwhile: give it straight back.
      held.addAndGet(-amount);
      scope.release(resource, amount);
      return false;
    }
    return true;
  }

  /** Gives back {@code amount} of what is held (at most what is held). */
  public void shrink(final long amount) {
    while (true) {
      final long now = held.get();
      if (now <= 0) {
        return;
      }
      final long give = Math.min(now, amount);
      if (held.compareAndSet(now, now - give)) {
        scope.release(resource, give);
        return;
      }
    }
  }

  @Override
  public void close() {
    final long was = held.getAndSet(Long.MIN_VALUE / 2);
    if (was > 0) {
      scope.release(resource, was);
    }
  }
}
