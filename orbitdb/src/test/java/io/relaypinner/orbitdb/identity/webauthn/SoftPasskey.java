package io.relaypinner.orbitdb.identity.webauthn;

import io.relaypinner.multiformats.Base58;
import io.relaypinner.multiformats.Uvarint;
import java.io.ByteArrayOutputStream;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.MessageDigest;
import java.security.Signature;
import java.security.interfaces.ECPublicKey;
import java.security.spec.ECGenParameterSpec;
import java.util.Arrays;
import java.util.Base64;

/**
 * A passkey for crafting attacks in tests: a P-256 or Ed25519 key pair that makes WebAuthn
 * assertions over any challenge, for any origin, rpId and flags, and wraps them in varsig
 * envelopes. The valid cases come from the real provider (resources webauthn/vectors.json).
 */
final class SoftPasskey {
  static final int UP = 0x01;
  static final int UV = 0x04;

  final PasskeyKey.Algorithm algorithm;
  private final KeyPair pair;
  final byte[] publicKey;

  SoftPasskey(final PasskeyKey.Algorithm algorithm) {
    this.algorithm = algorithm;
    try {
      if (algorithm == PasskeyKey.Algorithm.P256) {
        final KeyPairGenerator generator = KeyPairGenerator.getInstance("EC");
        generator.initialize(new ECGenParameterSpec("secp256r1"));
        pair = generator.generateKeyPair();
        final ECPublicKey pub = (ECPublicKey) pair.getPublic();
        publicKey = new byte[65];
        publicKey[0] = 4;
        fixed(pub.getW().getAffineX(), publicKey, 1);
        fixed(pub.getW().getAffineY(), publicKey, 33);
      } else {
        pair = KeyPairGenerator.getInstance("Ed25519").generateKeyPair();
        final byte[] spki = pair.getPublic().getEncoded();
        publicKey = Arrays.copyOfRange(spki, spki.length - 32, spki.length);
      }
    } catch (final GeneralSecurityException e) {
      throw new IllegalStateException(e);
    }
  }

  private static void fixed(final BigInteger value, final byte[] out, final int at) {
    final byte[] bytes = value.toByteArray();
    final int len = Math.min(bytes.length, 32);
    System.arraycopy(bytes, bytes.length - len, out, at + 32 - len, len);
  }

  /** did:key with the uncompressed P-256 point (webauthn mode) or the Ed25519 key. */
  String didKey() {
    return did(algorithm == PasskeyKey.Algorithm.P256 ? 0x1200 : 0xed, publicKey);
  }

  static String did(final long codec, final byte[] key) {
    final byte[] prefix = Uvarint.encode(codec);
    final byte[] all = new byte[prefix.length + key.length];
    System.arraycopy(prefix, 0, all, 0, prefix.length);
    System.arraycopy(key, 0, all, prefix.length, key.length);
    return "did:key:z" + Base58.encode(all);
  }

  /** did:key with the compressed P-256 point, as varsig identities name P-256 keys. */
  String compressedDidKey() {
    if (algorithm != PasskeyKey.Algorithm.P256) {
      return didKey();
    }
    final byte[] compressed = new byte[33];
    compressed[0] = (byte) ((publicKey[64] & 1) == 0 ? 2 : 3);
    System.arraycopy(publicKey, 1, compressed, 1, 32);
    return did(0x1200, compressed);
  }

  Assertion assertion(final byte[] challenge, final String origin, final String rpId,
      final int flags) {
    final byte[] authData = new byte[37];
    System.arraycopy(sha256(rpId.getBytes(StandardCharsets.UTF_8)), 0, authData, 0, 32);
    authData[32] = (byte) flags;
    authData[36] = 1;
    final byte[] clientData = ("{\"type\":\"webauthn.get\",\"challenge\":\""
        + Base64.getUrlEncoder().withoutPadding().encodeToString(challenge) + "\",\"origin\":\""
        + origin + "\",\"crossOrigin\":false}").getBytes(StandardCharsets.UTF_8);
    final byte[] signed = new byte[authData.length + 32];
    System.arraycopy(authData, 0, signed, 0, authData.length);
    System.arraycopy(sha256(clientData), 0, signed, authData.length, 32);
    return new Assertion(authData, clientData, sign(signed));
  }

  byte[] sign(final byte[] data) {
    try {
      final Signature signer = Signature.getInstance(
          algorithm == PasskeyKey.Algorithm.P256 ? "SHA256withECDSA" : "Ed25519");
      signer.initSign(pair.getPrivate());
      signer.update(data);
      return signer.sign();
    } catch (final GeneralSecurityException e) {
      throw new IllegalStateException(e);
    }
  }

  /** The varsig v1 envelope of an assertion, as iso-webauthn-varsig 0.2 writes it. */
  static byte[] varsig(final PasskeyKey.Algorithm algorithm, final Assertion assertion) {
    final ByteArrayOutputStream out = new ByteArrayOutputStream();
    out.writeBytes(new byte[] {0x34, 0x01});
    out.writeBytes(Uvarint.encode(algorithm == PasskeyKey.Algorithm.P256 ? 0xec : 0xed));
    out.writeBytes(Uvarint.encode(algorithm == PasskeyKey.Algorithm.P256 ? 0x1200 : 0xed01));
    out.writeBytes(Uvarint.encode(0x300001));
    out.writeBytes(Uvarint.encode(assertion.clientDataJSON().length));
    out.writeBytes(assertion.clientDataJSON());
    out.writeBytes(Uvarint.encode(assertion.authenticatorData().length));
    out.writeBytes(assertion.authenticatorData());
    out.writeBytes(Uvarint.encode(0x12));
    out.writeBytes(Uvarint.encode(0x5f));
    out.writeBytes(assertion.signature());
    return out.toByteArray();
  }

  /** A varsig over {@code payload} under {@code label} (0.3.1 challenge). */
  byte[] varsigOver(final byte[] payload, final String label, final String origin,
      final String rpId, final int flags) {
    final byte[] challenge = sha256(concat(label.getBytes(StandardCharsets.UTF_8), payload));
    return varsig(algorithm, assertion(challenge, origin, rpId, flags));
  }

  static byte[] concat(final byte[] a, final byte[] b) {
    final byte[] out = Arrays.copyOf(a, a.length + b.length);
    System.arraycopy(b, 0, out, a.length, b.length);
    return out;
  }

  static byte[] sha256(final byte[] data) {
    try {
      return MessageDigest.getInstance("SHA-256").digest(data);
    } catch (final GeneralSecurityException e) {
      throw new IllegalStateException(e);
    }
  }
}
