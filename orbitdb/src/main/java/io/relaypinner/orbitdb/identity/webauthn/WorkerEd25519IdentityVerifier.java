package io.relaypinner.orbitdb.identity.webauthn;

import io.relaypinner.libp2p.crypto.Ed25519PublicKey;
import io.relaypinner.orbitdb.identity.Identity;
import io.relaypinner.orbitdb.identity.IdentityRefusal;
import io.relaypinner.orbitdb.identity.IdentityVerifier;
import java.nio.charset.StandardCharsets;
import java.util.Optional;

/**
 * The {@code worker-ed25519} identities of the passkey apps (a Web Worker keystore unlocked by the
 * passkey's PRF output): {@code publicKey} is a raw 32-byte Ed25519 key, {@code id} its did:key
 * ({@code z6Mk…}), {@code signatures.id} the key's signature of {@code utf8(id)} and
 * {@code signatures.publicKey} of {@code publicKey || signatures.id} (bytes); entries are signed by
 * the same key over their signed bytes. Stricter than the JS relay, which does not check that the
 * id names the key.
 */
public final class WorkerEd25519IdentityVerifier implements IdentityVerifier {
  /** The type string. */
  public static final String TYPE = "worker-ed25519";

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
    final Optional<byte[]> raw = BinaryFields.bytes(identity.publicKey(),
        Ed25519PublicKey.LENGTH);
    final Optional<PasskeyKey> key = raw.flatMap(PasskeyKey::fromRaw)
        .filter(k -> k.algorithm() == PasskeyKey.Algorithm.ED25519);
    if (key.isEmpty()) {
      return refuse(IdentityRefusal.MALFORMED_PROOF, "publicKey is no Ed25519 key");
    }
    final Optional<PasskeyKey> named = PasskeyKey.fromDidKey(identity.id());
    if (named.isEmpty() || !named.get().sameKey(key.get())) {
      return refuse(IdentityRefusal.KEY_MISMATCH, "id is not the did:key of publicKey");
    }
    final Optional<byte[]> idSignature = BinaryFields.bytes(identity.idSignature(),
        Ed25519PublicKey.SIGNATURE_LENGTH);
    final Optional<byte[]> publicKeySignature = BinaryFields.bytes(
        identity.publicKeySignature(), Ed25519PublicKey.SIGNATURE_LENGTH);
    if (idSignature.isEmpty() || publicKeySignature.isEmpty()
        || !key.get().verify(identity.id().getBytes(StandardCharsets.UTF_8), idSignature.get())) {
      return refuse(IdentityRefusal.INVALID_SIGNATURE, "signatures.id does not verify");
    }
    if (!key.get().verify(BinaryFields.concat(raw.get(), idSignature.get()),
        publicKeySignature.get())) {
      return refuse(IdentityRefusal.INVALID_SIGNATURE, "signatures.publicKey does not verify");
    }
    return Optional.empty();
  }

  @Override
  public boolean verifyEntry(final Identity identity, final String signature,
      final byte[] signedBytes) {
    final Optional<PasskeyKey> key = BinaryFields.bytes(identity.publicKey(),
        Ed25519PublicKey.LENGTH).flatMap(PasskeyKey::fromRaw);
    final Optional<byte[]> sig = BinaryFields.bytes(signature, Ed25519PublicKey.SIGNATURE_LENGTH);
    return key.isPresent() && sig.isPresent() && key.get().verify(signedBytes, sig.get());
  }

  private static Optional<IdentityRefusal> refuse(final String label, final String message) {
    return Optional.of(IdentityRefusal.of(label, message));
  }
}
