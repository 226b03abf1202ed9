package io.relaypinner.multiformats;

import java.util.Arrays;

/**
 * The RFC 4648 bit-packing encodings without padding (base16, base32, base64, base64url), as used
 * by {@code multiformats/multibase}. Decoding is strict: no padding characters, no whitespace, no
 * impossible lengths and no non-zero bits after the last whole byte, so each byte array has
 * exactly one accepted text form per alphabet (up to letter case where the alphabet has none).
 * Linear time; the output is never larger than the input text.
 */
final class Rfc4648Codec {
  static final Rfc4648Codec BASE16 = new Rfc4648Codec("base16", "0123456789abcdef", 4, true);
  static final Rfc4648Codec BASE16_UPPER =
      new Rfc4648Codec("base16upper", "0123456789ABCDEF", 4, true);
  static final Rfc4648Codec BASE32 =
      new Rfc4648Codec("base32", "abcdefghijklmnopqrstuvwxyz234567", 5, true);
  static final Rfc4648Codec BASE32_UPPER =
      new Rfc4648Codec("base32upper", "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 5, true);
  static final Rfc4648Codec BASE64 = new Rfc4648Codec(
      "base64", "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/", 6, false);
  static final Rfc4648Codec BASE64URL = new Rfc4648Codec(
      "base64url", "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_", 6, false);

  private final String name;
  private final char[] alphabet;
  private final byte[] digits;
  private final int bitsPerChar;

  private Rfc4648Codec(
      final String name, final String alphabet, final int bitsPerChar,
      final boolean caseInsensitive) {
    this.name = name;
    this.alphabet = alphabet.toCharArray();
    this.bitsPerChar = bitsPerChar;
    this.digits = new byte[128];
    Arrays.fill(digits, (byte) -1);
    for (int i = 0; i < alphabet.length(); i++) {
      final char c = alphabet.charAt(i);
      digits[c] = (byte) i;
      if (caseInsensitive) {
        digits[Character.toLowerCase(c)] = (byte) i;
        digits[Character.toUpperCase(c)] = (byte) i;
      }
    }
  }

  String name() {
    return name;
  }

  String encode(final byte[] data) {
    final long chars = ((long) data.length * 8 + bitsPerChar - 1) / bitsPerChar;
    if (chars > Integer.MAX_VALUE - 16) {
      throw new MultiformatException(name + " input of " + data.length + " bytes is too large");
    }
    final StringBuilder sb = new StringBuilder((int) chars + 1);
    final int mask = (1 << bitsPerChar) - 1;
    int buffer = 0;
    int bits = 0;
    for (final byte b : data) {
      buffer = (buffer << 8) | (b & 0xFF);
      bits += 8;
      while (bits >= bitsPerChar) {
        bits -= bitsPerChar;
        sb.append(alphabet[(buffer >>> bits) & mask]);
      }
      buffer &= (1 << bits) - 1;
    }
    if (bits > 0) {
      sb.append(alphabet[(buffer << (bitsPerChar - bits)) & mask]);
    }
    return sb.toString();
  }

  /** Decodes {@code text} from {@code start}; error positions are indexes into {@code text}. */
  byte[] decode(final CharSequence text, final int start) {
    final int n = text.length() - start;
    final byte[] out = new byte[(int) ((long) n * bitsPerChar / 8)];
    int buffer = 0;
    int bits = 0;
    int o = 0;
    for (int i = start; i < text.length(); i++) {
      final char c = text.charAt(i);
      final int d = c < 128 ? digits[c] : -1;
      if (d < 0) {
        throw new MultiformatException(
            "invalid " + name + " character " + Chars.quote(c) + " at position " + i);
      }
      buffer = (buffer << bitsPerChar) | d;
      bits += bitsPerChar;
      if (bits >= 8) {
        bits -= 8;
        out[o++] = (byte) (buffer >>> bits);
        buffer &= (1 << bits) - 1;
      }
    }
    if (bits >= bitsPerChar) {
      throw new MultiformatException(
          name + " text of " + n + " characters has an impossible length");
    }
    if (buffer != 0) {
      throw new MultiformatException(
          name + " text has non-zero bits after the last byte at position "
              + (text.length() - 1));
    }
    return out;
  }
}
