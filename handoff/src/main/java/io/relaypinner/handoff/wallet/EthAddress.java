package io.relaypinner.handoff.wallet;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.Locale;

/**
 * A 20-byte Ethereum account address: the last 20 bytes of the Keccak-256 of the uncompressed
 * public key without its {@code 04} prefix. Text form {@code 0x} + 40 hex digits; all-lowercase and
 * all-uppercase digits are accepted as they are, mixed case must carry a valid EIP-55 checksum.
 * {@link #toString()} writes the EIP-55 checksummed form; two addresses are equal when their
 * bytes are (case never matters).
 */
public final class EthAddress {
  /** Bytes of an address. */
  public static final int LENGTH = 20;

  private static final HexFormat HEX = HexFormat.of();

  private final byte[] bytes;
  private final String checksummed;

  private EthAddress(final byte[] bytes) {
    this.bytes = bytes;
    this.checksummed = checksum(HEX.formatHex(bytes));
  }

  /** The address of an uncompressed public key ({@code 04 || x || y}, 65 bytes). */
  public static EthAddress ofPublicKey(final byte[] uncompressed) {
    if (uncompressed.length != 65 || uncompressed[0] != 0x04) {
      throw new WalletFormatException("expected a 65-byte uncompressed secp256k1 public key");
    }
    final byte[] hash = Keccak.keccak256(uncompressed, 1, 64);
    return new EthAddress(Arrays.copyOfRange(hash, 12, 32));
  }

  /** The address with these 20 bytes. */
  public static EthAddress ofBytes(final byte[] bytes) {
    if (bytes.length != LENGTH) {
      throw new WalletFormatException("an address is 20 bytes, got " + bytes.length);
    }
    return new EthAddress(bytes.clone());
  }

  /**
   * Parses {@code 0x} + 40 hex digits.
   *
   * @throws WalletFormatException when malformed or when mixed case fails the EIP-55 checksum
   */
  public static EthAddress parse(final String text) {
    if (text == null || !(text.startsWith("0x") || text.startsWith("0X"))) {
      throw new WalletFormatException("an address starts with 0x");
    }
    final byte[] bytes = Hex0x.decode(text, LENGTH, "address");
    final EthAddress address = new EthAddress(bytes);
    final String digits = text.substring(2);
    final boolean allLower = digits.equals(digits.toLowerCase(Locale.ROOT));
    final boolean allUpper = digits.equals(digits.toUpperCase(Locale.ROOT));
    if (!allLower && !allUpper && !digits.equals(address.checksummed.substring(2))) {
      throw new WalletFormatException("address " + text + " has a bad EIP-55 checksum");
    }
    return address;
  }

  /** True when {@link #parse} would accept the text. */
  public static boolean isValid(final String text) {
    try {
      parse(text);
      return true;
    } catch (final WalletFormatException e) {
      return false;
    }
  }

  /** The 20 bytes. */
  public byte[] bytes() {
    return bytes.clone();
  }

  /** {@code 0x} and 40 lowercase hex digits: the form used as a storage key. */
  public String toLowerHex() {
    return "0x" + HEX.formatHex(bytes);
  }

  /** The EIP-55 checksummed form, e.g. {@code 0x14791697260E4c9A71f18484C9f997B308e59325}. */
  @Override
  public String toString() {
    return checksummed;
  }

  @Override
  public boolean equals(final Object o) {
    return o instanceof EthAddress other && Arrays.equals(bytes, other.bytes);
  }

  @Override
  public int hashCode() {
    return Arrays.hashCode(bytes);
  }

  /** EIP-55: a hex letter is uppercase when the matching nibble of keccak(lowercase hex) >= 8. */
  private static String checksum(final String lowerHex) {
    final byte[] hash = Keccak.keccak256(lowerHex.getBytes(StandardCharsets.US_ASCII));
    final StringBuilder out = new StringBuilder(42).append("0x");
    for (int i = 0; i < lowerHex.length(); i++) {
      final char c = lowerHex.charAt(i);
      final int nibble = (hash[i / 2] >> (i % 2 == 0 ? 4 : 0)) & 0x0f;
      out.append(c >= 'a' && nibble >= 8 ? Character.toUpperCase(c) : c);
    }
    return out.toString();
  }
}
