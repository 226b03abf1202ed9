package io.relaypinner.common.budget;

import java.util.concurrent.atomic.AtomicLongArray;

/**
 * One node of the budget tree: the system at the root, then surfaces (a transport, HTTP, the
 * gateway), then keyed scopes (an IP address or prefix, a peer, a client), then whatever a
 * surface opens per route or protocol. A reservation is taken from a scope and every ancestor
 * at once, or from none of them: the first full scope on the way up refuses it, tells the
 * {@link LimitListener} which scope and resource it was, and nothing stays reserved.
 *
 * <p>Lock-free: each level is a compare-and-set that never takes a scope past its limit, undone
 * at the levels below when a level above refuses. So {@link #used} never reads above a limit
 * except through {@link #force} (before, a refused reservation added, then took back, its
 * amount: a sampled gauge saw the scope over its limit for a moment, and a concurrent
 * reservation that fitted could be refused).
 */
public class Scope {
  private final String kind;
  private final String name;
  private final Scope parent;
  private final Limits limits;
  private final LimitListener listener;
  private final AtomicLongArray used = new AtomicLongArray(Resource.values().length);

  /**
   * @param kind what the scope is, for metrics (a small fixed set: "system", "ip", "gateway"):
   *     never a value a peer chooses
   * @param name which one it is, for logs (an address, a peer); may be a peer's value
   */
  Scope(final String kind, final String name, final Scope parent, final Limits limits,
      final LimitListener listener) {
    this.kind = kind;
    this.name = name;
    this.parent = parent;
    this.limits = limits;
    this.listener = listener;
  }

  /** A root scope, with no parent. */
  public static Scope root(final String kind, final Limits limits, final LimitListener listener) {
    return new Scope(kind, kind, null, limits, listener);
  }

  /** A child scope of this one: its reservations are also taken from this one. */
  public Scope child(final String kind, final String name, final Limits limits) {
    return new Scope(kind, name, this, limits, listener);
  }

  public String kind() {
    return kind;
  }

  public String name() {
    return name;
  }

  public Scope parent() {
    return parent;
  }

  LimitListener listener() {
    return listener;
  }

  public Limits limits() {
    return limits;
  }

  /** How much of {@code resource} this scope holds now (its own and its children's). */
  public long used(final Resource resource) {
    return used.get(resource.ordinal());
  }

  /** How much more of {@code resource} this scope alone would grant now (ignoring parents). */
  public long available(final Resource resource) {
    final long max = limits.max(resource);
    return max == Limits.UNLIMITED ? Limits.UNLIMITED : Math.max(0, max - used(resource));
  }

  /**
   * Takes {@code amount} of {@code resource} from this scope and all its ancestors, or nothing:
   * false (and the refusing scope counted) when one of them would go beyond its limit.
   */
  public boolean tryReserve(final Resource resource, final long amount) {
    if (amount < 0) {
      throw new IllegalArgumentException("negative reservation: " + amount);
    }
    if (amount == 0) {
      return true;
    }
    final int i = resource.ordinal();
    for (Scope s = this; s != null; s = s.parent) {
      if (!s.tryAdd(i, s.limits.max(resource), amount)) {
        for (Scope undo = this; undo != s; undo = undo.parent) {
          undo.used.addAndGet(i, -amount);
        }
        listener.limitHit(s, resource);
        return false;
      }
    }
    return true;
  }

  /** Adds {@code amount} to this scope's use of resource {@code i} unless it would pass max. */
  private boolean tryAdd(final int i, final long max, final long amount) {
    if (max == Limits.UNLIMITED) {
      used.addAndGet(i, amount);
      return true;
    }
    while (true) {
      final long now = used.get(i);
      if (now + amount > max) {
        return false;
      }
      if (used.compareAndSet(i, now, now + amount)) {
        return true;
      }
    }
  }

  /**
   * {@link #tryReserve} as a handle that gives the amount back once when closed, or null when
   * refused.
   */
  public Reservation reserve(final Resource resource, final long amount) {
    return tryReserve(resource, amount) ? new Reservation(this, resource, amount) : null;
  }

  /**
   * Counts {@code amount} of {@code resource} that is held already (a block that arrived larger
   * than the room reserved for it) in this scope and every ancestor, whatever their limits: the
   * scopes may then be over their limits until it is released, and refuse reservations meanwhile.
   */
  public void force(final Resource resource, final long amount) {
    if (amount <= 0) {
      return;
    }
    final int i = resource.ordinal();
    for (Scope s = this; s != null; s = s.parent) {
      s.used.addAndGet(i, amount);
    }
  }

  /** Gives back {@code amount} of {@code resource} reserved earlier from this scope. */
  public void release(final Resource resource, final long amount) {
    if (amount <= 0) {
      return;
    }
    final int i = resource.ordinal();
    for (Scope s = this; s != null; s = s.parent) {
      final long now = s.used.addAndGet(i, -amount);
      if (now < 0) {
        s.used.addAndGet(i, -now);
        throw new IllegalStateException(s + " released more " + resource.label()
            + " than it held");
      }
    }
  }

  @Override
  public String toString() {
    return kind.equals(name) ? kind : kind + " " + name;
  }
}
