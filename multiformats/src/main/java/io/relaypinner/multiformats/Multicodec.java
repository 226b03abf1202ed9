package io.relaypinner.multiformats;

import java.util.Optional;

/**
 * The multicodec codes this project uses, with their names and tags exactly as in
 * {@code multiformats/multicodec} {@code table.csv}. Multiaddr protocol codes are in
 * {@link MultiaddrProtocol}.
 */
public enum Multicodec {
  IDENTITY("identity", "multihash", 0x00),
  SHA2_256("sha2-256", "multihash", 0x12),
  SHA2_512("sha2-512", "multihash", 0x13),
  RAW("raw", "ipld", 0x55),
  DAG_PB("dag-pb", "ipld", 0x70),
  DAG_CBOR("dag-cbor", "ipld", 0x71),
  LIBP2P_KEY("libp2p-key", "ipld", 0x72),
  DAG_JSON("dag-json", "ipld", 0x0129),
  SECP256K1_PUB("secp256k1-pub", "key", 0xe7),
  ED25519_PUB("ed25519-pub", "key", 0xed);

  private final String codecName;
  private final String tag;
  private final int code;

  Multicodec(final String codecName, final String tag, final int code) {
    this.codecName = codecName;
    this.tag = tag;
    this.code = code;
  }

  /** The name in the multicodec table, e.g. {@code "dag-cbor"}. */
  public String codecName() {
    return codecName;
  }

  /** The table's tag column, e.g. {@code "ipld"} or {@code "multihash"}. */
  public String tag() {
    return tag;
  }

  /** The code, e.g. {@code 0x71}. */
  public int code() {
    return code;
  }

  /** The entry with this code, if it is one of ours. */
  public static Optional<Multicodec> forCode(final long code) {
    for (final Multicodec codec : values()) {
      if (codec.code == code) {
        return Optional.of(codec);
      }
    }
    return Optional.empty();
  }

  /** The entry with this table name, if it is one of ours. */
  public static Optional<Multicodec> forName(final String name) {
    for (final Multicodec codec : values()) {
      if (codec.codecName.equals(name)) {
        return Optional.of(codec);
      }
    }
    return Optional.empty();
  }

  /** The table name of {@code code} when it is one of ours, else the code in hex, {@code 0x..}. */
  public static String nameOf(final long code) {
    return forCode(code).map(Multicodec::codecName)
        .orElseGet(() -> "0x" + Long.toHexString(code));
  }
}
