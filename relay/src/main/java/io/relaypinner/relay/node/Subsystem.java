package io.relaypinner.relay.node;

/**
 * A part of the node that owns threads or resources. The node stops its subsystems in the reverse
 * order of their start, then closes them in that order again: {@link #stop()} ends the work that
 * calls into other subsystems (listeners, protocols, services), so that when {@link #close()}
 * releases what it owns (executors, stores) nothing else still submits to them.
 */
public interface Subsystem extends AutoCloseable {
  /** Ends the work that uses other subsystems; bounded, idempotent. None by default. */
  default void stop() {}

  /** {@link #stop()} if not yet, then releases what this subsystem owns; bounded, idempotent. */
  @Override
  void close();
}
