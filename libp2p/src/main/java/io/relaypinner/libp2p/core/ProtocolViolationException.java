package io.relaypinner.libp2p.core;

/**
 * The remote broke a protocol's wire rules: a malformed or oversized frame, an unexpected message,
 * a limit exceeded. Closes the stream or connection it arrived on, never the node.
 */
public class ProtocolViolationException extends BadPeerException {
  private static final long serialVersionUID = 1L;

  public ProtocolViolationException(final String message) {
    super(message);
  }

  public ProtocolViolationException(final String message, final Throwable cause) {
    super(message, cause);
  }
}
