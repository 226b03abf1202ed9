package io.relaypinner.libp2p.http;

import io.relaypinner.libp2p.crypto.KeyFormatException;
import io.relaypinner.libp2p.crypto.Keys;
import io.relaypinner.libp2p.crypto.PrivateKey;
import io.relaypinner.libp2p.crypto.PublicKey;
import io.relaypinner.multiformats.Uvarint;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.Map;
import java.util.TreeMap;

/**
 * The signing rule of libp2p/specs http/peer-id-auth.md r1: a signature covers the string
 * {@code libp2p-PeerID} followed by the given parameters sorted by name, each as
 * {@code varint(len) || name=value} (strings UTF-8, byte values as they are). Base64 is the URL
 * alphabet; padding is written and optional on input.
 */
public final class PeerIdAuth {
  static final byte[] PREFIX = AuthParams.SCHEME.getBytes(StandardCharsets.US_ASCII);
  /** Challenges: 32 random bytes, base64url (the go-libp2p size). */
  public static final int CHALLENGE_BYTES = 32;
  /** Longest decoded signature or public key accepted (RSA keys are not used here). */
  static final int MAX_DECODED = 1024;

  private PeerIdAuth() {}

  /** The bytes a signature covers. Values are {@code String} (UTF-8) or {@code byte[]}. */
  public static byte[] dataToSign(final Map<String, ?> params) {
    final ByteArrayOutputStream out = new ByteArrayOutputStream();
    out.writeBytes(PREFIX);
    for (final Map.Entry<String, ?> e : new TreeMap<>(params).entrySet()) {
      final byte[] name = (e.getKey() + "=").getBytes(StandardCharsets.UTF_8);
      final byte[] value = e.getValue() instanceof byte[] bytes ? bytes
          : e.getValue().toString().getBytes(StandardCharsets.UTF_8);
      out.writeBytes(Uvarint.encode(name.length + value.length));
      out.writeBytes(name);
      out.writeBytes(value);
    }
    return out.toByteArray();
  }

  /** A base64url signature over the parameters. */
  public static String sign(final PrivateKey key, final Map<String, ?> params) {
    return encode(key.sign(dataToSign(params)));
  }

  /** Whether {@code signature} (base64url) is {@code key}'s over the parameters; never throws. */
  public static boolean verify(final PublicKey key, final String signature,
      final Map<String, ?> params) {
    final byte[] sig;
    try {
      sig = decode(signature);
    } catch (final PeerIdAuthException e) {
      return false;
    }
    return key.verify(dataToSign(params), sig);
  }

  /** A fresh challenge. */
  public static String newChallenge(final SecureRandom random) {
    final byte[] bytes = new byte[CHALLENGE_BYTES];
    random.nextBytes(bytes);
    return encode(bytes);
  }

  public static String encode(final byte[] bytes) {
    return Base64.getUrlEncoder().encodeToString(bytes);
  }

  /**
   * Base64url with or without padding, bounded.
   *
   * @throws PeerIdAuthException when it is not base64url or decodes to more than 1 KiB
   */
  public static byte[] decode(final String text) throws PeerIdAuthException {
    if (text == null || text.length() > MAX_DECODED * 4 / 3 + 4) {
      throw new PeerIdAuthException("base64 value missing or too long");
    }
    String unpadded = text;
    while (unpadded.endsWith("=")) {
      unpadded = unpadded.substring(0, unpadded.length() - 1);
    }
    try {
      return Base64.getUrlDecoder().decode(unpadded);
    } catch (final IllegalArgumentException e) {
      throw new PeerIdAuthException("not base64url");
    }
  }

  /**
   * A public key from its base64url protobuf encoding.
   *
   * @throws PeerIdAuthException when it is not a supported libp2p public key
   */
  public static PublicKey publicKey(final String base64) throws PeerIdAuthException {
    try {
      return Keys.unmarshalPublicKey(decode(base64));
    } catch (final KeyFormatException e) {
      throw new PeerIdAuthException("bad public-key: " + e.getMessage());
    } catch (final IllegalArgumentException e) {
      throw new PeerIdAuthException("unsupported public-key: " + e.getMessage());
    }
  }
}
