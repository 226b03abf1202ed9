package io.relaypinner.ipfs.dagpb;

/**
 * A block that is not valid DAG-PB ({@code ipld/ipld} {@code specs/codecs/dag-pb/spec.md}), or a
 * node or data-model form that cannot be encoded. Messages name the byte offset where decoding
 * stopped. This is the remote's fault (bad data), never ours.
 */
public final class DagPbException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /** With a message. */
  public DagPbException(final String message) {
    super(message);
  }

  /** With a message and a cause. */
  public DagPbException(final String message, final Throwable cause) {
    super(message, cause);
  }
}
