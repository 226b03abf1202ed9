package io.relaypinner.orbitdb.identity.webauthn;

import io.relaypinner.libp2p.crypto.Ed25519PublicKey;
import io.relaypinner.libp2p.crypto.KeyFormatException;
import io.relaypinner.libp2p.crypto.KeyType;
import io.relaypinner.libp2p.crypto.Keys;
import io.relaypinner.multiformats.Base58;
import io.relaypinner.multiformats.Uvarint;
import java.util.Arrays;
import java.util.Optional;

/**
 * A passkey's public key: P-256 (kept as the 65-byte uncompressed SEC1 point) or Ed25519 (32
 * bytes), as a {@code did:key} names it (multicodec {@code 0x1200} with a compressed or
 * uncompressed point, or {@code 0xed}) and as the varsig identities carry it raw.
 *
 * @param algorithm the signature algorithm
 * @param raw the uncompressed P-256 point or the Ed25519 key
 */
public record PasskeyKey(Algorithm algorithm, byte[] raw) {
  /** The algorithms passkeys sign with here. */
  public enum Algorithm {
    /** ECDSA on P-256 with SHA-256, DER signatures (COSE ES256). */
    P256,
    /** Ed25519 (COSE EdDSA). */
    ED25519
  }

  /** The did:key prefix with its base58btc multibase character. */
  public static final String DID_KEY_PREFIX = "did:key:z";

  private static final long P256_PUB = 0x1200;
  private static final long ED25519_PUB = 0xed;
  private static final int MAX_DID_LENGTH = 160;

  public PasskeyKey {
    raw = raw.clone();
  }

  @Override
  public byte[] raw() {
    return raw.clone();
  }

  /** The key a {@code did:key} names when it is a P-256 or Ed25519 one, or empty. */
  public static Optional<PasskeyKey> fromDidKey(final String did) {
    if (did.length() > MAX_DID_LENGTH || !did.startsWith(DID_KEY_PREFIX)) {
      return Optional.empty();
    }
    try {
      final byte[] bytes = Base58.decode(did.substring(DID_KEY_PREFIX.length()));
      final long codec = Uvarint.read(bytes, 0, bytes.length);
      final byte[] key = Arrays.copyOfRange(bytes, Uvarint.size(codec), bytes.length);
      if (codec == P256_PUB) {
        return P256.uncompressed(key).map(k -> new PasskeyKey(Algorithm.P256, k));
      }
      if (codec == ED25519_PUB) {
        return fromRaw(key).filter(k -> k.algorithm == Algorithm.ED25519);
      }
      return Optional.empty();
    } catch (final IllegalArgumentException e) {
      return Optional.empty();
    }
  }

  /**
   * The key of raw bytes as the varsig and worker identities hold them: a 65-byte uncompressed
   * P-256 point or a 32-byte Ed25519 key (valid points only), or empty.
   */
  public static Optional<PasskeyKey> fromRaw(final byte[] raw) {
    if (raw.length == 65) {
      return P256.uncompressed(raw).map(k -> new PasskeyKey(Algorithm.P256, k));
    }
    if (raw.length == Ed25519PublicKey.LENGTH) {
      try {
        Keys.publicKey(KeyType.ED25519, raw);
        return Optional.of(new PasskeyKey(Algorithm.ED25519, raw));
      } catch (final KeyFormatException e) {
        return Optional.empty();
      }
    }
    return Optional.empty();
  }

  /** Whether {@code signature} is this key's signature of {@code data} (P-256: strict DER). */
  public boolean verify(final byte[] data, final byte[] signature) {
    if (algorithm == Algorithm.P256) {
      return P256.verify(raw, data, signature);
    }
    if (signature.length != Ed25519PublicKey.SIGNATURE_LENGTH) {
      return false;
    }
    try {
      return Keys.publicKey(KeyType.ED25519, raw).verify(data, signature);
    } catch (final KeyFormatException e) {
      return false;
    }
  }

  /**
   * Whether {@code signature} is a P-256 DER signature whose S lies in the upper half of the group
   * order (the malleable twin of a low-S one). Ed25519 signatures are never high S: the verifier
   * refuses an S at or above the group order.
   */
  public boolean highS(final byte[] signature) {
    return algorithm == Algorithm.P256 && P256.parseDer(signature)
        .map(rs -> rs[1].compareTo(P256.HALF_N) > 0).orElse(false);
  }

  /** Same algorithm and key. */
  public boolean sameKey(final PasskeyKey other) {
    return algorithm == other.algorithm && Arrays.equals(raw, other.raw);
  }

  @Override
  public boolean equals(final Object o) {
    return o instanceof PasskeyKey other && sameKey(other);
  }

  @Override
  public int hashCode() {
    return algorithm.hashCode() * 31 + Arrays.hashCode(raw);
  }

  @Override
  public String toString() {
    return "PasskeyKey[" + algorithm + "]";
  }
}
