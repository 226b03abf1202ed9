package io.relaypinner.handoff.json;

import java.math.BigDecimal;
import java.math.MathContext;
import java.math.RoundingMode;

/**
 * ECMAScript's {@code Number::toString} for finite doubles (ECMA-262, 6.1.6.1.20), the number
 * form RFC 8785 section 3.2.2.3 prescribes: the shortest decimal digit string that reads back as
 * the same double, the closest one when several are that short, written in plain notation for
 * exponents from -6 to 20 and as {@code d.ddde+N} outside. {@code -0} is written {@code 0}.
 *
 * <p>Java 17's {@code Double.toString} is not always shortest (JDK-4511638, fixed in 19) and uses
 * another notation, so this searches the digit count directly: for each precision p = 1..17 it
 * takes the two p-digit neighbours of the exact binary value and keeps those that round-trip
 * through the JDK's correctly rounded parser.
 */
public final class EcmaNumbers {
  private EcmaNumbers() {}

  /**
   * The ECMAScript text of {@code value}.
   *
   * @throws IllegalArgumentException for NaN and the infinities, which JSON cannot carry
   */
  public static String toString(final double value) {
    if (Double.isNaN(value) || Double.isInfinite(value)) {
      throw new IllegalArgumentException("JSON has no " + value);
    }
    if (value == 0) {
      return "0";
    }
    if (value < 0) {
      return "-" + toString(-value);
    }
    final BigDecimal shortest = shortest(value);
    final String digits = shortest.unscaledValue().toString();
    final int k = digits.length();
    final int n = k - shortest.scale();
    return format(digits, k, n);
  }

  /** The shortest round-tripping decimal, trailing zeros stripped. */
  private static BigDecimal shortest(final double value) {
    final BigDecimal exact = new BigDecimal(value);
    for (int precision = 1; precision <= 17; precision++) {
      final BigDecimal down = exact.round(new MathContext(precision, RoundingMode.FLOOR));
      final BigDecimal up = exact.round(new MathContext(precision, RoundingMode.CEILING));
      final boolean downOk = Double.parseDouble(down.toString()) == value;
      final boolean upOk = Double.parseDouble(up.toString()) == value;
      if (downOk && upOk && down.compareTo(up) != 0) {
        final int cmp = exact.subtract(down).compareTo(up.subtract(exact));
        if (cmp < 0) {
          return down.stripTrailingZeros();
        }
        if (cmp > 0) {
          return up.stripTrailingZeros();
        }
        // Exactly halfway: the even last digit, as the specification's note asks.
        return (down.unscaledValue().testBit(0) ? up : down).stripTrailingZeros();
      }
      if (downOk) {
        return down.stripTrailingZeros();
      }
      if (upOk) {
        return up.stripTrailingZeros();
      }
    }
    // 17 significant digits always identify a double.
    throw new IllegalStateException("no round-tripping decimal for " + value);
  }

  /** Step 6 to 10 of Number::toString, with k digits and decimal exponent n. */
  private static String format(final String digits, final int k, final int n) {
    final StringBuilder out = new StringBuilder(k + 8);
    if (k <= n && n <= 21) {
      out.append(digits);
      for (int i = 0; i < n - k; i++) {
        out.append('0');
      }
    } else if (0 < n && n <= 21) {
      out.append(digits, 0, n).append('.').append(digits, n, k);
    } else if (-6 < n && n <= 0) {
      out.append("0.");
      for (int i = 0; i < -n; i++) {
        out.append('0');
      }
      out.append(digits);
    } else {
      final int exponent = n - 1;
      out.append(digits.charAt(0));
      if (k > 1) {
        out.append('.').append(digits, 1, k);
      }
      out.append('e').append(exponent > 0 ? '+' : '-').append(Math.abs(exponent));
    }
    return out.toString();
  }
}
