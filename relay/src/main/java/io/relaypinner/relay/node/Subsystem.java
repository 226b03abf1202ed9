package io.relaypinner.relay.node;

/**
 * A part of the node that owns threads or resources. The node stops its subsystems in the reverse
 * order of their start, then closes them in that order again: {@link #stop()} ends the work that
 * calls into other subsystems (listeners, protocols, services), so that when {@link #close()}
 * releases what it owns (executors, stores) nothing else still submits to them.
 *
 * <p>Both are idempotent and bounded here, once for every subsystem: a subsystem says what it
 * does in {@link #onStop()} and {@link #onClose()}, each called at most once, under the
 * subsystem's monitor.
 */
public abstract class Subsystem implements AutoCloseable {
  private volatile boolean stopped;
  private volatile boolean closed;

  /** Ends the work that uses other subsystems ({@link #onStop()}), once. */
  public final synchronized void stop() {
    if (stopped) {
      return;
    }
    stopped = true;
    onStop();
  }

  /** {@link #stop()} if not yet, then releases what this subsystem owns ({@link #onClose()}), once. */
  @Override
  public final synchronized void close() {
    if (closed) {
      return;
    }
    stop();
    closed = true;
    onClose();
  }

  /** What {@link #stop()} ends; bounded. None by default. */
  protected void onStop() {}

  /** What {@link #close()} releases after {@link #onStop()}; bounded. None by default. */
  protected void onClose() {}

  /** Whether {@link #stop()} was called. */
  protected final boolean isStopped() {
    return stopped;
  }

  /** Whether {@link #close()} was called (true while {@link #onClose()} runs). */
  protected final boolean isClosed() {
    return closed;
  }
}
