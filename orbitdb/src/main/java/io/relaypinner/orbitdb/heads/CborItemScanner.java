package io.relaypinner.orbitdb.heads;

import io.relaypinner.libp2p.core.ProtocolViolationException;

/**
 * Finds where the first CBOR data item (RFC 8949) of a buffer ends, without decoding it: how the
 * heads exchange, which has no framing, splits back-to-back entry blocks. Only definite lengths
 * are accepted (DAG-CBOR has no others); the item itself is validated later by the entry
 * decoder.
 */
final class CborItemScanner {
  /** Deepest nesting accepted (DAG-CBOR's decoder allows 64). */
  static final int MAX_DEPTH = 64;

  private CborItemScanner() {}

  /**
   * The length of the item starting at {@code offset}, or -1 when the bytes up to {@code limit}
   * end inside it.
   *
   * @throws ProtocolViolationException when the bytes cannot start a DAG-CBOR item
   */
  static long itemLength(final byte[] buf, final int offset, final int limit) {
    final long end = skip(buf, offset, limit, 0);
    return end < 0 ? -1 : end - offset;
  }

  /** The offset after the item at {@code pos}, or -1 when incomplete. */
  private static long skip(final byte[] buf, final int pos, final int limit, final int depth) {
    if (depth > MAX_DEPTH) {
      throw new ProtocolViolationException("CBOR nesting deeper than " + MAX_DEPTH);
    }
    if (pos >= limit) {
      return -1;
    }
    final int initial = buf[pos] & 0xff;
    final int major = initial >>> 5;
    final int info = initial & 0x1f;
    int p = pos + 1;
    final long argument;
    if (info < 24) {
      argument = info;
    } else if (info <= 27) {
      final int n = 1 << (info - 24);
      if (p + n > limit) {
        return -1;
      }
      long v = 0;
      for (int i = 0; i < n; i++) {
        v = (v << 8) | (buf[p + i] & 0xff);
      }
      p += n;
      argument = v;
    } else {
      throw new ProtocolViolationException("CBOR additional info " + info
          + " (indefinite length or reserved) at offset " + pos);
    }
    switch (major) {
      case 0, 1, 7:
        return p;
      case 2, 3:
        if (argument < 0 || argument > Integer.MAX_VALUE) {
          throw new ProtocolViolationException("CBOR string length " + Long.toUnsignedString(
              argument) + " is too large");
        }
        return p + argument > limit ? -1 : p + argument;
      case 4, 5: {
        final long items = major == 5 ? argument * 2 : argument;
        if (argument < 0 || items > Integer.MAX_VALUE || items < 0) {
          throw new ProtocolViolationException("CBOR container of "
              + Long.toUnsignedString(argument) + " items is too large");
        }
        long at = p;
        for (long i = 0; i < items; i++) {
          // Every item takes at least one byte: a count beyond the buffer is simply incomplete.
          at = skip(buf, (int) at, limit, depth + 1);
          if (at < 0) {
            return -1;
          }
        }
        return at;
      }
      case 6:
        return skip(buf, p, limit, depth + 1);
      default:
        throw new IllegalStateException("unreachable major type " + major);
    }
  }
}
