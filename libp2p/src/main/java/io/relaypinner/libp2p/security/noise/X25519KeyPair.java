package io.relaypinner.libp2p.security.noise;

import io.relaypinner.libp2p.core.ProtocolViolationException;
import java.security.SecureRandom;
import java.util.HexFormat;
import org.bouncycastle.crypto.params.X25519PrivateKeyParameters;
import org.bouncycastle.crypto.params.X25519PublicKeyParameters;

/**
 * An X25519 key pair for the Noise {@code 25519} DH functions (Noise Protocol Framework rev 34,
 * §12.1; RFC 7748). Keys are the raw 32-byte little-endian encodings that travel in handshake
 * messages. Uses the BouncyCastle lightweight API because it takes raw key bytes directly, which
 * the JDK's {@code XDH} provider only does through {@code XECPublicKeySpec} conversions.
 */
final class X25519KeyPair {
  /** Bytes of a public key, a private key and a DH output ({@code DHLEN}). */
  static final int KEY_LENGTH = 32;

  private final X25519PrivateKeyParameters privateKey;
  private final byte[] publicKey;

  private X25519KeyPair(final X25519PrivateKeyParameters privateKey) {
    this.privateKey = privateKey;
    this.publicKey = privateKey.generatePublicKey().getEncoded();
  }

  /** A fresh key pair. */
  static X25519KeyPair generate(final SecureRandom random) {
    return new X25519KeyPair(new X25519PrivateKeyParameters(random));
  }

  /** The key pair of a raw 32-byte private key (clamping happens inside the scalar multiply). */
  static X25519KeyPair fromPrivateKey(final byte[] raw) {
    if (raw.length != KEY_LENGTH) {
      throw new IllegalArgumentException(
          "X25519 private key of " + raw.length + " bytes, expected " + KEY_LENGTH);
    }
    return new X25519KeyPair(new X25519PrivateKeyParameters(raw, 0));
  }

  byte[] publicKey() {
    return publicKey.clone();
  }

  /**
   * {@code DH(this, remotePublicKey)}.
   *
   * @throws ProtocolViolationException when the remote key is a low-order point, which makes the
   *     shared secret all zeros; Noise §12.1 lets implementations signal an error there, and a peer
   *     that sends such a key is either broken or attacking the key exchange
   */
  byte[] dh(final byte[] remotePublicKey) {
    if (remotePublicKey.length != KEY_LENGTH) {
      throw new ProtocolViolationException(
          "X25519 public key of " + remotePublicKey.length + " bytes, expected " + KEY_LENGTH);
    }
    final byte[] shared = new byte[KEY_LENGTH];
    try {
      privateKey.generateSecret(new X25519PublicKeyParameters(remotePublicKey, 0), shared, 0);
    } catch (final IllegalStateException e) {
      throw new ProtocolViolationException("remote X25519 key is a low-order point", e);
    }
    return shared;
  }

  @Override
  public String toString() {
    return "X25519KeyPair[public=" + HexFormat.of().formatHex(publicKey) + "]";
  }
}
