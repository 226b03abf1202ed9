package io.relaypinner.ipfs.dagcbor;

import java.math.BigInteger;
import java.util.Arrays;
import java.util.Map;

/**
 * Canonical DAG-CBOR encoder ({@code ipld/ipld} {@code specs/codecs/dag-cbor/spec.md}): shortest
 * integer and length forms, definite lengths only, map keys in canonical order (kept by
 * {@link DagCborValue.Map}), floats always as 64-bit ({@code fb}), links as tag 42
 * ({@code d8 2a}) over {@code 0x00 ‖ binary CID}. The encoding of a decoded block is the block.
 *
 * <p>Values nested deeper than {@link DagCborLimits#MAX_DEPTH_CEILING} are refused, since
 * encoding recurses. Stateless and thread-safe.
 */
public final class DagCborEncoder {
  private static final int MAJOR_UINT = 0;
  private static final int MAJOR_NINT = 1;
  private static final int MAJOR_BYTES = 2;
  private static final int MAJOR_TEXT = 3;
  private static final int MAJOR_ARRAY = 4;
  private static final int MAJOR_MAP = 5;
  private static final int MAJOR_TAG = 6;
  private static final byte FALSE = (byte) 0xf4;
  private static final byte TRUE = (byte) 0xf5;
  private static final byte NULL = (byte) 0xf6;
  private static final byte FLOAT64 = (byte) 0xfb;

  private DagCborEncoder() {}

  /**
   * Encodes {@code value}.
   *
   * @throws DagCborException when a string holds an unpaired surrogate or nesting is too deep
   */
  public static byte[] encode(final DagCborValue value) {
    final Writer w = new Writer();
    w.write(value, 0);
    return w.toByteArray();
  }

  /** The header of a map of {@code size} entries. */
  static byte[] mapHeader(final int size) {
    final Writer w = new Writer();
    w.header(MAJOR_MAP, size);
    return w.toByteArray();
  }

  /** A growable output buffer. */
  private static final class Writer {
    private byte[] buf = new byte[256];
    private int len;

    void write(final DagCborValue value, final int depth) {
      if (value instanceof DagCborValue.Map map) {
        checkDepth(depth);
        final Map<String, DagCborValue> entries = map.entries();
        header(MAJOR_MAP, entries.size());
        for (final Map.Entry<String, DagCborValue> e : entries.entrySet()) {
          text(e.getKey());
          write(e.getValue(), depth + 1);
        }
      } else if (value instanceof DagCborValue.List list) {
        checkDepth(depth);
        header(MAJOR_ARRAY, list.size());
        for (final DagCborValue item : list.items()) {
          write(item, depth + 1);
        }
      } else if (value instanceof DagCborValue.Text text) {
        text(text.value());
      } else if (value instanceof DagCborValue.Int i) {
        final long v = i.value();
        if (v >= 0) {
          header(MAJOR_UINT, v);
        } else {
          header(MAJOR_NINT, -1 - v);
        }
      } else if (value instanceof DagCborValue.Link link) {
        final byte[] cid = link.cid().bytes();
        header(MAJOR_TAG, 42);
        header(MAJOR_BYTES, cid.length + 1L);
        ensure(cid.length + 1);
        buf[len++] = 0;
        System.arraycopy(cid, 0, buf, len, cid.length);
        len += cid.length;
      } else if (value instanceof DagCborValue.Bytes bytes) {
        final byte[] data = bytes.array();
        header(MAJOR_BYTES, data.length);
        ensure(data.length);
        System.arraycopy(data, 0, buf, len, data.length);
        len += data.length;
      } else if (value instanceof DagCborValue.Bool b) {
        ensure(1);
        buf[len++] = b.value() ? TRUE : FALSE;
      } else if (value instanceof DagCborValue.Null) {
        ensure(1);
        buf[len++] = NULL;
      } else if (value instanceof DagCborValue.Float f) {
        ensure(9);
        buf[len++] = FLOAT64;
        putLong(Double.doubleToRawLongBits(f.value()), 8);
      } else if (value instanceof DagCborValue.BigInt big) {
        final BigInteger v = big.value();
        // BigInt holds only 2^63..2^64-1 or -2^64..-2^63-1: an 8-byte argument whose low 64 bits
        // are what longValue() keeps.
        if (v.signum() > 0) {
          header(MAJOR_UINT, v.longValue());
        } else {
          header(MAJOR_NINT, v.not().longValue());
        }
      } else {
        throw new DagCborException("unknown value " + value);
      }
    }

    private static void checkDepth(final int depth) {
      if (depth >= DagCborLimits.MAX_DEPTH_CEILING) {
        throw new DagCborException(
            "nesting deeper than " + DagCborLimits.MAX_DEPTH_CEILING + " cannot be encoded");
      }
    }

    private void text(final String s) {
      final int n = Utf8.encodedLength(s);
      header(MAJOR_TEXT, n);
      ensure(n);
      len = Utf8.write(s, buf, len);
    }

    /** An item header with {@code value} read as unsigned 64-bit, in its shortest form. */
    private void header(final int major, final long value) {
      ensure(9);
      final int m = major << 5;
      if (Long.compareUnsigned(value, 24) < 0) {
        buf[len++] = (byte) (m | (int) value);
      } else if (Long.compareUnsigned(value, 0x100) < 0) {
        buf[len++] = (byte) (m | 24);
        putLong(value, 1);
      } else if (Long.compareUnsigned(value, 0x10000) < 0) {
        buf[len++] = (byte) (m | 25);
        putLong(value, 2);
      } else if (Long.compareUnsigned(value, 0x100000000L) < 0) {
        buf[len++] = (byte) (m | 26);
        putLong(value, 4);
      } else {
        buf[len++] = (byte) (m | 27);
        putLong(value, 8);
      }
    }

    private void putLong(final long value, final int n) {
      for (int i = n - 1; i >= 0; i--) {
        buf[len++] = (byte) (value >>> (8 * i));
      }
    }

    private void ensure(final int more) {
      if (buf.length - len < more) {
        final long wanted = Math.max((long) buf.length * 2, (long) len + more);
        if (wanted > Integer.MAX_VALUE - 8) {
          throw new DagCborException("encoding exceeds the largest array");
        }
        buf = Arrays.copyOf(buf, (int) wanted);
      }
    }

    byte[] toByteArray() {
      return Arrays.copyOf(buf, len);
    }
  }
}
