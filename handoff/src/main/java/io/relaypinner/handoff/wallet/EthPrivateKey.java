package io.relaypinner.handoff.wallet;

import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import org.bouncycastle.util.BigIntegers;

/**
 * An Ethereum account key: a secp256k1 scalar {@code 1 <= d < n}, in text as {@code 0x} + 64 hex
 * digits (the form {@code openssl rand -hex 32}, ethers and {@code eth-account} use). Signs
 * EIP-191 {@code personal_sign} messages deterministically (RFC 6979), so the same key and message
 * always give the same signature, byte for byte the one ethers gives. {@link #toString()} never
 * shows the key.
 */
public final class EthPrivateKey {
  /** Bytes of the scalar. */
  public static final int LENGTH = 32;

  private final BigInteger d;
  private final byte[] publicKey;
  private final EthAddress address;

  private EthPrivateKey(final BigInteger d) {
    if (d.signum() <= 0 || d.compareTo(Secp256k1.N) >= 0) {
      throw new WalletFormatException("private key is out of range (must be 1 <= key < n)");
    }
    this.d = d;
    this.publicKey = Secp256k1.publicKey(d);
    this.address = EthAddress.ofPublicKey(publicKey);
  }

  /** A fresh key: 32 random bytes, drawn again in the (negligible) case they are out of range. */
  public static EthPrivateKey generate(final SecureRandom random) {
    while (true) {
      final byte[] candidate = new byte[LENGTH];
      random.nextBytes(candidate);
      final BigInteger d = new BigInteger(1, candidate);
      if (d.signum() > 0 && d.compareTo(Secp256k1.N) < 0) {
        return new EthPrivateKey(d);
      }
    }
  }

  /**
   * Parses {@code 0x} + 64 hex digits (the prefix is optional).
   *
   * @throws WalletFormatException when malformed or out of range; the message never echoes the key
   */
  public static EthPrivateKey parse(final String hex) {
    return new EthPrivateKey(new BigInteger(1, Hex0x.decode(hex, LENGTH, "private key")));
  }

  /** The key with this 32-byte big-endian scalar. */
  public static EthPrivateKey fromBytes(final byte[] raw) {
    if (raw.length != LENGTH) {
      throw new WalletFormatException("private key must be 32 bytes, got " + raw.length);
    }
    return new EthPrivateKey(new BigInteger(1, raw));
  }

  /** The account address. */
  public EthAddress address() {
    return address;
  }

  /** The uncompressed public key {@code 04 || x || y}. */
  public byte[] publicKey() {
    return publicKey.clone();
  }

  /** The 32-byte scalar. Secret: store it with care. */
  public byte[] toBytes() {
    return BigIntegers.asUnsignedByteArray(LENGTH, d);
  }

  /** {@code 0x} + 64 lowercase hex digits. Secret: store it with care. */
  public String toHex() {
    return Hex0x.encode(toBytes());
  }

  /** Signs a 32-byte digest as is (no prefix, no hashing). */
  public EthSignature signDigest(final byte[] digest) {
    if (digest.length != Keccak.LENGTH) {
      throw new IllegalArgumentException("digest must be 32 bytes, got " + digest.length);
    }
    final BigInteger[] rsv = Secp256k1.sign(digest, d, publicKey);
    return new EthSignature(rsv[0], rsv[1], 27 + rsv[2].intValue());
  }

  /** EIP-191 {@code personal_sign} of raw message bytes. */
  public EthSignature signPersonal(final byte[] message) {
    return signDigest(PersonalSign.hash(message));
  }

  /** EIP-191 {@code personal_sign} of a text message (its UTF-8 bytes). */
  public EthSignature signPersonal(final String message) {
    return signPersonal(message.getBytes(StandardCharsets.UTF_8));
  }

  @Override
  public String toString() {
    return "EthPrivateKey[" + address + "]";
  }
}
