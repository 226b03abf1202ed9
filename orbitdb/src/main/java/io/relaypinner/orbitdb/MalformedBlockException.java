package io.relaypinner.orbitdb;

import io.relaypinner.libp2p.core.ProtocolViolationException;

/**
 * An OrbitDB block (manifest, access-controller manifest, identity or entry) that does not have
 * the shape OrbitDB writes: the peer that served it is to blame.
 */
public final class MalformedBlockException extends ProtocolViolationException {
  private static final long serialVersionUID = 1L;

  public MalformedBlockException(final String message) {
    super(message);
  }

  public MalformedBlockException(final String message, final Throwable cause) {
    super(message, cause);
  }
}
