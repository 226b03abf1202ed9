package io.relaypinner.orbitdb.identity.webauthn;

import io.relaypinner.multiformats.Uvarint;
import io.relaypinner.orbitdb.identity.Identity;
import io.relaypinner.orbitdb.identity.IdentityRefusal;
import io.relaypinner.orbitdb.identity.IdentityVerifier;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Objects;
import java.util.Optional;

/**
 * The {@code webauthn-varsig} type of {@code @le-space/orbitdb-identity-provider-webauthn-did}:
 * the passkey signs everything. {@code id} is the did:key of the passkey (P-256 compressed or
 * Ed25519), {@code publicKey} its raw bytes (65-byte uncompressed P-256 point or 32-byte Ed25519
 * key), and {@code signatures.id}, {@code signatures.publicKey} and every entry's {@code sig} are
 * {@link Varsig} envelopes, each an assertion over a challenge derived from a domain label and the
 * signed payload:
 *
 * <ul>
 *   <li>{@code signatures.id}: label {@code orbitdb-id:}, payload {@code utf8(id)};
 *   <li>{@code signatures.publicKey}: {@code orbitdb-pubkey:}, {@code publicKey || signatures.id};
 *   <li>entries: {@code orbitdb-entry:}, the entry's signed bytes.
 * </ul>
 *
 * <p>Two challenge formats exist and each is recognised explicitly by its length: provider 0.3.x
 * uses {@code SHA-256(label || payload)} (32 bytes); 0.5.x uses the multihash
 * {@code 0x12 0x20 || SHA-256(varint(len(label)) || label || payload)} (34 bytes). Anything else
 * is refused.
 *
 * <p>The ceremony is bound to a page: origin and rpId hash must be in the configured allowlists
 * (the provider checks them against the verifying page's own). Without a relying party every
 * varsig identity is refused ({@link IdentityRefusal#RP_NOT_CONFIGURED}).
 */
public final class WebAuthnVarsigIdentityVerifier implements IdentityVerifier {
  /** The type string. */
  public static final String TYPE = "webauthn-varsig";

  /** The provider's default domain labels. */
  public static final String LABEL_ID = "orbitdb-id:";
  public static final String LABEL_PUBLIC_KEY = "orbitdb-pubkey:";
  public static final String LABEL_ENTRY = "orbitdb-entry:";

  private final WebAuthnConfig config;

  public WebAuthnVarsigIdentityVerifier(final WebAuthnConfig config) {
    this.config = Objects.requireNonNull(config, "config");
  }

  @Override
  public String type() {
    return TYPE;
  }

  @Override
  public boolean binaryFields() {
    return true;
  }

  @Override
  public boolean verify(final Identity identity) {
    return check(identity).isEmpty();
  }

  @Override
  public Optional<IdentityRefusal> check(final Identity identity) {
    if (!config.configured()) {
      return refuse(IdentityRefusal.RP_NOT_CONFIGURED, "webauthn-varsig writers are refused: no"
          + " relying party is configured (set RELAY_WEBAUTHN_ORIGINS, and RELAY_WEBAUTHN_RP_IDS"
          + " unless the rpIds are the origins' hosts)");
    }
    final Optional<PasskeyKey> key = BinaryFields.bytes(identity.publicKey(), 65)
        .flatMap(PasskeyKey::fromRaw);
    if (key.isEmpty()) {
      return refuse(IdentityRefusal.MALFORMED_PROOF,
          "publicKey is no 65-byte P-256 point or 32-byte Ed25519 key");
    }
    final Optional<PasskeyKey> named = PasskeyKey.fromDidKey(identity.id());
    if (named.isEmpty() || !named.get().sameKey(key.get())) {
      return refuse(IdentityRefusal.KEY_MISMATCH, "id is not the did:key of publicKey");
    }
    final Optional<byte[]> idSignature = BinaryFields.bytes(identity.idSignature(),
        Varsig.MAX_LENGTH);
    final Optional<byte[]> publicKeySignature = BinaryFields.bytes(
        identity.publicKeySignature(), Varsig.MAX_LENGTH);
    if (idSignature.isEmpty() || publicKeySignature.isEmpty()) {
      return refuse(IdentityRefusal.MALFORMED_PROOF, "signatures are empty or too long");
    }
    final Optional<IdentityRefusal> id = checkPayload(key.get(), idSignature.get(),
        identity.id().getBytes(StandardCharsets.UTF_8), LABEL_ID);
    if (id.isPresent()) {
      return id.map(r -> IdentityRefusal.of(r.label(), "signatures.id: " + r.message()));
    }
    return checkPayload(key.get(), publicKeySignature.get(),
        BinaryFields.concat(BinaryFields.bytes(identity.publicKey(), 65).orElseThrow(),
            idSignature.get()), LABEL_PUBLIC_KEY)
        .map(r -> IdentityRefusal.of(r.label(), "signatures.publicKey: " + r.message()));
  }

  @Override
  public boolean verifyEntry(final Identity identity, final String signature,
      final byte[] signedBytes) {
    if (!config.configured()) {
      return false;
    }
    final Optional<PasskeyKey> key = BinaryFields.bytes(identity.publicKey(), 65)
        .flatMap(PasskeyKey::fromRaw);
    final Optional<byte[]> sig = BinaryFields.bytes(signature, Varsig.MAX_LENGTH);
    return key.isPresent() && sig.isPresent()
        && checkPayload(key.get(), sig.get(), signedBytes, LABEL_ENTRY).isEmpty();
  }

  /** Why {@code envelope} is not {@code key}'s varsig over {@code payload} under {@code label}. */
  Optional<IdentityRefusal> checkPayload(final PasskeyKey key, final byte[] envelope,
      final byte[] payload, final String label) {
    final Optional<Varsig> varsig = Varsig.decode(envelope);
    if (varsig.isEmpty()) {
      return refuse(IdentityRefusal.MALFORMED_PROOF, "not a WebAuthn varsig v1 envelope");
    }
    if (varsig.get().algorithm() != key.algorithm()) {
      return refuse(IdentityRefusal.KEY_MISMATCH, "varsig names " + varsig.get().algorithm()
          + ", the key is " + key.algorithm());
    }
    final Assertion assertion = varsig.get().assertion();
    final Optional<byte[]> challenge = assertion.challenge();
    if (challenge.isEmpty()) {
      return refuse(IdentityRefusal.MALFORMED_PROOF, "clientDataJSON has no challenge");
    }
    final byte[] expected = expectedChallenge(challenge.get(), label, payload);
    if (expected == null) {
      return refuse(IdentityRefusal.CHALLENGE_MISMATCH,
          "the challenge is in neither known format (32-byte hash, 34-byte multihash)");
    }
    return assertion.check(expected, Assertion.Expectation.of(config), key);
  }

  /**
   * The challenge the signer must have used, in the format the received one claims: null when
   * it claims none.
   */
  static byte[] expectedChallenge(final byte[] received, final String label,
      final byte[] payload) {
    final byte[] labelBytes = label.getBytes(StandardCharsets.UTF_8);
    if (received.length == 32) {
      return Assertion.sha256(BinaryFields.concat(labelBytes, payload));
    }
    if (received.length == 34 && received[0] == 0x12 && received[1] == 0x20) {
      final byte[] framed = BinaryFields.concat(BinaryFields.concat(
          Uvarint.encode(labelBytes.length), labelBytes), payload);
      final byte[] out = Arrays.copyOf(new byte[] {0x12, 0x20}, 34);
      System.arraycopy(Assertion.sha256(framed), 0, out, 2, 32);
      return out;
    }
    return null;
  }

  private static Optional<IdentityRefusal> refuse(final String label, final String message) {
    return Optional.of(IdentityRefusal.of(label, message));
  }
}
