package io.relaypinner.orbitdb.identity;

/**
 * OrbitDB's default {@code publickey} provider ({@code src/identities/providers/publickey.js}):
 * {@code id} is the hex of a second secp256k1 key (the "identity key"), which signed the UTF-8
 * bytes of the <em>hex strings</em> {@code publicKey + signatures.id}, concatenated.
 */
public final class PublicKeyIdentityVerifier implements IdentityVerifier {
  /** The type string. */
  public static final String TYPE = "publickey";

  @Override
  public String type() {
    return TYPE;
  }

  @Override
  public boolean verify(final Identity identity) {
    return Hex.verify(identity.publicKeySignature(), identity.id(),
        identity.publicKey() + identity.idSignature());
  }
}
