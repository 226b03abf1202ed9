package io.relaypinner.ipfs.car;

/**
 * Bytes that are not a CAR v1 the reader accepts: a malformed header or section, a section over
 * a limit, a block that does not hash to its CID, or a stream cut short. The sender's fault.
 */
public final class CarFormatException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public CarFormatException(final String message) {
    super(message);
  }

  public CarFormatException(final String message, final Throwable cause) {
    super(message, cause);
  }
}
