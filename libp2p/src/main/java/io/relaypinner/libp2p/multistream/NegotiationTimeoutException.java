package io.relaypinner.libp2p.multistream;

import io.relaypinner.libp2p.core.BadPeerException;

/**
 * A multistream-select 1.0 negotiation did not finish within {@link MultistreamConfig#timeout()}:
 * the remote stalled, so it is counted as the remote's fault.
 */
public class NegotiationTimeoutException extends BadPeerException {
  private static final long serialVersionUID = 1L;

  public NegotiationTimeoutException(final String message) {
    super(message);
  }
}
