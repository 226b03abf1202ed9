package io.relaypinner.libp2p.crypto;

import io.relaypinner.libp2p.crypto.pb.KeysProtos;

/** The key types of the libp2p key protobuf (libp2p/specs peer-ids/peer-ids.md, "Keys"). */
public enum KeyType {
  RSA(KeysProtos.KeyType.RSA),
  ED25519(KeysProtos.KeyType.Ed25519),
  SECP256K1(KeysProtos.KeyType.Secp256k1),
  ECDSA(KeysProtos.KeyType.ECDSA);

  private final KeysProtos.KeyType wire;

  KeyType(final KeysProtos.KeyType wire) {
    this.wire = wire;
  }

  KeysProtos.KeyType wire() {
    return wire;
  }

  static KeyType fromWire(final KeysProtos.KeyType wire) {
    for (final KeyType type : values()) {
      if (type.wire == wire) {
        return type;
      }
    }
    throw new KeyFormatException("unknown key type " + wire);
  }
}
