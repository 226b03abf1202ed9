package io.relaypinner.libp2p.core;

/** Protocol negotiation ended without a common protocol (the remote answered {@code na}). */
public class NoSuchProtocolException extends Libp2pException {
  private static final long serialVersionUID = 1L;

  public NoSuchProtocolException(final String message) {
    super(message);
  }
}
