package io.relaypinner.ipfs.pin;

/**
 * A DAG walk reached its block limit. The DAG is not known to be complete, so it is not pinned,
 * and a GC mark that hits the limit deletes nothing.
 */
public final class DagLimitExceededException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public DagLimitExceededException(final String message) {
    super(message);
  }
}
