package io.relaypinner.libp2p.core;

/**
 * Root of the libp2p exceptions. Subclasses say who is to blame: {@link BadPeerException} (the
 * remote: close the stream or connection, count it, log at DEBUG, no stack trace) versus
 * {@link InternalErrorException} (our bug: log at ERROR).
 */
public class Libp2pException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public Libp2pException(final String message) {
    super(message);
  }

  public Libp2pException(final String message, final Throwable cause) {
    super(message, cause);
  }
}
