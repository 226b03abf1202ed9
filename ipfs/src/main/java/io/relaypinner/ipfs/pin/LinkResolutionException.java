package io.relaypinner.ipfs.pin;

/**
 * A block whose links cannot be read: its codec has no {@link LinkResolver}, or its bytes do not
 * decode. Walks stop; GC deletes nothing.
 */
public final class LinkResolutionException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public LinkResolutionException(final String message) {
    super(message);
  }

  public LinkResolutionException(final String message, final Throwable cause) {
    super(message, cause);
  }
}
