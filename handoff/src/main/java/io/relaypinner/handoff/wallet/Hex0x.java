package io.relaypinner.handoff.wallet;

import java.util.HexFormat;

/** Hex with an optional {@code 0x} prefix, as Ethereum tools write keys and signatures. */
final class Hex0x {
  private static final HexFormat HEX = HexFormat.of();

  private Hex0x() {}

  /** Decodes exactly {@code length} bytes from hex text, with or without {@code 0x}. */
  static byte[] decode(final String text, final int length, final String what) {
    if (text == null) {
      throw new WalletFormatException(what + " is missing");
    }
    final String digits = text.startsWith("0x") || text.startsWith("0X") ? text.substring(2) : text;
    if (digits.length() != length * 2) {
      throw new WalletFormatException(
          what + " must be " + length + " bytes (" + length * 2 + " hex digits), got "
              + digits.length() + " digits");
    }
    for (int i = 0; i < digits.length(); i++) {
      if (Character.digit(digits.charAt(i), 16) < 0) {
        throw new WalletFormatException(what + " is not hex");
      }
    }
    return HEX.parseHex(digits);
  }

  /** {@code 0x} and lowercase hex. */
  static String encode(final byte[] bytes) {
    return "0x" + HEX.formatHex(bytes);
  }
}
