package io.relaypinner.relay.gateway;

import java.util.Locale;

/**
 * The one byte range a {@code GET /ipfs/} answer covers (spec 4.6, RFC 9110 14.2): the whole
 * content, a single satisfiable range ({@code 206}), or none ({@code 416}).
 *
 * <p>Only single ranges are honoured: a header with several ranges, another unit or a syntax
 * error is ignored and the whole content is sent, as RFC 9110 allows.
 *
 * @param kind what to answer
 * @param start first byte, inclusive
 * @param end last byte, inclusive ({@code start - 1} for empty content)
 */
public record ByteRange(Kind kind, long start, long end) {
  /** How the request's {@code Range} applies to the content. */
  public enum Kind {
    /** No usable {@code Range}: 200 with everything. */
    FULL,
    /** One satisfiable range: 206. */
    PARTIAL,
    /** A range outside the content: 416. */
    UNSATISFIABLE
  }

  private static final String UNIT = "bytes=";

  /** Bytes covered. */
  public long length() {
    return end - start + 1;
  }

  /**
   * Applies a {@code Range} header value ({@code null}: none) to content of {@code size} bytes.
   */
  public static ByteRange parse(final String header, final long size) {
    final ByteRange full = new ByteRange(Kind.FULL, 0, size - 1);
    if (header == null) {
      return full;
    }
    final String value = header.trim();
    if (!value.toLowerCase(Locale.ROOT).startsWith(UNIT)) {
      return full;
    }
    final String spec = value.substring(UNIT.length()).trim();
    final int dash = spec.indexOf('-');
    if (spec.indexOf(',') >= 0 || dash < 0) {
      return full;
    }
    final long first = number(spec.substring(0, dash).trim());
    final long last = number(spec.substring(dash + 1).trim());
    final boolean hasFirst = dash > 0;
    final boolean hasLast = dash < spec.length() - 1;
    if (hasFirst && first < 0 || hasLast && last < 0 || !hasFirst && !hasLast) {
      return full;
    }
    if (!hasFirst) {
      // Suffix range: the last n bytes; "-0" and any suffix of empty content select nothing.
      if (last == 0 || size == 0) {
        return unsatisfiable();
      }
      return new ByteRange(Kind.PARTIAL, Math.max(0, size - last), size - 1);
    }
    if (hasLast && last < first) {
      return full;
    }
    if (first >= size) {
      return unsatisfiable();
    }
    final long end = hasLast ? Math.min(last, size - 1) : size - 1;
    return new ByteRange(Kind.PARTIAL, first, end);
  }

  private static ByteRange unsatisfiable() {
    return new ByteRange(Kind.UNSATISFIABLE, 0, -1);
  }

  /** A decimal number; -1 when empty or not digits; values past a long saturate. */
  private static long number(final String text) {
    if (text.isEmpty()) {
      return -1;
    }
    long value = 0;
    for (int i = 0; i < text.length(); i++) {
      final char c = text.charAt(i);
      if (c < '0' || c > '9') {
        return -1;
      }
      if (value > (Long.MAX_VALUE - 9) / 10) {
        // Beyond any content size: saturate rather than fail.
        value = Long.MAX_VALUE;
      } else {
        value = value * 10 + (c - '0');
      }
    }
    return value;
  }
}
