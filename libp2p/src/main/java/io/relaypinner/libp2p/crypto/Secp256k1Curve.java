package io.relaypinner.libp2p.crypto;

import java.io.IOException;
import java.math.BigInteger;
import java.util.Arrays;
import org.bouncycastle.asn1.ASN1Encoding;
import org.bouncycastle.asn1.ASN1Integer;
import org.bouncycastle.asn1.ASN1Primitive;
import org.bouncycastle.asn1.ASN1Sequence;
import org.bouncycastle.asn1.DERSequence;
import org.bouncycastle.asn1.x9.X9ECParameters;
import org.bouncycastle.crypto.ec.CustomNamedCurves;
import org.bouncycastle.crypto.params.ECDomainParameters;

/**
 * The secp256k1 domain and the DER signature rules JavaScript peers apply ({@code @noble/curves}
 * with {@code lowS: true}): a signature is a strict DER {@code SEQUENCE { INTEGER r, INTEGER s }}
 * with {@code 1 <= r, s < n} and {@code s <= n/2}.
 */
final class Secp256k1Curve {
  static final X9ECParameters PARAMS = CustomNamedCurves.getByName("secp256k1");
  static final ECDomainParameters DOMAIN =
      new ECDomainParameters(PARAMS.getCurve(), PARAMS.getG(), PARAMS.getN(), PARAMS.getH());
  static final BigInteger N = PARAMS.getN();
  static final BigInteger HALF_N = N.shiftRight(1);
  /** A DER signature of two 33-byte integers is 72 bytes; anything longer is malformed. */
  static final int MAX_DER_LENGTH = 72;

  private Secp256k1Curve() {}

  /** Two non-negative integers; s already normalised to low-S by the caller. */
  static byte[] encodeDer(final BigInteger r, final BigInteger s) {
    try {
      return new DERSequence(new ASN1Integer[] {new ASN1Integer(r), new ASN1Integer(s)})
          .getEncoded(ASN1Encoding.DER);
    } catch (final IOException e) {
      throw new IllegalStateException("DER encoding of an ECDSA signature failed", e);
    }
  }

  /** {@code {r, s}}, or {@code null} when the bytes are not a strict, low-S DER signature. */
  static BigInteger[] decodeDer(final byte[] der) {
    if (der == null || der.length < 8 || der.length > MAX_DER_LENGTH) {
      return null;
    }
    final ASN1Primitive primitive;
    try {
      primitive = ASN1Primitive.fromByteArray(der);
    } catch (final IOException | RuntimeException e) {
      return null;
    }
    if (!(primitive instanceof ASN1Sequence sequence) || sequence.size() != 2
        || !(sequence.getObjectAt(0) instanceof ASN1Integer rInt)
        || !(sequence.getObjectAt(1) instanceof ASN1Integer sInt)) {
      return null;
    }
    try {
      // Strict DER: the bytes must be exactly the canonical encoding (no BER lengths, no padding,
      // no trailing data), so one signature has one encoding.
      if (!Arrays.equals(sequence.getEncoded(ASN1Encoding.DER), der)) {
        return null;
      }
    } catch (final IOException e) {
      return null;
    }
    final BigInteger r = rInt.getValue();
    final BigInteger s = sInt.getValue();
    if (r.signum() <= 0 || s.signum() <= 0 || r.compareTo(N) >= 0 || s.compareTo(HALF_N) > 0) {
      return null;
    }
    return new BigInteger[] {r, s};
  }
}
