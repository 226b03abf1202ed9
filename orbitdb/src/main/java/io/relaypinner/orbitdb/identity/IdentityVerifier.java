package io.relaypinner.orbitdb.identity;

import java.util.Optional;

/**
 * The provider-specific half of OrbitDB's {@code verifyIdentity}: checks
 * {@code signatures.publicKey} for one identity {@link #type()}. For text identities the common
 * half (the signing key signed the id) is done by {@link IdentityVerifiers} first; verifiers of
 * {@link #binaryFields() binary} identities check {@code signatures.id} themselves.
 */
public interface IdentityVerifier {
  /** The identity type this verifier handles, e.g. {@code publickey}. */
  String type();

  /** Whether the identity's provider signature is valid; never throws for bad input. */
  boolean verify(Identity identity);

  /**
   * Why the identity is refused, or empty when it verifies; never throws for bad input. The
   * default reports {@link #verify} as {@link IdentityRefusal#INVALID_SIGNATURE}.
   */
  default Optional<IdentityRefusal> check(final Identity identity) {
    return verify(identity) ? Optional.empty() : Optional.of(IdentityRefusal.of(
        IdentityRefusal.INVALID_SIGNATURE, type() + " signature does not verify"));
  }

  /**
   * Whether this type writes {@code publicKey} and its signatures as byte strings
   * ({@link Identity#binary()}); then {@code signatures.id} is checked by {@link #check}, not by
   * the common keystore rule.
   */
  default boolean binaryFields() {
    return false;
  }

  /**
   * Whether {@code signature} (hex, as {@link io.relaypinner.orbitdb.log.Entry#sig()} gives it)
   * is this verified identity's signature of an entry's {@code signedBytes}. The default is
   * OrbitDB's key store rule: the entry key ({@code identity.publicKey}) signs the bytes.
   */
  default boolean verifyEntry(final Identity identity, final String signature,
      final byte[] signedBytes) {
    return !identity.binary() && Hex.verify(signature, identity.publicKey(), signedBytes);
  }
}
