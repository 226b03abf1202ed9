package io.relaypinner.libp2p.core;

/** The remote peer misbehaved (bad data, bad signature, broken limits): its fault, not ours. */
public class BadPeerException extends Libp2pException {
  private static final long serialVersionUID = 1L;

  public BadPeerException(final String message) {
    super(message);
  }

  public BadPeerException(final String message, final Throwable cause) {
    super(message, cause);
  }
}
