package io.relaypinner.ipfs.dagcbor;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * Strict UTF-8 for DAG-CBOR strings: the JDK's decoder and {@code String.getBytes} replace bad
 * input silently, which would let two different byte strings decode to the same text.
 */
final class Utf8 {
  private Utf8() {}

  /**
   * The offset of the first byte of {@code src[off, off + len)} that breaks well-formed UTF-8
   * (Unicode Table 3-7: no overlong forms, no surrogates, nothing above U+10FFFF), or -1.
   */
  static int firstInvalid(final byte[] src, final int off, final int len) {
    final int end = off + len;
    int i = off;
    while (i < end) {
      final int b = src[i];
      if (b >= 0) {
        i++;
        continue;
      }
      final int lead = b & 0xff;
      final int need;
      int lo = 0x80;
      int hi = 0xbf;
      if (lead >= 0xc2 && lead <= 0xdf) {
        need = 1;
      } else if (lead >= 0xe0 && lead <= 0xef) {
        need = 2;
        if (lead == 0xe0) {
          lo = 0xa0;
        } else if (lead == 0xed) {
          hi = 0x9f;
        }
      } else if (lead >= 0xf0 && lead <= 0xf4) {
        need = 3;
        if (lead == 0xf0) {
          lo = 0x90;
        } else if (lead == 0xf4) {
          hi = 0x8f;
        }
      } else {
        return i;
      }
      if (end - i <= need) {
        return i;
      }
      final int second = src[i + 1] & 0xff;
      if (second < lo || second > hi) {
        return i;
      }
      for (int k = 2; k <= need; k++) {
        final int c = src[i + k] & 0xff;
        if (c < 0x80 || c > 0xbf) {
          return i;
        }
      }
      i += need + 1;
    }
    return -1;
  }

  /** Decodes bytes already checked by {@link #firstInvalid}; the JDK is exact on valid input. */
  static String decodeValid(final byte[] src, final int off, final int len) {
    return new String(src, off, len, StandardCharsets.UTF_8);
  }

  /**
   * The UTF-8 length of {@code s}.
   *
   * @throws DagCborException when {@code s} holds an unpaired surrogate, which has no UTF-8 form
   */
  static int encodedLength(final String s) {
    final int n = s.length();
    int len = n;
    for (int i = 0; i < n; i++) {
      final char c = s.charAt(i);
      if (c < 0x80) {
        continue;
      }
      if (c < 0x800) {
        len += 1;
      } else if (Character.isSurrogate(c)) {
        if (!Character.isHighSurrogate(c) || i + 1 >= n
            || !Character.isLowSurrogate(s.charAt(i + 1))) {
          throw new DagCborException("string holds an unpaired surrogate at index " + i);
        }
        // A pair is 2 chars and 4 bytes: 2 already counted.
        len += 2;
        i++;
      } else {
        len += 2;
      }
    }
    return len;
  }

  /**
   * Writes {@code s} as UTF-8 at {@code dst[off]}; {@code encodedLength(s)} bytes must fit.
   *
   * @return the offset after the last byte written
   */
  static int write(final String s, final byte[] dst, final int off) {
    int p = off;
    final int n = s.length();
    for (int i = 0; i < n; i++) {
      final char c = s.charAt(i);
      if (c < 0x80) {
        dst[p++] = (byte) c;
      } else if (c < 0x800) {
        dst[p++] = (byte) (0xc0 | (c >> 6));
        dst[p++] = (byte) (0x80 | (c & 0x3f));
      } else if (Character.isHighSurrogate(c) && i + 1 < n
          && Character.isLowSurrogate(s.charAt(i + 1))) {
        final int cp = Character.toCodePoint(c, s.charAt(++i));
        dst[p++] = (byte) (0xf0 | (cp >> 18));
        dst[p++] = (byte) (0x80 | ((cp >> 12) & 0x3f));
        dst[p++] = (byte) (0x80 | ((cp >> 6) & 0x3f));
        dst[p++] = (byte) (0x80 | (cp & 0x3f));
      } else if (Character.isSurrogate(c)) {
        throw new DagCborException("string holds an unpaired surrogate at index " + i);
      } else {
        dst[p++] = (byte) (0xe0 | (c >> 12));
        dst[p++] = (byte) (0x80 | ((c >> 6) & 0x3f));
        dst[p++] = (byte) (0x80 | (c & 0x3f));
      }
    }
    return p;
  }

  /** {@code s} as strict UTF-8. */
  static byte[] encode(final String s) {
    final byte[] out = new byte[encodedLength(s)];
    write(s, out, 0);
    return out;
  }

  /**
   * DAG-CBOR map key order: shorter encoded key first, then unsigned bytewise (the same as
   * bytewise order of the encoded keys, length prefix included).
   */
  static int compareKeys(final byte[] a, final byte[] b) {
    if (a.length != b.length) {
      return a.length < b.length ? -1 : 1;
    }
    return Arrays.compareUnsigned(a, b);
  }
}
