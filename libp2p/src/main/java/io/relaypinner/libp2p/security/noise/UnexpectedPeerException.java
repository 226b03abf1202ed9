package io.relaypinner.libp2p.security.noise;

import io.relaypinner.libp2p.core.BadPeerException;
import io.relaypinner.multiformats.PeerId;

/**
 * The remote authenticated as a different peer than the one we dialled ({@code /p2p/<id>} in the
 * address). The handshake fails before we send our own identity (libp2p/specs noise/README.md,
 * "Static Key Authentication"; js-libp2p-noise throws {@code UnexpectedPeerError} here).
 */
public final class UnexpectedPeerException extends BadPeerException {
  private static final long serialVersionUID = 1L;

  private final transient PeerId expected;
  private final transient PeerId actual;

  public UnexpectedPeerException(final PeerId expected, final PeerId actual) {
    super("expected peer " + expected + " but the remote authenticated as " + actual);
    this.expected = expected;
    this.actual = actual;
  }

  public PeerId expected() {
    return expected;
  }

  public PeerId actual() {
    return actual;
  }
}
