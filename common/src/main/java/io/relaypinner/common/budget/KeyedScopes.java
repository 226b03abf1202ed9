package io.relaypinner.common.budget;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Child scopes of one parent, one per key (an IP prefix, a peer, a client), each with the same
 * limits, made when first {@link #open opened} and dropped when the last holder closes it. The
 * number of keys held at once is itself bounded ({@code maxKeys}): a key beyond it is refused
 * and counted as the parent's {@link Resource#WORK} limit, so a flood of distinct keys cannot
 * grow the map.
 */
public final class KeyedScopes {
  private final Scope parent;
  private final String kind;
  private final Limits limits;
  private final int maxKeys;
  private final LimitListener listener;
  private final ConcurrentHashMap<String, Keyed> scopes = new ConcurrentHashMap<>();

  /**
   * @param kind the children's kind in metrics ("ip", "peer", "client")
   * @param listener told when {@code maxKeys} refuses a key
   */
  public KeyedScopes(final Scope parent, final String kind, final Limits limits,
      final int maxKeys, final LimitListener listener) {
    this.parent = parent;
    this.kind = kind;
    this.limits = limits;
    this.maxKeys = maxKeys;
    this.listener = listener;
  }

  public String kind() {
    return kind;
  }

  public Limits limits() {
    return limits;
  }

  /** Keys held now. */
  public int size() {
    return scopes.size();
  }

  /** The scope of {@code key} if somebody holds it now, else null. For metrics and tests. */
  public Scope peek(final String key) {
    return scopes.get(key);
  }

  /**
   * The scope of {@code key}, held until the returned handle is closed (reservations made
   * through it must be released before). Null when {@code maxKeys} keys are held already.
   */
  public Handle open(final String key) {
    final Keyed[] made = new Keyed[1];
    scopes.compute(key, (k, existing) -> {
      if (existing != null) {
        existing.holders.incrementAndGet();
        made[0] = existing;
        return existing;
      }
      if (scopes.size() >= maxKeys) {
        return null;
      }
      final Keyed created = new Keyed(parent, kind, k, limits);
      created.holders.incrementAndGet();
      made[0] = created;
      return created;
    });
    if (made[0] == null) {
      listener.limitHit(parent, Resource.WORK);
      return null;
    }
    return new Handle(made[0]);
  }

  private void close(final Keyed scope) {
    scopes.computeIfPresent(scope.name(), (k, existing) ->
        existing == scope && existing.holders.decrementAndGet() == 0 ? null : existing);
  }

  /** A held key: its scope, until {@link #close()}. */
  public final class Handle implements AutoCloseable {
    private final Keyed scope;
    private boolean closed;

    private Handle(final Keyed scope) {
      this.scope = scope;
    }

    public Scope scope() {
      return scope;
    }

    @Override
    public synchronized void close() {
      if (!closed) {
        closed = true;
        KeyedScopes.this.close(scope);
      }
    }
  }

  private static final class Keyed extends Scope {
    final AtomicInteger holders = new AtomicInteger();

    Keyed(final Scope parent, final String kind, final String name, final Limits limits) {
      super(kind, name, parent, limits, parent.listener());
    }
  }
}
