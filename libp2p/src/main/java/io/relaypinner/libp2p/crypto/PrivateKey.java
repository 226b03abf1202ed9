package io.relaypinner.libp2p.crypto;

/**
 * A libp2p private key (libp2p/specs peer-ids/peer-ids.md). Immutable and safe to share between
 * threads; {@link #toString()} never reveals key material.
 */
public sealed interface PrivateKey permits Ed25519PrivateKey, Secp256k1PrivateKey {
  KeyType type();

  PublicKey publicKey();

  /** The key's {@code Data} field as libp2p stores it (Ed25519: seed || public key, 64 bytes). */
  byte[] raw();

  /** The {@code PrivateKey} protobuf, the form {@code RELAY_PRIV_KEY} carries in hex. */
  default byte[] marshal() {
    return Keys.marshalPrivate(type(), raw());
  }

  /** Signs {@code data} with the key type's libp2p rule. */
  byte[] sign(byte[] data);
}
