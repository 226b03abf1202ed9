package io.relaypinner.libp2p.crypto;

import java.math.BigInteger;
import java.security.SecureRandom;
import org.bouncycastle.crypto.digests.SHA256Digest;
import org.bouncycastle.crypto.params.ECPrivateKeyParameters;
import org.bouncycastle.crypto.signers.ECDSASigner;
import org.bouncycastle.crypto.signers.HMacDSAKCalculator;
import org.bouncycastle.util.BigIntegers;

/**
 * A secp256k1 private key (32-byte scalar). Signing is deterministic (RFC 6979 with HMAC-SHA256)
 * ECDSA over SHA-256 of the message, normalised to low-S and DER-encoded, which is byte for byte
 * what js-libp2p ({@code @noble/curves}) produces for the same key and message.
 */
public final class Secp256k1PrivateKey implements PrivateKey {
  /** Bytes of a private scalar. */
  public static final int LENGTH = 32;

  private final BigInteger d;
  private final ECPrivateKeyParameters params;
  private final Secp256k1PublicKey publicKey;

  private Secp256k1PrivateKey(final BigInteger d) {
    if (d.signum() <= 0 || d.compareTo(Secp256k1Curve.N) >= 0) {
      throw new KeyFormatException("secp256k1 private key is out of range");
    }
    this.d = d;
    this.params = new ECPrivateKeyParameters(d, Secp256k1Curve.DOMAIN);
    this.publicKey = new Secp256k1PublicKey(
        Secp256k1Curve.DOMAIN.getG().multiply(d).normalize().getEncoded(true));
  }

  /** A fresh key from {@code random}. */
  public static Secp256k1PrivateKey generate(final SecureRandom random) {
    while (true) {
      final byte[] candidate = new byte[LENGTH];
      random.nextBytes(candidate);
      final BigInteger d = new BigInteger(1, candidate);
      if (d.signum() > 0 && d.compareTo(Secp256k1Curve.N) < 0) {
        return new Secp256k1PrivateKey(d);
      }
    }
  }

  /** The key with this 32-byte big-endian scalar. */
  public static Secp256k1PrivateKey fromRaw(final byte[] raw) {
    if (raw.length != LENGTH) {
      throw new KeyFormatException(
          "secp256k1 private key of " + raw.length + " bytes, expected " + LENGTH);
    }
    return new Secp256k1PrivateKey(new BigInteger(1, raw));
  }

  @Override
  public KeyType type() {
    return KeyType.SECP256K1;
  }

  @Override
  public Secp256k1PublicKey publicKey() {
    return publicKey;
  }

  @Override
  public byte[] raw() {
    return BigIntegers.asUnsignedByteArray(LENGTH, d);
  }

  @Override
  public byte[] sign(final byte[] data) {
    final ECDSASigner signer = new ECDSASigner(new HMacDSAKCalculator(new SHA256Digest()));
    signer.init(true, params);
    final BigInteger[] rs = signer.generateSignature(Secp256k1PublicKey.sha256(data));
    BigInteger s = rs[1];
    // JS peers (noble, lowS: true) reject high-S signatures.
    if (s.compareTo(Secp256k1Curve.HALF_N) > 0) {
      s = Secp256k1Curve.N.subtract(s);
    }
    return Secp256k1Curve.encodeDer(rs[0], s);
  }

  @Override
  public String toString() {
    return "Secp256k1PrivateKey[" + publicKey.peerId() + "]";
  }
}
