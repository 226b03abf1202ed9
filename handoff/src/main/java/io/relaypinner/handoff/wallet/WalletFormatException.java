package io.relaypinner.handoff.wallet;

/**
 * A key, address or signature that is not well formed (wrong length, not hex, out of range, bad
 * EIP-55 checksum, high-S). The fault lies with whoever supplied the text, never with us.
 */
public final class WalletFormatException extends IllegalArgumentException {
  private static final long serialVersionUID = 1L;

  public WalletFormatException(final String message) {
    super(message);
  }

  public WalletFormatException(final String message, final Throwable cause) {
    super(message, cause);
  }
}
