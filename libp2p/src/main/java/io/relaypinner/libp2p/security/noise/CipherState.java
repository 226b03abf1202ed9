package io.relaypinner.libp2p.security.noise;

import io.relaypinner.libp2p.core.InternalErrorException;
import io.relaypinner.libp2p.core.ProtocolViolationException;
import java.nio.ByteBuffer;
import java.security.GeneralSecurityException;
import javax.crypto.AEADBadTagException;
import javax.crypto.Cipher;
import javax.crypto.spec.IvParameterSpec;
import javax.crypto.spec.SecretKeySpec;

/**
 * A Noise {@code CipherState} (Noise Protocol Framework rev 34, §5.1) with the {@code ChaChaPoly}
 * cipher functions (§12.3): ChaCha20-Poly1305 (RFC 8439) whose 96-bit nonce is four zero bytes
 * followed by the 64-bit counter {@code n} in little-endian.
 *
 * <p>One JDK {@link Cipher} per instance, re-initialised with the next nonce for every message. The
 * JDK (17.0.15, both directions) refuses to re-initialise a ChaCha20-Poly1305 cipher with the key
 * and nonce it last used. The key is fixed per instance (a new {@code CipherState} for every {@code
 * MixKey} and {@code Split}) and {@code n} advances after every success; after a failed decryption,
 * where Noise keeps {@code n}, the cipher is replaced by a fresh instance. The JDK cipher measured
 * about twice as fast as BouncyCastle's {@code ChaCha20Poly1305} on JDK 17.
 *
 * <p>Not thread-safe: a transport {@code CipherState} is confined to its channel's event loop.
 * Rekey is not implemented (libp2p never rekeys).
 */
final class CipherState {
  static final int KEY_LENGTH = 32;
  static final int TAG_LENGTH = 16;
  private static final int NONCE_LENGTH = 12;

  /** 2<sup>64</sup>-1 as an unsigned long: Noise reserves it, so reaching it ends the session. */
  private static final long RESERVED_NONCE = -1L;

  private static final String TRANSFORMATION = "ChaCha20-Poly1305";

  private final SecretKeySpec key;
  private Cipher cipher;
  private final byte[] nonceBytes = new byte[NONCE_LENGTH];
  private long n;

  private CipherState(final byte[] k) {
    if (k == null) {
      this.key = null;
      this.cipher = null;
      return;
    }
    if (k.length != KEY_LENGTH) {
      throw new IllegalArgumentException("ChaChaPoly key of " + k.length + " bytes");
    }
    this.key = new SecretKeySpec(k, "ChaCha20");
    this.cipher = newCipher();
  }

  private static Cipher newCipher() {
    try {
      return Cipher.getInstance(TRANSFORMATION);
    } catch (final GeneralSecurityException e) {
      throw new InternalErrorException("JDK lacks " + TRANSFORMATION, e);
    }
  }

  /** {@code InitializeKey(empty)}: encryption is the identity function until a key is mixed in. */
  static CipherState empty() {
    return new CipherState(null);
  }

  /** {@code InitializeKey(k)} with {@code n = 0}. */
  static CipherState withKey(final byte[] k) {
    return new CipherState(k);
  }

  boolean hasKey() {
    return key != null;
  }

  /** The next nonce, as an unsigned 64-bit counter. */
  long nonce() {
    return n;
  }

  /** {@code EncryptWithAd(ad, plaintext)}: ciphertext followed by the 16-byte tag. */
  byte[] encryptWithAd(final byte[] ad, final byte[] plaintext) {
    if (!hasKey()) {
      return plaintext.clone();
    }
    final byte[] out = new byte[plaintext.length + TAG_LENGTH];
    init(Cipher.ENCRYPT_MODE, ad);
    try {
      cipher.doFinal(plaintext, 0, plaintext.length, out, 0);
    } catch (final GeneralSecurityException e) {
      throw new InternalErrorException("ChaCha20-Poly1305 encryption failed", e);
    }
    n++;
    return out;
  }

  /**
   * {@code DecryptWithAd(ad, ciphertext)}.
   *
   * @throws ProtocolViolationException when the message fails authentication (then {@code n} does
   *     not advance, as the spec requires) or is shorter than a tag
   */
  byte[] decryptWithAd(final byte[] ad, final byte[] ciphertext) {
    if (!hasKey()) {
      return ciphertext.clone();
    }
    if (ciphertext.length < TAG_LENGTH) {
      throw new ProtocolViolationException(
          "Noise ciphertext of " + ciphertext.length + " bytes is shorter than its tag");
    }
    final byte[] out = new byte[ciphertext.length - TAG_LENGTH];
    init(Cipher.DECRYPT_MODE, ad);
    try {
      cipher.doFinal(ciphertext, 0, ciphertext.length, out, 0);
    } catch (final AEADBadTagException e) {
      cipher = newCipher();
      throw new ProtocolViolationException("Noise message failed authentication", e);
    } catch (final GeneralSecurityException e) {
      throw new InternalErrorException("ChaCha20-Poly1305 decryption failed", e);
    }
    n++;
    return out;
  }

  /**
   * Transport encryption with empty associated data: reads all of {@code plaintext} and writes
   * {@code plaintext.remaining() + 16} bytes to {@code ciphertext}. Works on heap and direct
   * buffers, so Netty buffers are encrypted without an extra copy on our side.
   */
  void encrypt(final ByteBuffer plaintext, final ByteBuffer ciphertext) {
    requireKey();
    init(Cipher.ENCRYPT_MODE, null);
    try {
      cipher.doFinal(plaintext, ciphertext);
    } catch (final GeneralSecurityException e) {
      throw new InternalErrorException("ChaCha20-Poly1305 encryption failed", e);
    }
    n++;
  }

  /**
   * Transport decryption with empty associated data: reads all of {@code ciphertext} (tag included)
   * and writes {@code ciphertext.remaining() - 16} bytes to {@code plaintext}.
   *
   * @throws ProtocolViolationException when the message fails authentication
   */
  void decrypt(final ByteBuffer ciphertext, final ByteBuffer plaintext) {
    requireKey();
    if (ciphertext.remaining() < TAG_LENGTH) {
      throw new ProtocolViolationException(
          "Noise ciphertext of " + ciphertext.remaining() + " bytes is shorter than its tag");
    }
    init(Cipher.DECRYPT_MODE, null);
    try {
      cipher.doFinal(ciphertext, plaintext);
    } catch (final AEADBadTagException e) {
      cipher = newCipher();
      throw new ProtocolViolationException("Noise transport message failed authentication", e);
    } catch (final GeneralSecurityException e) {
      throw new InternalErrorException("ChaCha20-Poly1305 decryption failed", e);
    }
    n++;
  }

  private void requireKey() {
    if (!hasKey()) {
      throw new IllegalStateException("transport CipherState without a key");
    }
  }

  private void init(final int mode, final byte[] ad) {
    if (n == RESERVED_NONCE) {
      // Noise §5.1 and the libp2p spec: never reuse a nonce; the session must end.
      throw new InternalErrorException("Noise nonce space exhausted; the session must end");
    }
    long value = n;
    for (int i = 4; i < NONCE_LENGTH; i++) {
      nonceBytes[i] = (byte) value;
      value >>>= 8;
    }
    try {
      cipher.init(mode, key, new IvParameterSpec(nonceBytes));
    } catch (final GeneralSecurityException e) {
      throw new InternalErrorException("cannot initialise ChaCha20-Poly1305", e);
    }
    if (ad != null && ad.length > 0) {
      cipher.updateAAD(ad);
    }
  }

  /** Test hook: jumps the counter, to reach the reserved nonce without 2^64 messages. */
  void setNonceForTest(final long nonce) {
    this.n = nonce;
  }

  @Override
  public String toString() {
    return "CipherState[hasKey=" + hasKey() + ", n=" + Long.toUnsignedString(n) + "]";
  }
}
