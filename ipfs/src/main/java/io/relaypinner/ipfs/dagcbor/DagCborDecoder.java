package io.relaypinner.ipfs.dagcbor;

import io.relaypinner.multiformats.Cid;
import io.relaypinner.multiformats.MultiformatException;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Consumer;

/**
 * Strict DAG-CBOR decoder ({@code ipld/ipld} {@code specs/codecs/dag-cbor/spec.md}), hand-written
 * over the byte array so that every rule is enforced where the byte is read, with no library
 * normalising anything first.
 *
 * <p>Refused, each with a {@link DagCborException} naming the rule and the offset: truncation;
 * bytes after the single top-level item; indefinite lengths and the break byte; integers, lengths
 * and tags not in their shortest form; reserved additional-information values 28-30; tags other
 * than 42; tag 42 whose payload is not a byte string {@code 0x00 ‖ CID} filling it exactly;
 * half and single precision floats; NaN and infinities; undefined and every simple value but
 * false, true and null; invalid UTF-8 (overlong, surrogates, above U+10FFFF); map keys that are not
 * strings, repeated, or out of canonical order (shorter first, then bytewise). Limits come from
 * {@link DagCborLimits}; declared lengths are checked against the bytes left before allocating.
 *
 * <p>Instances are immutable and thread-safe.
 */
public final class DagCborDecoder {
  private static final int MAJOR_UINT = 0;
  private static final int MAJOR_NINT = 1;
  private static final int MAJOR_BYTES = 2;
  private static final int MAJOR_TEXT = 3;
  private static final int MAJOR_ARRAY = 4;
  private static final int MAJOR_MAP = 5;
  private static final int MAJOR_TAG = 6;
  private static final int TAG_CID = 42;
  private static final int MAX_KEY_IN_MESSAGE = 64;
  private static final BigInteger TWO_64 = BigInteger.ONE.shiftLeft(64);

  private final DagCborLimits limits;

  /** A decoder with {@link DagCborLimits#DEFAULT}. */
  public DagCborDecoder() {
    this(DagCborLimits.DEFAULT);
  }

  /** A decoder with the given limits. */
  public DagCborDecoder(final DagCborLimits limits) {
    this.limits = Objects.requireNonNull(limits, "limits");
  }

  /** The limits this decoder enforces. */
  public DagCborLimits limits() {
    return limits;
  }

  /**
   * Decodes one block.
   *
   * @throws DagCborException when the bytes are not strict DAG-CBOR or exceed a limit
   */
  public DagCborValue decode(final byte[] block) {
    return new Reader(block, true, null, null).readTop();
  }

  /**
   * Checks that {@code block} is strict DAG-CBOR without building a tree.
   *
   * @throws DagCborException when it is not
   */
  public void validate(final byte[] block) {
    new Reader(block, false, null, null).readTop();
  }

  /**
   * Validates {@code block} without building a tree and hands every link (tag 42) to
   * {@code sink} in document order, repeats included. The whole block is checked before the
   * first call, so a malformed block never yields links.
   *
   * @throws DagCborException when the block is not strict DAG-CBOR
   */
  public void forEachLink(final byte[] block, final Consumer<? super Cid> sink) {
    Objects.requireNonNull(sink, "sink");
    final ArrayList<Cid> links = new ArrayList<>();
    new Reader(block, false, links::add, null).readTop();
    links.forEach(sink);
  }

  /**
   * Validates {@code block}, whose top-level item must be a map, and returns where each value's
   * encoding lies in it, in canonical key order. OrbitDB signatures cover a re-encoding of some
   * entry fields; splicing the received value bytes avoids re-encoding them.
   *
   * @throws DagCborException when the block is not strict DAG-CBOR or not a map
   */
  public Map<String, Span> mapValueSpans(final byte[] block) {
    final LinkedHashMap<String, Span> spans = new LinkedHashMap<>();
    final Reader reader = new Reader(block, false, null, spans);
    reader.readTop();
    if (reader.topMajor != MAJOR_MAP) {
      throw new DagCborException("top-level item is not a map");
    }
    return Collections.unmodifiableMap(spans);
  }

  /** Where an encoded value lies in a block: {@code block[offset, offset + length)}. */
  public record Span(int offset, int length) {
    /** A copy of these bytes of {@code block}. */
    public byte[] copyFrom(final byte[] block) {
      return Arrays.copyOfRange(block, offset, offset + length);
    }
  }

  /** The state of one decode; not shared between threads. */
  private final class Reader {
    private final byte[] in;
    private final int end;
    private final boolean build;
    private final Consumer<Cid> links;
    private final Map<String, Span> spans;
    private int pos;
    private int topMajor = -1;

    Reader(
        final byte[] in,
        final boolean build,
        final Consumer<Cid> links,
        final Map<String, Span> spans) {
      this.in = Objects.requireNonNull(in, "block");
      this.end = in.length;
      this.build = build;
      this.links = links;
      this.spans = spans;
    }

    DagCborValue readTop() {
      if (end > limits.maxInputSize()) {
        throw new DagCborException(
            "block of " + end + " bytes exceeds the limit of " + limits.maxInputSize());
      }
      if (end == 0) {
        throw DagCborException.at(0, "empty input");
      }
      topMajor = (in[0] & 0xff) >>> 5;
      final DagCborValue value = read(0);
      if (pos != end) {
        throw DagCborException.at(pos, (end - pos) + " trailing bytes after the top-level item");
      }
      return value;
    }

    /** Reads one item; returns null when not building. {@code depth}: enclosing collections. */
    private DagCborValue read(final int depth) {
      final int start = pos;
      if (pos >= end) {
        throw DagCborException.at(pos, "truncated: item expected");
      }
      final int initial = in[pos++] & 0xff;
      final int major = initial >>> 5;
      final int info = initial & 0x1f;
      switch (major) {
        case MAJOR_UINT: {
          final long n = argument(start, info);
          if (!build) {
            return null;
          }
          // n is unsigned: negative as a long means 2^63 or more.
          return n >= 0
              ? new DagCborValue.Int(n)
              : new DagCborValue.BigInt(BigInteger.valueOf(n).add(TWO_64));
        }
        case MAJOR_NINT: {
          final long n = argument(start, info);
          if (!build) {
            return null;
          }
          return n >= 0
              ? new DagCborValue.Int(-1 - n)
              : new DagCborValue.BigInt(BigInteger.valueOf(n).add(TWO_64).not());
        }
        case MAJOR_BYTES: {
          final int len = length(start, info, 1);
          final int off = pos;
          pos += len;
          return build ? DagCborValue.Bytes.wrap(Arrays.copyOfRange(in, off, pos)) : null;
        }
        case MAJOR_TEXT: {
          final int len = length(start, info, 1);
          final int off = pos;
          checkUtf8(off, len);
          pos += len;
          return build ? new DagCborValue.Text(Utf8.decodeValid(in, off, len)) : null;
        }
        case MAJOR_ARRAY:
          return readArray(start, info, depth + 1);
        case MAJOR_MAP:
          return readMap(start, info, depth + 1);
        case MAJOR_TAG:
          return readLink(start, info);
        default:
          return readSimple(start, info);
      }
    }

    private DagCborValue readArray(final int start, final int info, final int depth) {
      checkDepth(start, depth);
      final int count = length(start, info, 1);
      if (!build) {
        for (int i = 0; i < count; i++) {
          read(depth);
        }
        return null;
      }
      final DagCborValue[] items = new DagCborValue[count];
      for (int i = 0; i < count; i++) {
        items[i] = read(depth);
      }
      return new DagCborValue.List(List.of(items));
    }

    private DagCborValue readMap(final int start, final int info, final int depth) {
      checkDepth(start, depth);
      // Each entry takes at least two bytes: a key and a value.
      final int count = length(start, info, 2);
      final boolean recordSpans = spans != null && depth == 1;
      final LinkedHashMap<String, DagCborValue> entries =
          build ? new LinkedHashMap<>(count * 2) : null;
      int prevOff = -1;
      int prevLen = 0;
      for (int i = 0; i < count; i++) {
        final int keyStart = pos;
        if (pos >= end) {
          throw DagCborException.at(pos, "truncated: map key expected");
        }
        final int initial = in[pos++] & 0xff;
        if (initial >>> 5 != MAJOR_TEXT) {
          throw DagCborException.at(keyStart, "map key is not a string (major type "
              + (initial >>> 5) + ")");
        }
        final int keyLen = length(keyStart, initial & 0x1f, 1);
        final int keyOff = pos;
        checkUtf8(keyOff, keyLen);
        pos += keyLen;
        if (prevOff >= 0) {
          final int order = keyLen != prevLen
              ? (keyLen < prevLen ? -1 : 1)
              : Arrays.compareUnsigned(
                  in, keyOff, keyOff + keyLen, in, prevOff, prevOff + prevLen);
          if (order == 0) {
            throw DagCborException.at(keyStart, "duplicate map key \""
                + keyForMessage(keyOff, keyLen) + "\"");
          }
          if (order < 0) {
            throw DagCborException.at(keyStart, "map key \""
                + keyForMessage(keyOff, keyLen)
                + "\" out of canonical order (shorter keys first, then bytewise)");
          }
        }
        prevOff = keyOff;
        prevLen = keyLen;
        final int valueStart = pos;
        final DagCborValue value = read(depth);
        if (build) {
          entries.put(Utf8.decodeValid(in, keyOff, keyLen), value);
        }
        if (recordSpans) {
          spans.put(Utf8.decodeValid(in, keyOff, keyLen), new Span(valueStart, pos - valueStart));
        }
      }
      return build ? DagCborValue.Map.wrapCanonical(entries) : null;
    }

    private DagCborValue readLink(final int start, final int info) {
      final long tag = argument(start, info);
      if (tag != TAG_CID) {
        throw DagCborException.at(start, "tag " + Long.toUnsignedString(tag)
            + " is not allowed; DAG-CBOR allows only tag 42 (CID)");
      }
      final int payloadStart = pos;
      if (pos >= end) {
        throw DagCborException.at(pos, "truncated: tag 42 payload expected");
      }
      final int initial = in[pos++] & 0xff;
      if (initial >>> 5 != MAJOR_BYTES) {
        throw DagCborException.at(payloadStart, "tag 42 payload is not a byte string (major type "
            + (initial >>> 5) + ")");
      }
      final int len = length(payloadStart, initial & 0x1f, 1);
      final int off = pos;
      if (len == 0 || in[off] != 0) {
        throw DagCborException.at(off, "tag 42 payload must start with the 0x00 multibase prefix");
      }
      final Cid cid;
      try {
        final Cid.Decoded decoded = Cid.read(in, off + 1, off + len);
        if (decoded.length() != len - 1) {
          throw DagCborException.at(off + 1 + decoded.length(),
              (len - 1 - decoded.length()) + " trailing bytes after the CID in tag 42");
        }
        cid = decoded.cid();
      } catch (final MultiformatException e) {
        throw new DagCborException(
            "invalid CID in tag 42 at offset " + (off + 1) + ": " + e.getMessage(), e);
      }
      pos = off + len;
      if (links != null) {
        links.accept(cid);
      }
      return build ? new DagCborValue.Link(cid) : null;
    }

    private DagCborValue readSimple(final int start, final int info) {
      switch (info) {
        case 20:
          return build ? DagCborValue.Bool.FALSE : null;
        case 21:
          return build ? DagCborValue.Bool.TRUE : null;
        case 22:
          return build ? DagCborValue.Null.INSTANCE : null;
        case 23:
          throw DagCborException.at(start, "undefined is not allowed");
        case 25:
          throw DagCborException.at(start, "half-precision float is not allowed; "
              + "DAG-CBOR floats are 64-bit");
        case 26:
          throw DagCborException.at(start, "single-precision float is not allowed; "
              + "DAG-CBOR floats are 64-bit");
        case 27: {
          need(start, 8);
          final long bits = readBigEndian(8);
          final double value = Double.longBitsToDouble(bits);
          if (!Double.isFinite(value)) {
            throw DagCborException.at(start, "float " + value + " is not allowed");
          }
          return build ? new DagCborValue.Float(value) : null;
        }
        case 31:
          throw DagCborException.at(start, "break byte without indefinite-length item");
        default:
          throw DagCborException.at(start, "simple value " + info + " is not allowed");
      }
    }

    /** The argument of an item header: unsigned 64-bit, shortest form enforced. */
    private long argument(final int start, final int info) {
      if (info < 24) {
        return info;
      }
      final long value;
      final long min;
      switch (info) {
        case 24:
          need(start, 1);
          value = readBigEndian(1);
          min = 24;
          break;
        case 25:
          need(start, 2);
          value = readBigEndian(2);
          min = 0x100;
          break;
        case 26:
          need(start, 4);
          value = readBigEndian(4);
          min = 0x10000;
          break;
        case 27:
          need(start, 8);
          value = readBigEndian(8);
          min = 0x100000000L;
          break;
        case 31:
          throw DagCborException.at(start, "indefinite length is not allowed");
        default:
          throw DagCborException.at(start, "reserved additional information " + info);
      }
      if (Long.compareUnsigned(value, min) < 0) {
        throw DagCborException.at(start, "integer or length " + value
            + " not in its shortest form");
      }
      return value;
    }

    /**
     * A length argument, checked to fit the bytes left when each unit takes at least
     * {@code unitSize} bytes, so nothing is allocated for a length the input cannot hold.
     */
    private int length(final int start, final int info, final int unitSize) {
      final long n = argument(start, info);
      final long left = end - pos;
      if (n < 0 || n > left / unitSize) {
        throw DagCborException.at(start, "declared length " + Long.toUnsignedString(n)
            + " exceeds the " + left + " bytes left");
      }
      return (int) n;
    }

    /** A key for an error message, cut short: keys can be as long as the block. */
    private String keyForMessage(final int off, final int len) {
      final String key = Utf8.decodeValid(in, off, Math.min(len, MAX_KEY_IN_MESSAGE));
      return len > MAX_KEY_IN_MESSAGE ? key + "..." : key;
    }

    private void checkDepth(final int start, final int depth) {
      if (depth > limits.maxDepth()) {
        throw DagCborException.at(start, "nesting deeper than the limit of " + limits.maxDepth());
      }
    }

    private void checkUtf8(final int off, final int len) {
      final int bad = Utf8.firstInvalid(in, off, len);
      if (bad >= 0) {
        throw DagCborException.at(bad, "invalid UTF-8 in string");
      }
    }

    private void need(final int start, final int n) {
      if (end - pos < n) {
        throw DagCborException.at(start, "truncated: header needs " + n + " more bytes, "
            + (end - pos) + " left");
      }
    }

    private long readBigEndian(final int n) {
      long v = 0;
      for (int i = 0; i < n; i++) {
        v = (v << 8) | (in[pos++] & 0xff);
      }
      return v;
    }
  }
}
