package io.relaypinner.ipfs.bitswap;

/**
 * A fetch refused because the pool of bytes it draws from ({@link NetworkPinner.ByteMeter}: a
 * node-wide total of fetches in flight) had no room: the node's state, not the content's; the
 * caller may retry later. No stack trace (it is an answer, not a bug).
 */
public final class FetchRefusedException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public FetchRefusedException(final String message) {
    super(message, null, false, false);
  }
}
