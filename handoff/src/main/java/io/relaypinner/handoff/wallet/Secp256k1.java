package io.relaypinner.handoff.wallet;

import java.math.BigInteger;
import java.util.Arrays;
import org.bouncycastle.asn1.x9.X9ECParameters;
import org.bouncycastle.crypto.digests.SHA256Digest;
import org.bouncycastle.crypto.ec.CustomNamedCurves;
import org.bouncycastle.crypto.params.ECDomainParameters;
import org.bouncycastle.crypto.params.ECPrivateKeyParameters;
import org.bouncycastle.crypto.signers.ECDSASigner;
import org.bouncycastle.crypto.signers.HMacDSAKCalculator;
import org.bouncycastle.math.ec.ECAlgorithms;
import org.bouncycastle.math.ec.ECPoint;
import org.bouncycastle.util.BigIntegers;

/**
 * secp256k1 ECDSA the Ethereum way, on BouncyCastle's curve arithmetic and signer: deterministic
 * nonces (RFC 6979, HMAC-SHA256) over a 32-byte digest, low-S normalisation, and public key
 * recovery (SEC 1 v2 section 4.1.6) for recovery ids 0 and 1, the only ones Ethereum's
 * {@code v = 27/28} can express.
 */
final class Secp256k1 {
  static final X9ECParameters PARAMS = CustomNamedCurves.getByName("secp256k1");
  static final ECDomainParameters DOMAIN =
      new ECDomainParameters(PARAMS.getCurve(), PARAMS.getG(), PARAMS.getN(), PARAMS.getH());
  static final BigInteger N = PARAMS.getN();
  static final BigInteger HALF_N = N.shiftRight(1);
  /** The field prime; a signature's r must be below it to name an x coordinate. */
  static final BigInteger P = PARAMS.getCurve().getField().getCharacteristic();

  private Secp256k1() {}

  /** The uncompressed public point {@code 04 || x || y} of a private scalar. */
  static byte[] publicKey(final BigInteger d) {
    return DOMAIN.getG().multiply(d).normalize().getEncoded(false);
  }

  /**
   * Signs a 32-byte digest; returns {@code {r, s, recoveryId}} with s already low.
   */
  static BigInteger[] sign(final byte[] digest, final BigInteger d, final byte[] publicKey) {
    final ECDSASigner signer = new ECDSASigner(new HMacDSAKCalculator(new SHA256Digest()));
    signer.init(true, new ECPrivateKeyParameters(d, DOMAIN));
    final BigInteger[] rs = signer.generateSignature(digest);
    final BigInteger r = rs[0];
    BigInteger s = rs[1];
    if (s.compareTo(HALF_N) > 0) {
      // Ethereum (EIP-2) and ethers accept only low-S signatures.
      s = N.subtract(s);
    }
    for (int recoveryId = 0; recoveryId < 2; recoveryId++) {
      final ECPoint q = recover(digest, r, s, recoveryId);
      if (q != null && Arrays.equals(q.getEncoded(false), publicKey)) {
        return new BigInteger[] {r, s, BigInteger.valueOf(recoveryId)};
      }
    }
    // Only when r >= p - n: the point's x does not fit v = 27/28. Probability about 2^-128.
    throw new IllegalStateException("signature has no Ethereum recovery id (r overflow)");
  }

  /**
   * The public point that produced {@code (r, s)} over {@code digest} with this recovery id, or
   * {@code null} when there is none (r not an x coordinate, result at infinity).
   */
  static ECPoint recover(
      final byte[] digest, final BigInteger r, final BigInteger s, final int recoveryId) {
    if (r.signum() <= 0 || r.compareTo(N) >= 0 || s.signum() <= 0 || s.compareTo(N) >= 0
        || r.compareTo(P) >= 0 || recoveryId < 0 || recoveryId > 1) {
      return null;
    }
    final byte[] compressed = new byte[33];
    compressed[0] = (byte) (recoveryId == 0 ? 0x02 : 0x03);
    System.arraycopy(BigIntegers.asUnsignedByteArray(32, r), 0, compressed, 1, 32);
    final ECPoint bigR;
    try {
      bigR = PARAMS.getCurve().decodePoint(compressed);
    } catch (final IllegalArgumentException e) {
      return null;
    }
    // secp256k1 has cofactor 1, so every curve point has order n: no n*R check needed.
    final BigInteger e = new BigInteger(1, digest).mod(N);
    final BigInteger rInverse = r.modInverse(N);
    final BigInteger u1 = N.subtract(e).multiply(rInverse).mod(N);
    final BigInteger u2 = s.multiply(rInverse).mod(N);
    final ECPoint q = ECAlgorithms.sumOfTwoMultiplies(DOMAIN.getG(), u1, bigR, u2).normalize();
    return q.isInfinity() ? null : q;
  }
}
