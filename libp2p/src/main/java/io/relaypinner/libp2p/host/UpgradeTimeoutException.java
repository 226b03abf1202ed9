package io.relaypinner.libp2p.host;

import io.relaypinner.libp2p.core.BadPeerException;

/** A connection's handshake (TLS, WebSocket, multistream, Noise, yamux) overran its deadline. */
final class UpgradeTimeoutException extends BadPeerException {
  private static final long serialVersionUID = 1L;

  UpgradeTimeoutException(final String message) {
    super(message);
  }
}
