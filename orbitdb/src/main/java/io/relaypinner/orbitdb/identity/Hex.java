package io.relaypinner.orbitdb.identity;

import io.relaypinner.libp2p.crypto.Ed25519PublicKey;
import io.relaypinner.libp2p.crypto.KeyFormatException;
import io.relaypinner.libp2p.crypto.KeyType;
import io.relaypinner.libp2p.crypto.Keys;
import io.relaypinner.libp2p.crypto.PublicKey;
import io.relaypinner.libp2p.crypto.Secp256k1PublicKey;
import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * Hex strings as OrbitDB writes them (lower case, as {@code uint8arrays} base16 reads them) and
 * the {@code publicKeyFromRaw} / {@code verifyMessage} rules of its key store: a 33-byte key is
 * secp256k1 (signature: DER ECDSA over SHA-256, low S), a 32-byte key Ed25519.
 */
public final class Hex {
  /** Longest hex string decoded (keys and signatures are far shorter). */
  public static final int MAX_LENGTH = 1024;

  private static final HexFormat HEX = HexFormat.of();

  private Hex() {}

  /** The bytes of a lower-case hex string, or empty when it is not one. */
  public static Optional<byte[]> decode(final String hex) {
    if (hex.length() > MAX_LENGTH || (hex.length() & 1) != 0) {
      return Optional.empty();
    }
    for (int i = 0; i < hex.length(); i++) {
      final char c = hex.charAt(i);
      if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) {
        return Optional.empty();
      }
    }
    return Optional.of(HEX.parseHex(hex));
  }

  /** Lower-case hex. */
  public static String encode(final byte[] bytes) {
    return HEX.formatHex(bytes);
  }

  /** Parsed keys remembered ({@link #publicKey}): a writer signs many entries with one key. */
  static final int KEY_CACHE_SIZE = 1024;
  private static final Map<String, PublicKey> KEYS = Collections.synchronizedMap(
      new LinkedHashMap<>(64, 0.75f, true) {
        private static final long serialVersionUID = 1L;

        @Override
        protected boolean removeEldestEntry(final Map.Entry<String, PublicKey> eldest) {
          return size() > KEY_CACHE_SIZE;
        }
      });

  /**
   * The key a hex public key names, by length, or empty when it is none. Valid keys are
   * remembered (an LRU of {@link #KEY_CACHE_SIZE}): parsing a secp256k1 key decompresses its
   * point, and the same key object keeps the curve library's tables for its point, so each
   * further signature of that writer verifies faster.
   */
  public static Optional<PublicKey> publicKey(final String hex) {
    final PublicKey known = KEYS.get(hex);
    if (known != null) {
      return Optional.of(known);
    }
    final Optional<PublicKey> parsed = parsePublicKey(hex);
    parsed.ifPresent(key -> KEYS.put(hex, key));
    return parsed;
  }

  private static Optional<PublicKey> parsePublicKey(final String hex) {
    final byte[] raw = decode(hex).orElse(null);
    if (raw == null) {
      return Optional.empty();
    }
    try {
      if (raw.length == Secp256k1PublicKey.LENGTH) {
        return Optional.of(Keys.publicKey(KeyType.SECP256K1, raw));
      }
      if (raw.length == Ed25519PublicKey.LENGTH) {
        return Optional.of(Keys.publicKey(KeyType.ED25519, raw));
      }
      return Optional.empty();
    } catch (final KeyFormatException e) {
      return Optional.empty();
    }
  }

  /**
   * OrbitDB's {@code verifyMessage(signature, publicKey, data)}: hex signature by the hex key
   * over {@code data}.
   */
  public static boolean verify(final String signatureHex, final String publicKeyHex,
      final byte[] data) {
    final Optional<PublicKey> key = publicKey(publicKeyHex);
    final Optional<byte[]> signature = decode(signatureHex);
    return key.isPresent() && signature.isPresent() && key.get().verify(data, signature.get());
  }

  /** {@link #verify} over the UTF-8 bytes of a string message. */
  public static boolean verify(final String signatureHex, final String publicKeyHex,
      final String message) {
    return verify(signatureHex, publicKeyHex, message.getBytes(StandardCharsets.UTF_8));
  }
}
