package io.relaypinner.libp2p.crypto;

import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.Arrays;
import org.bouncycastle.crypto.params.Ed25519PrivateKeyParameters;
import org.bouncycastle.crypto.signers.Ed25519Signer;

/**
 * An Ed25519 private key. libp2p marshals it as seed || public key (64 bytes); a bare 32-byte seed
 * is accepted too.
 */
public final class Ed25519PrivateKey implements PrivateKey {
  /** Bytes of an Ed25519 seed. */
  public static final int SEED_LENGTH = 32;

  private final Ed25519PrivateKeyParameters params;
  private final Ed25519PublicKey publicKey;

  private Ed25519PrivateKey(final byte[] seed) {
    this.params = new Ed25519PrivateKeyParameters(seed, 0);
    this.publicKey = new Ed25519PublicKey(params.generatePublicKey().getEncoded());
  }

  /** A fresh key from {@code random}. */
  public static Ed25519PrivateKey generate(final SecureRandom random) {
    final byte[] seed = new byte[SEED_LENGTH];
    random.nextBytes(seed);
    return new Ed25519PrivateKey(seed);
  }

  /** The key with this 32-byte seed (RFC 8032 private key). */
  public static Ed25519PrivateKey fromSeed(final byte[] seed) {
    if (seed.length != SEED_LENGTH) {
      throw new KeyFormatException(
          "Ed25519 seed of " + seed.length + " bytes, expected " + SEED_LENGTH);
    }
    return new Ed25519PrivateKey(seed);
  }

  /** Decodes the protobuf {@code Data}: seed || public key (checked), or a bare seed. */
  static Ed25519PrivateKey fromRaw(final byte[] raw) {
    if (raw.length == SEED_LENGTH) {
      return new Ed25519PrivateKey(raw);
    }
    if (raw.length != SEED_LENGTH + Ed25519PublicKey.LENGTH) {
      throw new KeyFormatException(
          "Ed25519 private key of " + raw.length + " bytes, expected 64 (seed || public key)");
    }
    final byte[] seed = Arrays.copyOfRange(raw, 0, SEED_LENGTH);
    final Ed25519PrivateKey key = new Ed25519PrivateKey(seed);
    final byte[] embedded = Arrays.copyOfRange(raw, SEED_LENGTH, raw.length);
    if (!MessageDigest.isEqual(embedded, key.publicKey.raw())) {
      throw new KeyFormatException("Ed25519 private key: embedded public key does not match seed");
    }
    return key;
  }

  @Override
  public KeyType type() {
    return KeyType.ED25519;
  }

  @Override
  public Ed25519PublicKey publicKey() {
    return publicKey;
  }

  @Override
  public byte[] raw() {
    final byte[] out = new byte[SEED_LENGTH + Ed25519PublicKey.LENGTH];
    params.encode(out, 0);
    System.arraycopy(publicKey.raw(), 0, out, SEED_LENGTH, Ed25519PublicKey.LENGTH);
    return out;
  }

  @Override
  public byte[] sign(final byte[] data) {
    final Ed25519Signer signer = new Ed25519Signer();
    signer.init(true, params);
    signer.update(data, 0, data.length);
    return signer.generateSignature();
  }

  @Override
  public String toString() {
    return "Ed25519PrivateKey[" + publicKey.peerId() + "]";
  }
}
