package io.relaypinner.libp2p.http;

/**
 * A PeerID authentication exchange failed: a malformed or oversized header, a bad signature, or a
 * server that did not follow the protocol. The other side's fault (or a tampered connection): the
 * message never contains key material.
 */
public final class PeerIdAuthException extends Exception {
  private static final long serialVersionUID = 1L;

  public PeerIdAuthException(final String message) {
    super(message);
  }
}
