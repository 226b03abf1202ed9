package io.relaypinner.libp2p.crypto;

import java.math.BigInteger;
import java.util.Arrays;
import org.bouncycastle.crypto.digests.SHA256Digest;
import org.bouncycastle.crypto.params.ECPublicKeyParameters;
import org.bouncycastle.crypto.signers.ECDSASigner;
import org.bouncycastle.math.ec.ECPoint;

/**
 * A secp256k1 public key, always held and marshalled as the 33-byte compressed point (a 65-byte
 * uncompressed point is accepted and compressed, as js-libp2p does). Signatures: ECDSA over
 * SHA-256 of the message, strict DER, low-S only.
 */
public final class Secp256k1PublicKey implements PublicKey {
  /** Bytes of a compressed point. */
  public static final int LENGTH = 33;

  private final byte[] compressed;
  private final ECPublicKeyParameters params;

  Secp256k1PublicKey(final byte[] encoded) {
    if (encoded.length != LENGTH && encoded.length != 65) {
      throw new KeyFormatException(
          "secp256k1 public key of " + encoded.length + " bytes, expected 33 or 65");
    }
    final ECPoint point;
    try {
      point = Secp256k1Curve.PARAMS.getCurve().decodePoint(encoded).normalize();
    } catch (final IllegalArgumentException | ArithmeticException e) {
      throw new KeyFormatException("secp256k1 public key is not a valid curve point", e);
    }
    if (point.isInfinity() || !point.isValid()) {
      throw new KeyFormatException("secp256k1 public key is not a valid curve point");
    }
    this.compressed = point.getEncoded(true);
    this.params = new ECPublicKeyParameters(point, Secp256k1Curve.DOMAIN);
  }

  @Override
  public KeyType type() {
    return KeyType.SECP256K1;
  }

  @Override
  public byte[] raw() {
    return compressed.clone();
  }

  /** The 65-byte uncompressed point ({@code 0x04 || x || y}). */
  public byte[] uncompressed() {
    return params.getQ().getEncoded(false);
  }

  @Override
  public boolean verify(final byte[] data, final byte[] signature) {
    final BigInteger[] rs = Secp256k1Curve.decodeDer(signature);
    if (rs == null) {
      return false;
    }
    final ECDSASigner verifier = new ECDSASigner();
    verifier.init(false, params);
    return verifier.verifySignature(sha256(data), rs[0], rs[1]);
  }

  static byte[] sha256(final byte[] data) {
    final SHA256Digest digest = new SHA256Digest();
    digest.update(data, 0, data.length);
    final byte[] out = new byte[digest.getDigestSize()];
    digest.doFinal(out, 0);
    return out;
  }

  @Override
  public boolean equals(final Object o) {
    return o instanceof Secp256k1PublicKey other && Arrays.equals(compressed, other.compressed);
  }

  @Override
  public int hashCode() {
    return Arrays.hashCode(compressed);
  }

  @Override
  public String toString() {
    return "Secp256k1PublicKey[" + peerId() + "]";
  }
}
