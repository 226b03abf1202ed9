package io.relaypinner.libp2p.crypto;

import java.util.Arrays;
import org.bouncycastle.crypto.params.Ed25519PublicKeyParameters;
import org.bouncycastle.crypto.signers.Ed25519Signer;

/** An Ed25519 public key; signatures are plain RFC 8032 Ed25519 over the message. */
public final class Ed25519PublicKey implements PublicKey {
  /** Bytes of a raw Ed25519 public key. */
  public static final int LENGTH = 32;
  /** Bytes of an Ed25519 signature. */
  public static final int SIGNATURE_LENGTH = 64;

  private final byte[] raw;
  private final Ed25519PublicKeyParameters params;

  Ed25519PublicKey(final byte[] raw) {
    if (raw.length != LENGTH) {
      throw new KeyFormatException(
          "Ed25519 public key of " + raw.length + " bytes, expected " + LENGTH);
    }
    this.raw = raw.clone();
    try {
      this.params = new Ed25519PublicKeyParameters(this.raw, 0);
    } catch (final IllegalArgumentException e) {
      throw new KeyFormatException("Ed25519 public key is not a valid curve point", e);
    }
  }

  @Override
  public KeyType type() {
    return KeyType.ED25519;
  }

  @Override
  public byte[] raw() {
    return raw.clone();
  }

  @Override
  public boolean verify(final byte[] data, final byte[] signature) {
    if (signature == null || signature.length != SIGNATURE_LENGTH) {
      return false;
    }
    final Ed25519Signer verifier = new Ed25519Signer();
    verifier.init(false, params);
    verifier.update(data, 0, data.length);
    return verifier.verifySignature(signature);
  }

  @Override
  public boolean equals(final Object o) {
    return o instanceof Ed25519PublicKey other && Arrays.equals(raw, other.raw);
  }

  @Override
  public int hashCode() {
    return Arrays.hashCode(raw);
  }

  @Override
  public String toString() {
    return "Ed25519PublicKey[" + peerId() + "]";
  }
}
