package io.relaypinner.handoff.wallet;

import java.math.BigInteger;
import java.util.Arrays;
import java.util.Objects;
import org.bouncycastle.util.BigIntegers;

/**
 * A 65-byte Ethereum signature {@code r || s || v} as {@code personal_sign}, ethers and MetaMask
 * write it: r and s as 32-byte big-endian integers, {@code v = 27 + recoveryId}. Only canonical
 * signatures exist as values: {@code 1 <= r < n}, {@code 1 <= s <= n/2} (low-S, EIP-2). Parsing
 * also accepts {@code v} as 0/1, the raw recovery id some signers emit, and normalises it.
 */
public final class EthSignature {
  /** Bytes of the signature. */
  public static final int LENGTH = 65;

  private final BigInteger r;
  private final BigInteger s;
  private final int v;

  EthSignature(final BigInteger r, final BigInteger s, final int v) {
    this.r = Objects.requireNonNull(r, "r");
    this.s = Objects.requireNonNull(s, "s");
    this.v = v;
  }

  /**
   * Parses {@code 0x} + 130 hex digits.
   *
   * @throws WalletFormatException when not 65 bytes of hex, r or s out of range, s high, or v not
   *     one of 27, 28, 0, 1
   */
  public static EthSignature parse(final String hex) {
    return fromBytes(Hex0x.decode(hex, LENGTH, "signature"));
  }

  /** The signature in these 65 bytes; the same checks as {@link #parse}. */
  public static EthSignature fromBytes(final byte[] bytes) {
    if (bytes.length != LENGTH) {
      throw new WalletFormatException("a signature is 65 bytes, got " + bytes.length);
    }
    final BigInteger r = new BigInteger(1, Arrays.copyOfRange(bytes, 0, 32));
    final BigInteger s = new BigInteger(1, Arrays.copyOfRange(bytes, 32, 64));
    int v = bytes[64] & 0xff;
    if (v == 0 || v == 1) {
      v += 27;
    }
    if (v != 27 && v != 28) {
      throw new WalletFormatException("signature v must be 27 or 28, got " + (bytes[64] & 0xff));
    }
    if (r.signum() <= 0 || r.compareTo(Secp256k1.N) >= 0) {
      throw new WalletFormatException("signature r is out of range");
    }
    if (s.signum() <= 0 || s.compareTo(Secp256k1.N) >= 0) {
      throw new WalletFormatException("signature s is out of range");
    }
    if (s.compareTo(Secp256k1.HALF_N) > 0) {
      throw new WalletFormatException("signature s is high (non-canonical, EIP-2)");
    }
    return new EthSignature(r, s, v);
  }

  public BigInteger r() {
    return r;
  }

  public BigInteger s() {
    return s;
  }

  /** 27 or 28. */
  public int v() {
    return v;
  }

  /** 0 or 1. */
  public int recoveryId() {
    return v - 27;
  }

  /** The 65 bytes {@code r || s || v}. */
  public byte[] toBytes() {
    final byte[] out = new byte[LENGTH];
    System.arraycopy(BigIntegers.asUnsignedByteArray(32, r), 0, out, 0, 32);
    System.arraycopy(BigIntegers.asUnsignedByteArray(32, s), 0, out, 32, 32);
    out[64] = (byte) v;
    return out;
  }

  /** {@code 0x} and 130 lowercase hex digits, exactly as ethers' {@code signMessage} returns. */
  public String toHex() {
    return Hex0x.encode(toBytes());
  }

  @Override
  public boolean equals(final Object o) {
    return o instanceof EthSignature other && r.equals(other.r) && s.equals(other.s)
        && v == other.v;
  }

  @Override
  public int hashCode() {
    return Objects.hash(r, s, v);
  }

  @Override
  public String toString() {
    return toHex();
  }
}
