package io.relaypinner.multiformats;

/**
 * Plain base58btc (Bitcoin alphabet) without a multibase prefix, as used for legacy PeerId text
 * ({@code 12D3KooW…}) and CIDv0 ({@code Qm…}). The alphabet and the leading-zero rule are those of
 * {@code multiformats/multibase} (base58btc, from the Bitcoin base58 draft): each leading zero byte
 * is one leading {@code '1'}.
 *
 * <p>Limits: text up to {@value #MAX_TEXT_LENGTH} characters, input up to {@value #MAX_BYTES}
 * bytes, because the conversion is quadratic in the length.
 */
public final class Base58 {
  /** Longest text {@link #decode} accepts. */
  public static final int MAX_TEXT_LENGTH = RadixCodec.MAX_TEXT_LENGTH;

  /** Longest input {@link #encode} accepts. */
  public static final int MAX_BYTES = RadixCodec.MAX_BYTES;

  private Base58() {}

  /** Encodes {@code data} in base58btc, without a prefix. */
  public static String encode(final byte[] data) {
    return RadixCodec.BASE58BTC.encode(data);
  }

  /**
   * Decodes base58btc text that has no prefix.
   *
   * @throws MultiformatException on a character outside the alphabet (with its position) or text
   *     over the limit
   */
  public static byte[] decode(final CharSequence text) {
    return RadixCodec.BASE58BTC.decode(text, 0);
  }
}
