package io.relaypinner.libp2p.core;

/** A bug or broken invariant on our side; logged at ERROR. */
public class InternalErrorException extends Libp2pException {
  private static final long serialVersionUID = 1L;

  public InternalErrorException(final String message) {
    super(message);
  }

  public InternalErrorException(final String message, final Throwable cause) {
    super(message, cause);
  }
}
