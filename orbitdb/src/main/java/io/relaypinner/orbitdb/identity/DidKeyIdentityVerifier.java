package io.relaypinner.orbitdb.identity;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.relaypinner.libp2p.crypto.Ed25519PublicKey;
import io.relaypinner.libp2p.crypto.KeyFormatException;
import io.relaypinner.libp2p.crypto.KeyType;
import io.relaypinner.libp2p.crypto.Keys;
import io.relaypinner.libp2p.crypto.PublicKey;
import io.relaypinner.multiformats.Base58;
import io.relaypinner.multiformats.MultiformatException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Optional;

/**
 * The {@code did} provider ({@code @orbitdb/identity-provider-did} with
 * {@code key-did-provider-ed25519}): {@code id} is {@code did:key:z6Mk…}, i.e.
 * {@code 'z' + base58btc(0xed 0x01 ‖ Ed25519 key)}, and {@code signatures.publicKey} is a JWS
 * with detached payload, {@code "<protected>..<signature>"}, whose payload is
 * {@code base64url(hexDecode(publicKey + signatures.id))} (the hex strings decoded to bytes,
 * unlike {@code publickey}). The protected header must say {@code alg: "EdDSA"} and a
 * {@code kid} whose DID is {@code id}; the Ed25519 signature covers
 * {@code ASCII(protected + "." + payload)}.
 *
 * <p>Stricter than the JS provider 1.0.2, whose {@code verifyIdentity} does not await the JWS
 * check and so accepts any signature.
 */
public final class DidKeyIdentityVerifier implements IdentityVerifier {
  /** The type string. */
  public static final String TYPE = "did";

  /** The prefix of an Ed25519 did:key. */
  public static final String DID_KEY_PREFIX = "did:key:z";

  private static final int MAX_JWS_LENGTH = 2048;
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Base64.Decoder B64URL = Base64.getUrlDecoder();
  private static final Base64.Encoder B64URL_OUT = Base64.getUrlEncoder().withoutPadding();

  @Override
  public String type() {
    return TYPE;
  }

  @Override
  public boolean verify(final Identity identity) {
    final Optional<PublicKey> key = didKey(identity.id());
    if (key.isEmpty()) {
      return false;
    }
    final String jws = identity.publicKeySignature();
    if (jws.length() > MAX_JWS_LENGTH) {
      return false;
    }
    final int sep = jws.indexOf("..");
    if (sep <= 0 || jws.indexOf('.', sep + 2) >= 0) {
      return false;
    }
    final String header = jws.substring(0, sep);
    final String signature = jws.substring(sep + 2);
    final Optional<byte[]> data = Hex.decode(identity.publicKey() + identity.idSignature());
    if (data.isEmpty() || !base64Url(header) || !base64Url(signature)) {
      return false;
    }
    try {
      final JsonNode protectedHeader = JSON.readTree(B64URL.decode(header));
      if (!protectedHeader.isObject()
          || !"EdDSA".equals(protectedHeader.path("alg").asText(null))) {
        return false;
      }
      final String kid = protectedHeader.path("kid").asText("");
      final int hash = kid.indexOf('#');
      final String kidDid = hash < 0 ? kid : kid.substring(0, hash);
      if (!kidDid.equals(identity.id())) {
        return false;
      }
      final byte[] sig = B64URL.decode(signature);
      if (sig.length != Ed25519PublicKey.SIGNATURE_LENGTH) {
        return false;
      }
      final String signingInput = header + "." + B64URL_OUT.encodeToString(data.get());
      return key.get().verify(signingInput.getBytes(StandardCharsets.US_ASCII), sig);
    } catch (final IOException | IllegalArgumentException e) {
      return false;
    }
  }

  private static boolean base64Url(final String text) {
    for (int i = 0; i < text.length(); i++) {
      final char c = text.charAt(i);
      if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')
          || c == '-' || c == '_')) {
        return false;
      }
    }
    return !text.isEmpty();
  }

  /** The Ed25519 key of a {@code did:key:z6Mk…}, or empty when it is not one. */
  public static Optional<PublicKey> didKey(final String did) {
    if (!did.startsWith(DID_KEY_PREFIX) || did.length() > 128) {
      return Optional.empty();
    }
    try {
      final byte[] bytes = Base58.decode(did.substring(DID_KEY_PREFIX.length()));
      if (bytes.length != 2 + Ed25519PublicKey.LENGTH || (bytes[0] & 0xff) != 0xed
          || bytes[1] != 0x01) {
        return Optional.empty();
      }
      final byte[] raw = new byte[Ed25519PublicKey.LENGTH];
      System.arraycopy(bytes, 2, raw, 0, raw.length);
      return Optional.of(Keys.publicKey(KeyType.ED25519, raw));
    } catch (final MultiformatException | KeyFormatException e) {
      return Optional.empty();
    }
  }
}
