package io.relaypinner.orbitdb.identity;

/**
 * The provider-specific half of OrbitDB's {@code verifyIdentity}: checks
 * {@code signatures.publicKey} for one identity {@link #type()}. The common half (the signing key
 * signed the id) is done by {@link IdentityVerifiers} first.
 */
public interface IdentityVerifier {
  /** The identity type this verifier handles, e.g. {@code publickey}. */
  String type();

  /** Whether the identity's provider signature is valid; never throws for bad input. */
  boolean verify(Identity identity);
}
