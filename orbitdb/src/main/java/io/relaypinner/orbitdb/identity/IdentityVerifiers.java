package io.relaypinner.orbitdb.identity;

import io.relaypinner.orbitdb.EntryRejectedException;
import io.relaypinner.orbitdb.RejectReason;
import io.relaypinner.orbitdb.UnsupportedTypeException;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * OrbitDB's {@code verifyIdentity} with a registry of providers keyed by type: first the common
 * check that {@code signatures.id} is the signing key's signature of the UTF-8 {@code id}, then
 * the provider's own check. Built in: {@code publickey} and {@code did} (did:key Ed25519).
 */
public final class IdentityVerifiers {
  private final Map<String, IdentityVerifier> byType = new ConcurrentHashMap<>();

  /** A registry with {@code verifiers}. */
  public IdentityVerifiers(final Collection<? extends IdentityVerifier> verifiers) {
    for (final IdentityVerifier verifier : verifiers) {
      register(verifier);
    }
  }

  /** {@code publickey} and {@code did}. */
  public static IdentityVerifiers defaults() {
    return new IdentityVerifiers(List.of(new PublicKeyIdentityVerifier(),
        new DidKeyIdentityVerifier()));
  }

  /** Adds or replaces the verifier for its type. */
  public void register(final IdentityVerifier verifier) {
    byType.put(verifier.type(), verifier);
  }

  /** Whether {@code type} can be verified. */
  public boolean supports(final String type) {
    return byType.containsKey(type);
  }

  /**
   * Verifies an identity.
   *
   * @throws UnsupportedTypeException when no verifier handles its type
   * @throws EntryRejectedException ({@link RejectReason#INVALID_IDENTITY}) when a signature
   *     does not verify
   */
  public void verify(final Identity identity) {
    final IdentityVerifier verifier = byType.get(identity.type());
    if (verifier == null) {
      throw new UnsupportedTypeException(UnsupportedTypeException.Kind.IDENTITY,
          identity.type());
    }
    if (!Hex.verify(identity.idSignature(), identity.publicKey(), identity.id())) {
      throw new EntryRejectedException(RejectReason.INVALID_IDENTITY,
          "identity " + identity.hash() + ": signatures.id does not verify");
    }
    if (!verifier.verify(identity)) {
      throw new EntryRejectedException(RejectReason.INVALID_IDENTITY,
          "identity " + identity.hash() + ": " + identity.type()
              + " signature does not verify");
    }
  }
}
