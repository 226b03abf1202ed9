package io.relaypinner.multiformats;

import java.util.Arrays;

/**
 * Big-number radix conversion between bytes and text (the "base-x" scheme used by base58btc and
 * base36 in {@code multiformats/multibase}): the bytes after the leading zero bytes are read as one
 * big-endian number and written in the alphabet's radix; every leading zero byte becomes one
 * leading zero digit. This is a bijection between byte arrays and strings over the alphabet.
 *
 * <p>The conversion is inherently quadratic, so inputs are bounded ({@link #MAX_TEXT_LENGTH},
 * {@link #MAX_BYTES}) and the arithmetic works on 32-bit limbs and groups of {@link #GROUP}
 * digits at a time, which keeps the worst case near 0.1 s instead of seconds.
 */
final class RadixCodec {
  /** Longest text accepted by {@link #decode}: 64 KiB characters. */
  static final int MAX_TEXT_LENGTH = 64 * 1024;

  /** Longest input accepted by {@link #encode}: 40 KiB, so that every encoding fits in 64 KiB. */
  static final int MAX_BYTES = 40 * 1024;

  /** Digits handled per limb operation: radix^5 stays below 2^31 for radix up to 73. */
  private static final int GROUP = 5;

  static final RadixCodec BASE58BTC =
      new RadixCodec(
          "base58btc", "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz", false);

  static final RadixCodec BASE36 =
      new RadixCodec("base36", "0123456789abcdefghijklmnopqrstuvwxyz", true);

  static final RadixCodec BASE36_UPPER =
      new RadixCodec("base36upper", "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ", true);

  private final String name;
  private final char[] alphabet;
  private final byte[] digits;
  private final int radix;
  private final long groupRadix;

  private RadixCodec(final String name, final String alphabet, final boolean caseInsensitive) {
    this.name = name;
    this.alphabet = alphabet.toCharArray();
    this.radix = alphabet.length();
    this.digits = new byte[128];
    Arrays.fill(digits, (byte) -1);
    for (int i = 0; i < radix; i++) {
      final char c = alphabet.charAt(i);
      digits[c] = (byte) i;
      if (caseInsensitive) {
        digits[Character.toLowerCase(c)] = (byte) i;
        digits[Character.toUpperCase(c)] = (byte) i;
      }
    }
    long g = 1;
    for (int i = 0; i < GROUP; i++) {
      g *= radix;
    }
    this.groupRadix = g;
  }

  String name() {
    return name;
  }

  String encode(final byte[] data) {
    if (data.length > MAX_BYTES) {
      throw new MultiformatException(
          name + " input of " + data.length + " bytes exceeds the limit of " + MAX_BYTES);
    }
    int zeros = 0;
    while (zeros < data.length && data[zeros] == 0) {
      zeros++;
    }
    final int len = data.length - zeros;
    final int limbCount = (len + 3) / 4;
    final int[] limbs = new int[limbCount];
    int pos = zeros;
    for (int i = 0; i < limbCount; i++) {
      final int take = i == 0 ? len - (limbCount - 1) * 4 : 4;
      int limb = 0;
      for (int k = 0; k < take; k++) {
        limb = (limb << 8) | (data[pos++] & 0xFF);
      }
      limbs[i] = limb;
    }
    // log2(radix) >= 5 for both alphabets, so 8/5 digits per byte is an upper bound.
    final char[] out = new char[len * 8 / 5 + 2 * GROUP];
    int outPos = out.length;
    int start = 0;
    while (start < limbCount) {
      long rem = 0;
      for (int i = start; i < limbCount; i++) {
        final long cur = (rem << 32) | (limbs[i] & 0xFFFFFFFFL);
        limbs[i] = (int) (cur / groupRadix);
        rem = cur % groupRadix;
      }
      while (start < limbCount && limbs[start] == 0) {
        start++;
      }
      for (int k = 0; k < GROUP; k++) {
        out[--outPos] = alphabet[(int) (rem % radix)];
        rem /= radix;
      }
    }
    while (outPos < out.length && out[outPos] == alphabet[0]) {
      outPos++;
    }
    final StringBuilder sb = new StringBuilder(zeros + out.length - outPos);
    for (int i = 0; i < zeros; i++) {
      sb.append(alphabet[0]);
    }
    return sb.append(out, outPos, out.length - outPos).toString();
  }

  /**
   * Decodes {@code text} from index {@code start}; positions in error messages are indexes into
   * {@code text}, so a multibase prefix is counted.
   */
  byte[] decode(final CharSequence text, final int start) {
    final int n = text.length() - start;
    if (n > MAX_TEXT_LENGTH) {
      throw new MultiformatException(
          name + " text of " + n + " characters exceeds the limit of " + MAX_TEXT_LENGTH);
    }
    int i = start;
    while (i < text.length() && text.charAt(i) == alphabet[0]) {
      i++;
    }
    final int zeros = i - start;
    // Each digit adds at most 6 bits (radix <= 64).
    final int[] limbs = new int[(text.length() - i) * 6 / 32 + 2];
    int used = 0;
    while (i < text.length()) {
      final int g = Math.min(GROUP, text.length() - i);
      long group = 0;
      long mul = 1;
      for (int k = 0; k < g; k++) {
        group = group * radix + digit(text, i + k);
        mul *= radix;
      }
      long carry = group;
      for (int j = 0; j < used; j++) {
        final long cur = (limbs[j] & 0xFFFFFFFFL) * mul + carry;
        limbs[j] = (int) cur;
        carry = cur >>> 32;
      }
      if (carry != 0) {
        limbs[used++] = (int) carry;
      }
      i += g;
    }
    int topBytes = 0;
    if (used > 0) {
      final int top = limbs[used - 1];
      topBytes = 4 - Integer.numberOfLeadingZeros(top) / 8;
    }
    final int valueBytes = used == 0 ? 0 : (used - 1) * 4 + topBytes;
    final byte[] out = new byte[zeros + valueBytes];
    int pos = out.length;
    for (int j = 0; j < used; j++) {
      final int limb = limbs[j];
      final int take = j == used - 1 ? topBytes : 4;
      for (int k = 0; k < take; k++) {
        out[--pos] = (byte) (limb >>> (8 * k));
      }
    }
    return out;
  }

  private int digit(final CharSequence text, final int index) {
    final char c = text.charAt(index);
    final int d = c < 128 ? digits[c] : -1;
    if (d < 0) {
      throw new MultiformatException(
          "invalid " + name + " character " + Chars.quote(c) + " at position " + index);
    }
    return d;
  }
}
