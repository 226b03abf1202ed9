package io.relaypinner.libp2p.crypto;

import com.google.protobuf.ByteString;
import com.google.protobuf.InvalidProtocolBufferException;
import io.relaypinner.libp2p.crypto.pb.KeysProtos;
import java.security.SecureRandom;
import java.util.HexFormat;

/**
 * Encoding and decoding of libp2p key protobufs (libp2p/specs peer-ids/peer-ids.md, "Keys"), and
 * key generation. Ed25519 and secp256k1 are supported; RSA and ECDSA keys are refused with a
 * {@link KeyFormatException} naming the type.
 */
public final class Keys {
  /**
   * Upper bound for an encoded key protobuf. Ed25519 and secp256k1 keys are under 80 bytes; the
   * bound keeps a hostile length from costing anything before it is refused.
   */
  public static final int MAX_ENCODED_LENGTH = 4096;

  private Keys() {}

  /** A fresh key of {@code type} (Ed25519 or secp256k1). */
  public static PrivateKey generate(final KeyType type, final SecureRandom random) {
    return switch (type) {
      case ED25519 -> Ed25519PrivateKey.generate(random);
      case SECP256K1 -> Secp256k1PrivateKey.generate(random);
      default -> throw new KeyFormatException("cannot generate " + type + " keys");
    };
  }

  /** Decodes a {@code PublicKey} protobuf. */
  public static PublicKey unmarshalPublicKey(final byte[] protobuf) {
    final KeysProtos.PublicKey pb;
    try {
      pb = KeysProtos.PublicKey.parseFrom(checkLength(protobuf));
    } catch (final InvalidProtocolBufferException e) {
      throw new KeyFormatException("malformed PublicKey protobuf: " + e.getMessage(), e);
    }
    return publicKey(KeyType.fromWire(pb.getType()), pb.getData().toByteArray());
  }

  /** Decodes a {@code PrivateKey} protobuf. */
  public static PrivateKey unmarshalPrivateKey(final byte[] protobuf) {
    final KeysProtos.PrivateKey pb;
    try {
      pb = KeysProtos.PrivateKey.parseFrom(checkLength(protobuf));
    } catch (final InvalidProtocolBufferException e) {
      throw new KeyFormatException("malformed PrivateKey protobuf: " + e.getMessage(), e);
    }
    final byte[] data = pb.getData().toByteArray();
    return switch (KeyType.fromWire(pb.getType())) {
      case ED25519 -> Ed25519PrivateKey.fromRaw(data);
      case SECP256K1 -> Secp256k1PrivateKey.fromRaw(data);
      default -> throw new KeyFormatException("unsupported private key type " + pb.getType());
    };
  }

  /** Decodes the hex of a {@code PrivateKey} protobuf, the form of {@code RELAY_PRIV_KEY}. */
  public static PrivateKey unmarshalPrivateKeyHex(final String hex) {
    final String trimmed = hex.strip();
    final byte[] bytes;
    try {
      bytes = HexFormat.of().parseHex(trimmed);
    } catch (final IllegalArgumentException e) {
      throw new KeyFormatException("private key is not hex: " + e.getMessage(), e);
    }
    return unmarshalPrivateKey(bytes);
  }

  /** A public key from its type and raw {@code Data}. */
  public static PublicKey publicKey(final KeyType type, final byte[] raw) {
    return switch (type) {
      case ED25519 -> new Ed25519PublicKey(raw);
      case SECP256K1 -> new Secp256k1PublicKey(raw);
      default -> throw new KeyFormatException("unsupported public key type " + type);
    };
  }

  static byte[] marshal(final KeyType type, final byte[] raw) {
    return KeysProtos.PublicKey.newBuilder()
        .setType(type.wire())
        .setData(ByteString.copyFrom(raw))
        .build()
        .toByteArray();
  }

  static byte[] marshalPrivate(final KeyType type, final byte[] raw) {
    return KeysProtos.PrivateKey.newBuilder()
        .setType(type.wire())
        .setData(ByteString.copyFrom(raw))
        .build()
        .toByteArray();
  }

  private static byte[] checkLength(final byte[] protobuf) {
    if (protobuf.length > MAX_ENCODED_LENGTH) {
      throw new KeyFormatException(
          "key protobuf of " + protobuf.length + " bytes exceeds " + MAX_ENCODED_LENGTH);
    }
    return protobuf;
  }
}
