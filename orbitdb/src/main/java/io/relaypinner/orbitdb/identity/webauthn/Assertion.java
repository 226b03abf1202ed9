package io.relaypinner.orbitdb.identity.webauthn;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.core.json.JsonReadFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import io.relaypinner.orbitdb.identity.IdentityRefusal;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.Base64;
import java.util.Optional;
import java.util.function.Predicate;

/**
 * One WebAuthn assertion ({@code navigator.credentials.get()}): authenticator data, client data
 * JSON and signature, checked as a relying party checks it (WebAuthn L2 §7.2), cheapest first:
 * sizes, flags (UP always, UV per policy), the client data ({@code type: "webauthn.get"}, the
 * challenge, the origin), the rpId hash, and last the signature over
 * {@code authenticatorData || SHA-256(clientDataJSON)}.
 *
 * @param authenticatorData at least 37 bytes: rpIdHash, flags, signCount, extensions
 * @param clientDataJSON the UTF-8 JSON the browser built
 * @param signature DER (P-256) or 64 bytes (Ed25519)
 */
public record Assertion(byte[] authenticatorData, byte[] clientDataJSON, byte[] signature) {
  /** Largest authenticator data accepted (extensions included). */
  public static final int MAX_AUTHENTICATOR_DATA = 1024;
  /** Largest client data accepted. */
  public static final int MAX_CLIENT_DATA = 2048;
  /** Largest signature accepted. */
  public static final int MAX_SIGNATURE = 128;

  static final int FLAG_UP = 0x01;
  static final int FLAG_UV = 0x04;

  private static final ObjectMapper JSON = JsonMapper.builder()
      .enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION)
      .disable(JsonReadFeature.ALLOW_TRAILING_COMMA)
      .build();

  static {
    JSON.getFactory().setStreamReadConstraints(StreamReadConstraints.builder()
        .maxNestingDepth(8).maxStringLength(MAX_CLIENT_DATA).build());
  }

  /**
   * What the relying party expects of the assertion.
   *
   * @param origins allowed origins; null = not checked (webauthn keystore proofs without policy)
   * @param rpIdHashes allowed rpId hashes; null = not checked
   * @param requireUserVerification whether UV is required
   * @param requireLowS whether a P-256 signature's S must be at most n/2
   */
  public record Expectation(Predicate<String> origins, Predicate<byte[]> rpIdHashes,
      boolean requireUserVerification, boolean requireLowS) {
    /** Checks origin and rpId against {@code config}'s lists (which must be set). */
    public static Expectation of(final WebAuthnConfig config) {
      final byte[][] hashes = config.rpIds().stream()
          .map(id -> sha256(id.getBytes(StandardCharsets.UTF_8))).toArray(byte[][]::new);
      return new Expectation(config.origins()::contains, h -> {
        for (final byte[] hash : hashes) {
          if (MessageDigest.isEqual(hash, h)) {
            return true;
          }
        }
        return false;
      }, config.requireUserVerification(), config.requireLowS());
    }

    /** No relying-party lists: only flags, ceremony, challenge and signature. */
    public static Expectation unbound(final boolean requireUserVerification,
        final boolean requireLowS) {
      return new Expectation(null, null, requireUserVerification, requireLowS);
    }
  }

  public Assertion {
    authenticatorData = authenticatorData.clone();
    clientDataJSON = clientDataJSON.clone();
    signature = signature.clone();
  }

  /** The user-present flag. */
  public boolean userPresent() {
    return authenticatorData.length > 32 && (authenticatorData[32] & FLAG_UP) != 0;
  }

  /** The user-verified flag. */
  public boolean userVerified() {
    return authenticatorData.length > 32 && (authenticatorData[32] & FLAG_UV) != 0;
  }

  /** {@code clientDataJSON.challenge} decoded, or empty when the client data has none. */
  public Optional<byte[]> challenge() {
    return parse().flatMap(json -> base64Url(json.path("challenge").asText(null)));
  }

  private Optional<JsonNode> parse() {
    if (clientDataJSON.length > MAX_CLIENT_DATA) {
      return Optional.empty();
    }
    try {
      final JsonNode node = JSON.readTree(clientDataJSON);
      return node != null && node.isObject() ? Optional.of(node) : Optional.empty();
    } catch (final IOException e) {
      return Optional.empty();
    }
  }

  /**
   * Why this assertion is refused as {@code key}'s signature over {@code expectedChallenge}, or
   * empty when it holds.
   */
  public Optional<IdentityRefusal> check(final byte[] expectedChallenge,
      final Expectation expectation, final PasskeyKey key) {
    if (authenticatorData.length < 37 || authenticatorData.length > MAX_AUTHENTICATOR_DATA
        || clientDataJSON.length > MAX_CLIENT_DATA || signature.length == 0
        || signature.length > MAX_SIGNATURE) {
      return refuse(IdentityRefusal.MALFORMED_PROOF, "assertion fields have impossible sizes");
    }
    if (!userPresent()) {
      return refuse(IdentityRefusal.USER_PRESENCE_MISSING,
          "the authenticator did not set the user-present (UP) flag");
    }
    if (expectation.requireUserVerification() && !userVerified()) {
      return refuse(IdentityRefusal.USER_VERIFICATION_MISSING,
          "the authenticator did not set the user-verified (UV) flag");
    }
    final Optional<JsonNode> parsed = parse();
    if (parsed.isEmpty()) {
      return refuse(IdentityRefusal.MALFORMED_PROOF, "clientDataJSON is not a JSON object");
    }
    final JsonNode client = parsed.get();
    if (!"webauthn.get".equals(client.path("type").asText(null))) {
      return refuse(IdentityRefusal.WRONG_CEREMONY,
          "clientDataJSON.type is not webauthn.get");
    }
    final Optional<byte[]> challenge = base64Url(client.path("challenge").asText(null));
    if (challenge.isEmpty() || !MessageDigest.isEqual(challenge.get(), expectedChallenge)) {
      return refuse(IdentityRefusal.CHALLENGE_MISMATCH,
          "clientDataJSON.challenge is not the challenge of the signed data");
    }
    final JsonNode origin = client.get("origin");
    if (origin == null || !origin.isTextual()) {
      return refuse(IdentityRefusal.MALFORMED_PROOF, "clientDataJSON has no origin");
    }
    if (expectation.origins() != null && !expectation.origins().test(origin.asText())) {
      return refuse(IdentityRefusal.ORIGIN_NOT_ALLOWED, "origin " + abbreviate(origin.asText())
          + " is not in RELAY_WEBAUTHN_ORIGINS");
    }
    if (expectation.rpIdHashes() != null
        && !expectation.rpIdHashes().test(Arrays.copyOf(authenticatorData, 32))) {
      return refuse(IdentityRefusal.RP_ID_NOT_ALLOWED,
          "the authenticator data is for an rpId not in RELAY_WEBAUTHN_RP_IDS");
    }
    if (expectation.requireLowS() && key.highS(signature)) {
      return refuse(IdentityRefusal.HIGH_S,
          "the assertion signature's S is in the upper half (RELAY_WEBAUTHN_REQUIRE_LOW_S)");
    }
    final byte[] signed = new byte[authenticatorData.length + 32];
    System.arraycopy(authenticatorData, 0, signed, 0, authenticatorData.length);
    System.arraycopy(sha256(clientDataJSON), 0, signed, authenticatorData.length, 32);
    if (!key.verify(signed, signature)) {
      return refuse(IdentityRefusal.INVALID_SIGNATURE,
          "the assertion signature does not verify with the key the id names");
    }
    return Optional.empty();
  }

  private static Optional<IdentityRefusal> refuse(final String label, final String message) {
    return Optional.of(IdentityRefusal.of(label, message));
  }

  private static String abbreviate(final String text) {
    return text.length() <= 80 ? text : text.substring(0, 80) + "...";
  }

  /** Unpadded base64url as browsers write challenges; anything else is empty. */
  static Optional<byte[]> base64Url(final String text) {
    if (text == null || text.isEmpty() || text.length() > 4 * MAX_CLIENT_DATA) {
      return Optional.empty();
    }
    for (int i = 0; i < text.length(); i++) {
      final char c = text.charAt(i);
      if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')
          || c == '-' || c == '_')) {
        return Optional.empty();
      }
    }
    if (text.length() % 4 == 1) {
      return Optional.empty();
    }
    try {
      return Optional.of(Base64.getUrlDecoder().decode(text));
    } catch (final IllegalArgumentException e) {
      return Optional.empty();
    }
  }

  static byte[] sha256(final byte[] data) {
    try {
      return MessageDigest.getInstance("SHA-256").digest(data);
    } catch (final NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }
}
