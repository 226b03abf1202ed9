package io.relaypinner.multiformats;

/**
 * The one exception of this package: the input (bytes or text) is not a valid multiformat value,
 * or it exceeds one of the documented limits. The message says what was wrong and where.
 *
 * <p>It extends {@link IllegalArgumentException} so that callers who do not care about the
 * distinction can treat it as a bad argument; network code should catch it and blame the peer.
 */
public class MultiformatException extends IllegalArgumentException {
  public MultiformatException(final String message) {
    super(message);
  }

  public MultiformatException(final String message, final Throwable cause) {
    super(message, cause);
  }
}
