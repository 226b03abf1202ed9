package io.relaypinner.orbitdb.identity;

import java.util.Objects;

/**
 * Why an identity's provider proof was refused: a metrics {@link #label()} from a small fixed set
 * (bounded cardinality) and a message for the log line.
 *
 * @param label snake-case reason, e.g. {@code invalid_signature}, {@code rp_not_configured}
 * @param message what was wrong, for operators
 */
public record IdentityRefusal(String label, String message) {
  /** The proof's signature does not verify. */
  public static final String INVALID_SIGNATURE = "invalid_signature";
  /** The proof is not of the shape the provider writes. */
  public static final String MALFORMED_PROOF = "malformed_proof";
  /** The id does not name the key that signed. */
  public static final String KEY_MISMATCH = "key_mismatch";
  /** The WebAuthn challenge is not the one the signed data gives. */
  public static final String CHALLENGE_MISMATCH = "challenge_mismatch";
  /** The client data is not of a {@code webauthn.get} ceremony. */
  public static final String WRONG_CEREMONY = "wrong_ceremony";
  /** The origin is not in the relying-party allowlist. */
  public static final String ORIGIN_NOT_ALLOWED = "origin_not_allowed";
  /** The authenticator data's rpId hash is not of an allowed rpId. */
  public static final String RP_ID_NOT_ALLOWED = "rp_id_not_allowed";
  /** No relying party is configured, so a proof that needs one cannot be judged. */
  public static final String RP_NOT_CONFIGURED = "rp_not_configured";
  /** A P-256 signature's S is in the upper half while policy requires low S. */
  public static final String HIGH_S = "high_s";
  /** The authenticator did not set the user-present flag. */
  public static final String USER_PRESENCE_MISSING = "user_presence_missing";
  /** The authenticator did not set the user-verified flag and policy requires it. */
  public static final String USER_VERIFICATION_MISSING = "user_verification_missing";

  public IdentityRefusal {
    Objects.requireNonNull(label, "label");
    Objects.requireNonNull(message, "message");
  }

  /** A refusal with this label and message. */
  public static IdentityRefusal of(final String label, final String message) {
    return new IdentityRefusal(label, message);
  }
}
