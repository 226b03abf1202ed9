package io.relaypinner.common.budget;

/**
 * Told of every refused reservation: the scope whose limit refused it (the nearest one on the
 * way to the root that was full) and the resource. Called on the reserving thread, so it must
 * be cheap (a counter increment).
 */
@FunctionalInterface
public interface LimitListener {
  /** Counts nothing. */
  LimitListener NONE = (scope, resource) -> { };

  void limitHit(Scope scope, Resource resource);
}
