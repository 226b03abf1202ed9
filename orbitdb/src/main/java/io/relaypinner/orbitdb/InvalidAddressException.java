package io.relaypinner.orbitdb;

/** A string that is not a valid {@link OrbitDbAddress} (from configuration, an API or a peer). */
public final class InvalidAddressException extends IllegalArgumentException {
  private static final long serialVersionUID = 1L;

  public InvalidAddressException(final String message) {
    super(message);
  }

  public InvalidAddressException(final String message, final Throwable cause) {
    super(message, cause);
  }
}
