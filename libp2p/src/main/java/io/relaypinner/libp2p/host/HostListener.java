package io.relaypinner.libp2p.host;

import io.relaypinner.libp2p.protocol.identify.IdentifyResult;

/**
 * Observes a {@link Host}. Called on the connection's event loop: implementations must return
 * quickly and never block; an exception thrown here is logged and otherwise ignored.
 */
public interface HostListener {
  /** A connection finished its upgrade (Noise and yamux are up). */
  default void connectionOpened(final Connection connection) {}

  /** A connection closed, by either side. */
  default void connectionClosed(final Connection connection) {}

  /** Identify (or an identify push) told us about the peer of {@code connection}. */
  default void peerIdentified(final Connection connection, final IdentifyResult result) {}
}
