package io.relaypinner.multiformats;

import java.util.Optional;

/**
 * Multibase text encodings, as specified by {@code multiformats/multibase} ({@code README.md} and
 * the prefix table {@code multibase.csv}): the first character names the base, the rest is the
 * data in that base. Only the bases in {@link Base} are supported.
 *
 * <p>Limits: base58btc and base36 are quadratic big-number conversions, so their text is limited
 * to {@value Base58#MAX_TEXT_LENGTH} characters (and their encoder input to {@value
 * Base58#MAX_BYTES} bytes); the RFC 4648 bases are linear and bounded only by the input.
 * Decoding of base16, base32 and base36 ignores letter case, as the spec's case-insensitivity
 * tests require; base58btc and base64 are case-sensitive.
 */
public final class Multibase {
  /** The supported bases, each with its multibase prefix character and spec name. */
  public enum Base {
    BASE16('f', "base16", Rfc4648Codec.BASE16, null),
    BASE16_UPPER('F', "base16upper", Rfc4648Codec.BASE16_UPPER, null),
    BASE32('b', "base32", Rfc4648Codec.BASE32, null),
    BASE32_UPPER('B', "base32upper", Rfc4648Codec.BASE32_UPPER, null),
    BASE36('k', "base36", null, RadixCodec.BASE36),
    BASE36_UPPER('K', "base36upper", null, RadixCodec.BASE36_UPPER),
    BASE58BTC('z', "base58btc", null, RadixCodec.BASE58BTC),
    BASE64('m', "base64", Rfc4648Codec.BASE64, null),
    BASE64URL('u', "base64url", Rfc4648Codec.BASE64URL, null);

    private final char prefix;
    private final String multibaseName;
    private final Rfc4648Codec rfc4648;
    private final RadixCodec radix;

    Base(
        final char prefix, final String multibaseName, final Rfc4648Codec rfc4648,
        final RadixCodec radix) {
      this.prefix = prefix;
      this.multibaseName = multibaseName;
      this.rfc4648 = rfc4648;
      this.radix = radix;
    }

    /** The multibase prefix character, e.g. {@code 'z'} for base58btc. */
    public char prefix() {
      return prefix;
    }

    /** The name in the multibase table, e.g. {@code "base58btc"}. */
    public String multibaseName() {
      return multibaseName;
    }

    /** The base whose prefix is {@code prefix}. */
    public static Optional<Base> forPrefix(final char prefix) {
      for (final Base base : values()) {
        if (base.prefix == prefix) {
          return Optional.of(base);
        }
      }
      return Optional.empty();
    }

    /** The base named {@code name} in the multibase table, e.g. {@code "base36"}. */
    public static Optional<Base> forName(final String name) {
      for (final Base base : values()) {
        if (base.multibaseName.equals(name)) {
          return Optional.of(base);
        }
      }
      return Optional.empty();
    }

    /** Encodes {@code data} in this base without the multibase prefix. */
    public String encodeBare(final byte[] data) {
      return rfc4648 != null ? rfc4648.encode(data) : radix.encode(data);
    }

    /** Decodes text in this base that has no multibase prefix. */
    public byte[] decodeBare(final CharSequence text) {
      return decodeFrom(text, 0);
    }

    byte[] decodeFrom(final CharSequence text, final int start) {
      return rfc4648 != null ? rfc4648.decode(text, start) : radix.decode(text, start);
    }
  }

  private Multibase() {}

  /** Encodes {@code data} as the base's prefix character followed by the encoded data. */
  public static String encode(final Base base, final byte[] data) {
    return base.prefix + base.encodeBare(data);
  }

  /**
   * Decodes a multibase string, choosing the base by its first character.
   *
   * @throws MultiformatException when the text is empty, the prefix is not a supported base, or
   *     the rest is not valid in that base
   */
  public static byte[] decode(final CharSequence text) {
    return baseOf(text).decodeFrom(text, 1);
  }

  /**
   * The base named by the prefix of {@code text}.
   *
   * @throws MultiformatException when the text is empty or the prefix is not a supported base
   */
  public static Base baseOf(final CharSequence text) {
    if (text.length() == 0) {
      throw new MultiformatException("empty multibase string");
    }
    final char prefix = text.charAt(0);
    return Base.forPrefix(prefix).orElseThrow(() -> new MultiformatException(
        "unknown multibase prefix " + Chars.quote(prefix)));
  }
}
