package io.relaypinner.orbitdb.identity.webauthn;

import java.math.BigInteger;
import java.security.AlgorithmParameters;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.Signature;
import java.security.interfaces.ECPublicKey;
import java.security.spec.ECGenParameterSpec;
import java.security.spec.ECParameterSpec;
import java.security.spec.ECPoint;
import java.security.spec.ECPublicKeySpec;
import java.util.Arrays;
import java.util.Optional;

/**
 * NIST P-256 (secp256r1) as WebAuthn ES256 uses it: SEC1 points (65-byte uncompressed or 33-byte
 * compressed, validated on the curve) and ECDSA-SHA256 signatures in DER, parsed strictly: one
 * SEQUENCE of two minimal positive INTEGERs in {@code [1, n-1]}, short-form lengths, nothing
 * after. S may be in either half: authenticators do not normalise it, and every WebAuthn
 * verifier, browsers' WebCrypto included, accepts both ({@link WebAuthnConfig#requireLowS()} is
 * the opt-in policy that refuses the upper half).
 */
public final class P256 {
  /** The field prime. */
  static final BigInteger P = new BigInteger(
      "ffffffff00000001000000000000000000000000ffffffffffffffffffffffff", 16);
  /** The curve coefficient b (a = -3). */
  static final BigInteger B = new BigInteger(
      "5ac635d8aa3a93e7b3ebbd55769886bc651d06b0cc53b0f63bce3c3e27d2604b", 16);
  /** The group order. */
  public static final BigInteger N = new BigInteger(
      "ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551", 16);

  /** n / 2: a low-S signature has S at most this. */
  public static final BigInteger HALF_N = N.shiftRight(1);

  private static final ECParameterSpec SPEC = spec();

  private P256() {}

  private static ECParameterSpec spec() {
    try {
      final AlgorithmParameters parameters = AlgorithmParameters.getInstance("EC");
      parameters.init(new ECGenParameterSpec("secp256r1"));
      return parameters.getParameterSpec(ECParameterSpec.class);
    } catch (final GeneralSecurityException e) {
      throw new IllegalStateException("the JDK has no secp256r1", e);
    }
  }

  /** The 65-byte uncompressed SEC1 point of a valid 65- or 33-byte encoding, or empty. */
  public static Optional<byte[]> uncompressed(final byte[] sec1) {
    final BigInteger x;
    final BigInteger y;
    if (sec1.length == 65 && sec1[0] == 0x04) {
      x = new BigInteger(1, Arrays.copyOfRange(sec1, 1, 33));
      y = new BigInteger(1, Arrays.copyOfRange(sec1, 33, 65));
      if (x.compareTo(P) >= 0 || y.compareTo(P) >= 0 || !onCurve(x, y)) {
        return Optional.empty();
      }
    } else if (sec1.length == 33 && (sec1[0] == 0x02 || sec1[0] == 0x03)) {
      x = new BigInteger(1, Arrays.copyOfRange(sec1, 1, 33));
      if (x.compareTo(P) >= 0) {
        return Optional.empty();
      }
      final BigInteger rhs = x.pow(3).subtract(x.multiply(BigInteger.valueOf(3))).add(B).mod(P);
      // P = 3 mod 4: the square root is rhs^((P+1)/4), when one exists.
      BigInteger root = rhs.modPow(P.add(BigInteger.ONE).shiftRight(2), P);
      if (!root.multiply(root).mod(P).equals(rhs)) {
        return Optional.empty();
      }
      if (root.testBit(0) != (sec1[0] == 0x03)) {
        root = P.subtract(root).mod(P);
      }
      y = root;
    } else {
      return Optional.empty();
    }
    final byte[] out = new byte[65];
    out[0] = 0x04;
    fixed(x, out, 1);
    fixed(y, out, 33);
    return Optional.of(out);
  }

  private static boolean onCurve(final BigInteger x, final BigInteger y) {
    final BigInteger lhs = y.multiply(y).mod(P);
    final BigInteger rhs = x.pow(3).subtract(x.multiply(BigInteger.valueOf(3))).add(B).mod(P);
    return lhs.equals(rhs);
  }

  private static void fixed(final BigInteger value, final byte[] out, final int at) {
    final byte[] bytes = value.toByteArray();
    final int len = Math.min(bytes.length, 32);
    System.arraycopy(bytes, bytes.length - len, out, at + 32 - len, len);
  }

  /**
   * {@code (r, s)} of a strict DER ECDSA signature, or empty when it is not one: trailing bytes,
   * long-form or wrong lengths, non-minimal or negative integers, zero or at least n.
   */
  public static Optional<BigInteger[]> parseDer(final byte[] der) {
    if (der.length < 8 || der.length > 72 || der[0] != 0x30 || (der[1] & 0xff) != der.length - 2) {
      return Optional.empty();
    }
    int at = 2;
    final BigInteger[] rs = new BigInteger[2];
    for (int i = 0; i < 2; i++) {
      if (at + 2 > der.length || der[at] != 0x02) {
        return Optional.empty();
      }
      final int len = der[at + 1] & 0xff;
      at += 2;
      if (len == 0 || len > 33 || at + len > der.length) {
        return Optional.empty();
      }
      if ((der[at] & 0x80) != 0) {
        return Optional.empty();
      }
      if (len > 1 && der[at] == 0 && (der[at + 1] & 0x80) == 0) {
        return Optional.empty();
      }
      rs[i] = new BigInteger(1, Arrays.copyOfRange(der, at, at + len));
      if (rs[i].signum() == 0 || rs[i].compareTo(N) >= 0) {
        return Optional.empty();
      }
      at += len;
    }
    return at == der.length ? Optional.of(rs) : Optional.empty();
  }

  /**
   * Whether {@code der} is a strict DER ECDSA-SHA256 signature of {@code data} by the SEC1 key
   * {@code point} (65 or 33 bytes).
   */
  public static boolean verify(final byte[] point, final byte[] data, final byte[] der) {
    if (parseDer(der).isEmpty()) {
      return false;
    }
    final Optional<byte[]> full = uncompressed(point);
    if (full.isEmpty()) {
      return false;
    }
    try {
      final byte[] xy = full.get();
      final ECPoint w = new ECPoint(new BigInteger(1, Arrays.copyOfRange(xy, 1, 33)),
          new BigInteger(1, Arrays.copyOfRange(xy, 33, 65)));
      final ECPublicKey key = (ECPublicKey) KeyFactory.getInstance("EC")
          .generatePublic(new ECPublicKeySpec(w, SPEC));
      final Signature verifier = Signature.getInstance("SHA256withECDSA");
      verifier.initVerify(key);
      verifier.update(data);
      return verifier.verify(der);
    } catch (final GeneralSecurityException | RuntimeException e) {
      return false;
    }
  }
}
