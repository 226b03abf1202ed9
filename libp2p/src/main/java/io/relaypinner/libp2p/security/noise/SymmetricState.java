package io.relaypinner.libp2p.security.noise;

import io.relaypinner.libp2p.core.InternalErrorException;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * A Noise {@code SymmetricState} (Noise Protocol Framework rev 34, §5.2) with the {@code SHA256}
 * hash functions (§12.5): the chaining key {@code ck}, the handshake hash {@code h} and the current
 * {@link CipherState}. {@code HKDF} is the §4.3 construction over HMAC-SHA256 (JDK 17 has no HKDF
 * API); only the two-output form is needed because XX carries no PSK.
 */
final class SymmetricState {
  static final int HASH_LENGTH = 32;
  private static final String HMAC = "HmacSHA256";

  private final MessageDigest sha256;
  private final Mac hmac;
  private byte[] ck;
  private byte[] h;
  private CipherState cs;

  /** {@code InitializeSymmetric(protocolName)}. */
  SymmetricState(final String protocolName) {
    try {
      this.sha256 = MessageDigest.getInstance("SHA-256");
      this.hmac = Mac.getInstance(HMAC);
    } catch (final GeneralSecurityException e) {
      throw new InternalErrorException("JDK lacks SHA-256/HMAC-SHA256", e);
    }
    final byte[] name = protocolName.getBytes(StandardCharsets.US_ASCII);
    if (name.length <= HASH_LENGTH) {
      // A name of at most HASHLEN bytes is zero-padded, not hashed. The libp2p name
      // "Noise_XX_25519_ChaChaPoly_SHA256" is exactly 32 bytes, so it is used as is.
      h = new byte[HASH_LENGTH];
      System.arraycopy(name, 0, h, 0, name.length);
    } else {
      h = sha256.digest(name);
    }
    ck = h.clone();
    cs = CipherState.empty();
  }

  void mixHash(final byte[] data) {
    sha256.update(h);
    sha256.update(data);
    h = sha256.digest();
  }

  void mixKey(final byte[] inputKeyMaterial) {
    final byte[][] out = hkdf(ck, inputKeyMaterial);
    ck = out[0];
    cs = CipherState.withKey(out[1]);
  }

  boolean hasKey() {
    return cs.hasKey();
  }

  byte[] encryptAndHash(final byte[] plaintext) {
    final byte[] ciphertext = cs.encryptWithAd(h, plaintext);
    mixHash(ciphertext);
    return ciphertext;
  }

  byte[] decryptAndHash(final byte[] ciphertext) {
    final byte[] plaintext = cs.decryptWithAd(h, ciphertext);
    mixHash(ciphertext);
    return plaintext;
  }

  /**
   * {@code Split()}: the first state encrypts the initiator's messages, the second the responder's.
   */
  CipherState[] split() {
    final byte[][] out = hkdf(ck, new byte[0]);
    return new CipherState[] {CipherState.withKey(out[0]), CipherState.withKey(out[1])};
  }

  byte[] handshakeHash() {
    return h.clone();
  }

  /** {@code HKDF(chainingKey, inputKeyMaterial, 2)} of Noise §4.3. */
  private byte[][] hkdf(final byte[] chainingKey, final byte[] inputKeyMaterial) {
    final byte[] tempKey = hmac(chainingKey, inputKeyMaterial);
    final byte[] output1 = hmac(tempKey, new byte[] {0x01});
    final byte[] input2 = new byte[HASH_LENGTH + 1];
    System.arraycopy(output1, 0, input2, 0, HASH_LENGTH);
    input2[HASH_LENGTH] = 0x02;
    final byte[] output2 = hmac(tempKey, input2);
    return new byte[][] {output1, output2};
  }

  private byte[] hmac(final byte[] key, final byte[] data) {
    try {
      hmac.init(new SecretKeySpec(key, HMAC));
    } catch (final GeneralSecurityException e) {
      throw new InternalErrorException("cannot initialise HMAC-SHA256", e);
    }
    return hmac.doFinal(data);
  }
}
