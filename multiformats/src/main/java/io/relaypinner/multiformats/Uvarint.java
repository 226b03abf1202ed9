package io.relaypinner.multiformats;

import java.nio.BufferOverflowException;
import java.nio.ByteBuffer;
import java.util.Objects;

/**
 * Unsigned varint as specified by {@code multiformats/unsigned-varint} ({@code README.md},
 * "Spec"): unsigned LEB128, 7 bits per byte, least significant group first, high bit set on every
 * byte but the last.
 *
 * <p>Limits, as the spec requires: at most {@value #MAX_BYTES} bytes, so values are 0 to
 * 2<sup>63</sup>-1 (a non-negative {@code long}); decoding rejects non-minimal encodings (a final
 * {@code 0x00} byte after a continuation byte, e.g. {@code 80 00}) and truncated input.
 *
 * <p>Because only minimal encodings are accepted, the number of bytes a successful read consumed is
 * always {@link #size(long) size(value)}. The allocation-free readers ({@link #read(byte[], int,
 * int)}, {@link #tryRead(byte[], int, int)} and the {@link ByteBuffer} variants) rely on that: they
 * return only the value, and the caller advances by {@code size(value)}. {@link #decode(byte[],
 * int)} returns both in a small record for code that is not on a hot path.
 */
public final class Uvarint {
  /** The spec's limit on the encoded length: 9 bytes carry 63 bits. */
  public static final int MAX_BYTES = 9;

  /** The largest value that fits in {@value #MAX_BYTES} bytes, 2<sup>63</sup>-1. */
  public static final long MAX_VALUE = Long.MAX_VALUE;

  /**
   * Returned by the {@code tryRead} methods when the input ends inside a varint that could still
   * become valid with more bytes (a length prefix split across network reads). Never a valid value.
   */
  public static final long INCOMPLETE = -1L;

  /** A decoded value and the number of bytes it took. */
  public record Decoded(long value, int length) {}

  private Uvarint() {}

  /** The encoded length of {@code value}, 1 to 9. */
  public static int size(final long value) {
    checkEncodable(value);
    // Significant bits (at least 1, so that 0 takes one byte), 7 bits per byte.
    final int bits = 64 - Long.numberOfLeadingZeros(value | 1);
    return (bits + 6) / 7;
  }

  /** The minimal encoding of {@code value}. */
  public static byte[] encode(final long value) {
    final byte[] out = new byte[size(value)];
    write(value, out, 0);
    return out;
  }

  /**
   * Writes the minimal encoding of {@code value} into {@code dst} at {@code offset}.
   *
   * @return the number of bytes written, {@link #size(long) size(value)}
   * @throws IndexOutOfBoundsException when {@code dst} has too little room
   */
  public static int write(final long value, final byte[] dst, final int offset) {
    final int size = size(value);
    Objects.checkFromIndexSize(offset, size, dst.length);
    long v = value;
    int pos = offset;
    while ((v & ~0x7FL) != 0) {
      dst[pos++] = (byte) ((v & 0x7F) | 0x80);
      v >>>= 7;
    }
    dst[pos] = (byte) v;
    return size;
  }

  /**
   * Writes the minimal encoding of {@code value} at the buffer's position and advances it.
   *
   * @throws BufferOverflowException when the buffer has too little room (nothing is written)
   */
  public static void write(final long value, final ByteBuffer dst) {
    if (dst.remaining() < size(value)) {
      throw new BufferOverflowException();
    }
    long v = value;
    while ((v & ~0x7FL) != 0) {
      dst.put((byte) ((v & 0x7F) | 0x80));
      v >>>= 7;
    }
    dst.put((byte) v);
  }

  /** Decodes the varint at the start of {@code src}; trailing bytes are allowed. */
  public static Decoded decode(final byte[] src) {
    return decode(src, 0);
  }

  /** Decodes the varint at {@code offset}; bytes after it are allowed. */
  public static Decoded decode(final byte[] src, final int offset) {
    final long value = read(src, offset, src.length);
    return new Decoded(value, size(value));
  }

  /**
   * Reads the varint at {@code offset}, looking no further than {@code limit} (exclusive). Does
   * not allocate. The caller advances by {@link #size(long) size(value)}.
   *
   * @throws MultiformatException when the varint is truncated, longer than 9 bytes or not minimal
   */
  public static long read(final byte[] src, final int offset, final int limit) {
    return scan(src, offset, limit, false);
  }

  /**
   * Like {@link #read(byte[], int, int)}, but returns {@link #INCOMPLETE} instead of failing when
   * the region ends inside the varint. For stream framing, where a length prefix may be split
   * across reads; over-long and non-minimal varints still fail at once.
   */
  public static long tryRead(final byte[] src, final int offset, final int limit) {
    return scan(src, offset, limit, true);
  }

  /**
   * Reads the varint at the buffer's position and advances the position past it. On failure the
   * position is unchanged.
   *
   * @throws MultiformatException when the varint is truncated, longer than 9 bytes or not minimal
   */
  public static long read(final ByteBuffer src) {
    final long value = scan(src, false);
    src.position(src.position() + size(value));
    return value;
  }

  /**
   * Like {@link #read(ByteBuffer)}, but returns {@link #INCOMPLETE} (position unchanged) when the
   * buffer ends inside the varint.
   */
  public static long tryRead(final ByteBuffer src) {
    final long value = scan(src, true);
    if (value != INCOMPLETE) {
      src.position(src.position() + size(value));
    }
    return value;
  }

  private static long scan(
      final byte[] src, final int offset, final int limit, final boolean allowIncomplete) {
    Objects.checkFromToIndex(offset, limit, src.length);
    long value = 0;
    for (int i = 0; i < MAX_BYTES; i++) {
      final int pos = offset + i;
      if (pos >= limit) {
        if (allowIncomplete) {
          return INCOMPLETE;
        }
        throw truncated(offset, i);
      }
      final int b = src[pos] & 0xFF;
      value |= (long) (b & 0x7F) << (7 * i);
      if ((b & 0x80) == 0) {
        if (b == 0 && i > 0) {
          throw nonMinimal(offset);
        }
        return value;
      }
    }
    throw overlong(offset);
  }

  private static long scan(final ByteBuffer src, final boolean allowIncomplete) {
    final int offset = src.position();
    final int limit = src.limit();
    long value = 0;
    for (int i = 0; i < MAX_BYTES; i++) {
      final int pos = offset + i;
      if (pos >= limit) {
        if (allowIncomplete) {
          return INCOMPLETE;
        }
        throw truncated(offset, i);
      }
      final int b = src.get(pos) & 0xFF;
      value |= (long) (b & 0x7F) << (7 * i);
      if ((b & 0x80) == 0) {
        if (b == 0 && i > 0) {
          throw nonMinimal(offset);
        }
        return value;
      }
    }
    throw overlong(offset);
  }

  private static void checkEncodable(final long value) {
    if (value < 0) {
      throw new MultiformatException(
          "varint value " + Long.toUnsignedString(value) + " exceeds 2^63-1");
    }
  }

  private static MultiformatException truncated(final int offset, final int seen) {
    return new MultiformatException(
        "truncated varint at offset " + offset + " (input ends after " + seen + " bytes)");
  }

  private static MultiformatException nonMinimal(final int offset) {
    return new MultiformatException(
        "non-minimal varint at offset " + offset + " (ends with a 0x00 continuation byte)");
  }

  private static MultiformatException overlong(final int offset) {
    return new MultiformatException(
        "varint longer than " + MAX_BYTES + " bytes at offset " + offset);
  }
}
