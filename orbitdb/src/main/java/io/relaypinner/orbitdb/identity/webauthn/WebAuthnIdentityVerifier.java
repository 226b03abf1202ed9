package io.relaypinner.orbitdb.identity.webauthn;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import io.relaypinner.orbitdb.identity.Identity;
import io.relaypinner.orbitdb.identity.IdentityRefusal;
import io.relaypinner.orbitdb.identity.IdentityVerifier;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Objects;
import java.util.Optional;

/**
 * The {@code webauthn} type of {@code @le-space/orbitdb-identity-provider-webauthn-did} (keystore
 * mode): {@code id} is the did:key of the passkey's P-256 key (multicodec {@code 0x1200}),
 * {@code publicKey} the OrbitDB key store's secp256k1 key (hex), which signs the id
 * ({@code signatures.id}, checked by the common rule) and every entry, like {@code publickey}
 * identities. {@code signatures.publicKey} is the passkey's proof: base64url of the JSON
 * {@code {credentialId, dataHash, authenticatorData, clientDataJSON, signature, timestamp}}
 * (credentialId, authenticatorData and signature base64url, clientDataJSON as text), an assertion
 * over the challenge {@code SHA-256(rawCredentialId || utf8(publicKey + signatures.id))}.
 *
 * <p>Checked: the assertion ({@link Assertion#check}) with that challenge recomputed, UP, UV per
 * policy, and the signature by the key the did:key names; origin and rpId against the allowlists
 * when they are configured. The provider's own check is structural only (any victim's did:key
 * with any proof passes); {@code dataHash} and {@code timestamp} are unsigned and ignored.
 *
 * <p>Provider 0.3.1 in browsers derives the did:key from a synthetic key when it cannot parse the
 * attestation (fixed upstream in 0.4.0): such an id names no key that signed, and is refused.
 */
public final class WebAuthnIdentityVerifier implements IdentityVerifier {
  /** The type string. */
  public static final String TYPE = "webauthn";

  /** Longest {@code signatures.publicKey} accepted. */
  public static final int MAX_PROOF_LENGTH = 8192;

  private static final int MAX_CREDENTIAL_ID = 1023;
  private static final ObjectMapper JSON = JsonMapper.builder()
      .enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION).build();

  private final WebAuthnConfig config;

  public WebAuthnIdentityVerifier(final WebAuthnConfig config) {
    this.config = Objects.requireNonNull(config, "config");
  }

  @Override
  public String type() {
    return TYPE;
  }

  @Override
  public boolean verify(final Identity identity) {
    return check(identity).isEmpty();
  }

  @Override
  public Optional<IdentityRefusal> check(final Identity identity) {
    final Optional<PasskeyKey> key = PasskeyKey.fromDidKey(identity.id())
        .filter(k -> k.algorithm() == PasskeyKey.Algorithm.P256);
    if (key.isEmpty()) {
      return refuse(IdentityRefusal.KEY_MISMATCH, "id is not the did:key of a P-256 point");
    }
    final String proof = identity.publicKeySignature();
    if (proof.length() > MAX_PROOF_LENGTH) {
      return refuse(IdentityRefusal.MALFORMED_PROOF, "signatures.publicKey is too long");
    }
    final Optional<byte[]> json = Assertion.base64Url(proof);
    if (json.isEmpty()) {
      return refuse(IdentityRefusal.MALFORMED_PROOF, "signatures.publicKey is not base64url");
    }
    final JsonNode node;
    try {
      node = JSON.readTree(json.get());
    } catch (final IOException e) {
      return refuse(IdentityRefusal.MALFORMED_PROOF, "signatures.publicKey is not JSON");
    }
    if (node == null || !node.isObject()) {
      return refuse(IdentityRefusal.MALFORMED_PROOF, "signatures.publicKey is not a JSON object");
    }
    final Optional<byte[]> credentialId = Assertion.base64Url(text(node, "credentialId"));
    final Optional<byte[]> authenticatorData =
        Assertion.base64Url(text(node, "authenticatorData"));
    final Optional<byte[]> signature = Assertion.base64Url(text(node, "signature"));
    final String clientData = text(node, "clientDataJSON");
    if (credentialId.isEmpty() || credentialId.get().length > MAX_CREDENTIAL_ID
        || authenticatorData.isEmpty() || signature.isEmpty() || clientData == null) {
      return refuse(IdentityRefusal.MALFORMED_PROOF, "the passkey proof lacks credentialId,"
          + " authenticatorData, clientDataJSON or signature");
    }
    final byte[] signedText = (identity.publicKey() + identity.idSignature())
        .getBytes(StandardCharsets.UTF_8);
    final byte[] challenge = Assertion.sha256(BinaryFields.concat(credentialId.get(), signedText));
    final Assertion assertion = new Assertion(authenticatorData.get(),
        clientData.getBytes(StandardCharsets.UTF_8), signature.get());
    final Assertion.Expectation expectation = config.configured()
        ? Assertion.Expectation.of(config)
        : Assertion.Expectation.unbound(config.requireUserVerification(),
            config.requireLowS());
    return assertion.check(challenge, expectation, key.get());
  }

  private static String text(final JsonNode node, final String field) {
    final JsonNode value = node.get(field);
    return value != null && value.isTextual() ? value.asText() : null;
  }

  private static Optional<IdentityRefusal> refuse(final String label, final String message) {
    return Optional.of(IdentityRefusal.of(label, message));
  }
}
