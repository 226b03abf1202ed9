package io.relaypinner.orbitdb.identity.webauthn;

import io.relaypinner.multiformats.Uvarint;
import java.util.Arrays;
import java.util.Optional;

/**
 * The WebAuthn varsig v1 envelope of {@code iso-webauthn-varsig} (the provider's
 * {@code webauthn-varsig} signatures): {@code 0x34 0x01}, then varints inner algorithm
 * ({@code 0xec} ECDSA / {@code 0xed} EdDSA), curve ({@code 0x1200} P-256 / {@code 0xed01}
 * Ed25519, or {@code 0xed} as iso-webauthn-varsig 0.3 writes it), the WebAuthn marker
 * {@code 0x300001}, then {@code varint(len) clientDataJSON}, {@code varint(len)
 * authenticatorData}, varints hash ({@code 0x12}, SHA-256) and payload encoding ({@code 0x5f},
 * raw), and the signature to the end.
 *
 * <p>Nothing in the header is signed (the authenticator signs only {@code authenticatorData ||
 * SHA-256(clientDataJSON)}): the algorithm that counts is the identity key's, and a header that
 * names another is refused.
 *
 * @param algorithm the algorithm the header names
 * @param assertion the WebAuthn assertion it carries
 */
public record Varsig(PasskeyKey.Algorithm algorithm, Assertion assertion) {
  /** Largest envelope accepted. */
  public static final int MAX_LENGTH = Assertion.MAX_AUTHENTICATOR_DATA
      + Assertion.MAX_CLIENT_DATA + Assertion.MAX_SIGNATURE + 32;

  private static final long INNER_ECDSA = 0xec;
  private static final long INNER_EDDSA = 0xed;
  private static final long CURVE_P256 = 0x1200;
  private static final long CURVE_ED25519 = 0xed01;
  private static final long CURVE_ED25519_V03 = 0xed;
  private static final long WEBAUTHN_MARKER = 0x300001;
  private static final long HASH_SHA256 = 0x12;
  private static final long ENCODING_RAW = 0x5f;

  /** The envelope's parts, or empty when it is not a WebAuthn varsig v1. */
  public static Optional<Varsig> decode(final byte[] bytes) {
    if (bytes.length < 8 || bytes.length > MAX_LENGTH || bytes[0] != 0x34 || bytes[1] != 0x01) {
      return Optional.empty();
    }
    try {
      final int[] at = {2};
      final long inner = next(bytes, at);
      final long curve = next(bytes, at);
      final PasskeyKey.Algorithm algorithm;
      if (inner == INNER_ECDSA && curve == CURVE_P256) {
        algorithm = PasskeyKey.Algorithm.P256;
      } else if (inner == INNER_EDDSA && (curve == CURVE_ED25519 || curve == CURVE_ED25519_V03)) {
        algorithm = PasskeyKey.Algorithm.ED25519;
      } else {
        return Optional.empty();
      }
      if (next(bytes, at) != WEBAUTHN_MARKER) {
        return Optional.empty();
      }
      final byte[] clientData = field(bytes, at, Assertion.MAX_CLIENT_DATA);
      final byte[] authData = field(bytes, at, Assertion.MAX_AUTHENTICATOR_DATA);
      if (clientData == null || authData == null || next(bytes, at) != HASH_SHA256
          || next(bytes, at) != ENCODING_RAW) {
        return Optional.empty();
      }
      final byte[] signature = Arrays.copyOfRange(bytes, at[0], bytes.length);
      if (signature.length == 0 || signature.length > Assertion.MAX_SIGNATURE) {
        return Optional.empty();
      }
      return Optional.of(new Varsig(algorithm, new Assertion(authData, clientData, signature)));
    } catch (final IllegalArgumentException | IndexOutOfBoundsException e) {
      return Optional.empty();
    }
  }

  private static long next(final byte[] bytes, final int[] at) {
    final long value = Uvarint.read(bytes, at[0], bytes.length);
    at[0] += Uvarint.size(value);
    return value;
  }

  private static byte[] field(final byte[] bytes, final int[] at, final int max) {
    final long len = next(bytes, at);
    if (len <= 0 || len > max || at[0] + len > bytes.length) {
      return null;
    }
    final byte[] out = Arrays.copyOfRange(bytes, at[0], at[0] + (int) len);
    at[0] += (int) len;
    return out;
  }
}
