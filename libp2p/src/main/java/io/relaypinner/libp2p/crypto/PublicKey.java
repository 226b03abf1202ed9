package io.relaypinner.libp2p.crypto;

import io.relaypinner.multiformats.PeerId;

/**
 * A libp2p public key (libp2p/specs peer-ids/peer-ids.md). Immutable and safe to share between
 * threads.
 */
public sealed interface PublicKey permits Ed25519PublicKey, Secp256k1PublicKey {
  KeyType type();

  /** The key's {@code Data} field: 32 bytes for Ed25519, 33 (compressed point) for secp256k1. */
  byte[] raw();

  /** The deterministic {@code PublicKey} protobuf: the bytes PeerIds are derived from. */
  default byte[] marshal() {
    return Keys.marshal(type(), raw());
  }

  /** The PeerId of this key: identity multihash of {@link #marshal()} (it is at most 42 bytes). */
  default PeerId peerId() {
    return PeerId.fromPublicKey(marshal());
  }

  /**
   * Verifies a signature with the key type's libp2p rule. Never throws for malformed signatures:
   * anything that is not a valid signature over {@code data} by this key is {@code false}.
   */
  boolean verify(byte[] data, byte[] signature);
}
