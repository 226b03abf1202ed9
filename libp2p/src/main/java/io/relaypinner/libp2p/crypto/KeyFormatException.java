package io.relaypinner.libp2p.crypto;

/**
 * Key bytes that cannot be decoded: wrong length, a point not on the curve, an unsupported key
 * type, a malformed protobuf. Who is to blame depends on where the bytes came from, so callers
 * translate it (a remote's key is the remote's fault; a configured key is a configuration error).
 */
public final class KeyFormatException extends IllegalArgumentException {
  private static final long serialVersionUID = 1L;

  public KeyFormatException(final String message) {
    super(message);
  }

  public KeyFormatException(final String message, final Throwable cause) {
    super(message, cause);
  }
}
