package io.relaypinner.multiformats;

/** Helpers for error messages about text input. */
final class Chars {
  private Chars() {}

  /** A character quoted for an error message; control and non-ASCII ones as {@code U+XXXX}. */
  static String quote(final char c) {
    if (c >= 0x20 && c < 0x7F) {
      return "'" + c + "'";
    }
    return String.format("U+%04X", (int) c);
  }

  /** The first {@code max} characters of {@code text}, with an ellipsis when cut. */
  static String abbreviate(final CharSequence text, final int max) {
    if (text.length() <= max) {
      return text.toString();
    }
    return text.subSequence(0, max) + "...";
  }
}
