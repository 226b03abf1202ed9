package io.relaypinner.orbitdb.identity;

import io.relaypinner.orbitdb.EntryRejectedException;
import io.relaypinner.orbitdb.RejectReason;
import io.relaypinner.orbitdb.UnsupportedTypeException;
import io.relaypinner.orbitdb.identity.webauthn.WebAuthnConfig;
import io.relaypinner.orbitdb.identity.webauthn.WebAuthnIdentityVerifier;
import io.relaypinner.orbitdb.identity.webauthn.WebAuthnVarsigIdentityVerifier;
import io.relaypinner.orbitdb.identity.webauthn.WorkerEd25519IdentityVerifier;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * OrbitDB's {@code verifyIdentity} with a registry of providers keyed by type: first the common
 * check that {@code signatures.id} is the signing key's signature of the UTF-8 {@code id} (text
 * identities; binary ones are checked whole by their verifier), then the provider's own check.
 * Built in: {@code publickey} and {@code did} (did:key Ed25519); {@link #withPasskeys} adds
 * {@code webauthn}, {@code webauthn-varsig} and {@code worker-ed25519}.
 *
 * <p>Counts every verification by type and result ({@link #stats()}) for the metrics.
 */
public final class IdentityVerifiers {
  /** The result label of a verified identity. */
  public static final String VALID = "valid";

  /** The type label of identities whose type no verifier handles. */
  public static final String UNKNOWN_TYPE = "unknown";

  private static final Logger LOG = LoggerFactory.getLogger(IdentityVerifiers.class);

  private final Map<String, IdentityVerifier> byType = new ConcurrentHashMap<>();
  private final Map<String, LongAdder> counts = new ConcurrentHashMap<>();
  private final AtomicBoolean warnedRelyingParty = new AtomicBoolean();

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

  /**
   * {@link #defaults()} and the passkey types: {@code webauthn}, {@code webauthn-varsig} (judged
   * against {@code webauthn}'s relying-party allowlists; refused while they are empty) and
   * {@code worker-ed25519}.
   */
  public static IdentityVerifiers withPasskeys(final WebAuthnConfig webauthn) {
    return new IdentityVerifiers(List.of(new PublicKeyIdentityVerifier(),
        new DidKeyIdentityVerifier(), new WebAuthnIdentityVerifier(webauthn),
        new WebAuthnVarsigIdentityVerifier(webauthn), new WorkerEd25519IdentityVerifier()));
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
      count(UNKNOWN_TYPE, "unknown_type");
      throw new UnsupportedTypeException(UnsupportedTypeException.Kind.IDENTITY,
          identity.type());
    }
    final Optional<IdentityRefusal> refusal = refusal(verifier, identity);
    if (refusal.isEmpty()) {
      count(identity.type(), VALID);
      return;
    }
    final IdentityRefusal r = refusal.get();
    count(identity.type(), r.label());
    if (r.label().equals(IdentityRefusal.RP_NOT_CONFIGURED)
        && warnedRelyingParty.compareAndSet(false, true)) {
      LOG.warn("identity {} ({}) refused: {} (logged once; later ones at DEBUG)",
          identity.hash(), identity.type(), r.message());
    } else {
      LOG.debug("identity {} ({}) refused: {}", identity.hash(), identity.type(), r.message());
    }
    throw new EntryRejectedException(RejectReason.INVALID_IDENTITY,
        "identity " + identity.hash() + ": " + r.message());
  }

  private static Optional<IdentityRefusal> refusal(final IdentityVerifier verifier,
      final Identity identity) {
    if (identity.binary() != verifier.binaryFields()) {
      return Optional.of(IdentityRefusal.of(IdentityRefusal.MALFORMED_PROOF, identity.type()
          + " identities hold publicKey and signatures as "
          + (verifier.binaryFields() ? "byte strings" : "text")));
    }
    if (!identity.binary()
        && !Hex.verify(identity.idSignature(), identity.publicKey(), identity.id())) {
      return Optional.of(IdentityRefusal.of(IdentityRefusal.INVALID_SIGNATURE,
          "signatures.id does not verify"));
    }
    return verifier.check(identity);
  }

  /**
   * Whether {@code signature} (hex) is the verified {@code identity}'s signature of an entry's
   * signed bytes, by the rule of its type.
   */
  public boolean verifyEntry(final Identity identity, final String signature,
      final byte[] signedBytes) {
    final IdentityVerifier verifier = byType.get(identity.type());
    return verifier != null && identity.binary() == verifier.binaryFields()
        && verifier.verifyEntry(identity, signature, signedBytes);
  }

  private void count(final String type, final String result) {
    counts.computeIfAbsent(type + '/' + result, k -> new LongAdder()).increment();
  }

  /**
   * Verifications so far, keyed {@code type/result} (result {@link #VALID} or an
   * {@link IdentityRefusal} label; type {@link #UNKNOWN_TYPE} for types no verifier handles).
   */
  public Map<String, Long> stats() {
    final Map<String, Long> out = new TreeMap<>();
    counts.forEach((k, v) -> out.put(k, v.sum()));
    return out;
  }
}
