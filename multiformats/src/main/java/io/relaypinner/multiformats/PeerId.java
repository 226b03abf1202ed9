package io.relaypinner.multiformats;

import java.util.Optional;

/**
 * A libp2p peer ID as specified by {@code libp2p/specs} {@code peer-ids/peer-ids.md}: the
 * multihash of the protobuf-encoded public key ({@code PublicKey { KeyType Type = 1; bytes Data =
 * 2; }}), using the identity multihash when the encoded key is at most {@value
 * #MAX_INLINE_KEY_LENGTH} bytes (Ed25519, secp256k1) and sha2-256 otherwise (RSA, ECDSA).
 *
 * <p>Text forms (spec, "String representation"): the legacy bare base58btc multihash
 * ({@code 12D3KooW…}, {@code 16Uiu2HA…}, {@code Qm…}), which {@link #toString()} prints, and a
 * CIDv1 with codec libp2p-key ({@code bafz…}, {@code k51…}); {@link #parse} accepts both.
 *
 * <p>Checks: the multihash must be identity or sha2-256; an identity digest must be a well-formed
 * deterministic {@code PublicKey} protobuf of at most {@value #MAX_INLINE_KEY_LENGTH} bytes
 * (field 1 key type 0 to 3, then field 2 with the key, nothing else). The same shape check
 * applies to {@link #fromPublicKey}, which catches a raw key passed by mistake. Text is limited to
 * {@value #MAX_TEXT_LENGTH} characters.
 */
public record PeerId(Multihash multihash) {
  /** Encoded keys up to this length are inlined with the identity multihash. */
  public static final int MAX_INLINE_KEY_LENGTH = 42;

  /** Longest text {@link #parse} accepts. */
  public static final int MAX_TEXT_LENGTH = 256;

  private static final int MAX_KEY_TYPE = 3;

  /**
   * Validates.
   *
   * @throws MultiformatException when the multihash is neither identity nor sha2-256, or an
   *     identity digest is not an inline public key
   */
  public PeerId {
    if (multihash.code() == Multicodec.IDENTITY.code()) {
      final byte[] key = multihash.digest();
      if (key.length > MAX_INLINE_KEY_LENGTH) {
        throw new MultiformatException(
            "identity PeerId digest length " + key.length + " exceeds "
                + MAX_INLINE_KEY_LENGTH);
      }
      checkPublicKeyShape(key);
    } else if (multihash.code() != Multicodec.SHA2_256.code()) {
      throw new MultiformatException(
          "PeerId multihash must be identity or sha2-256, got " + multihash.codeName());
    }
  }

  /**
   * The peer ID of a public key.
   *
   * @param protobufEncodedPublicKey the libp2p {@code PublicKey} protobuf, not the raw key
   * @throws MultiformatException when the bytes are not a {@code PublicKey} protobuf
   */
  public static PeerId fromPublicKey(final byte[] protobufEncodedPublicKey) {
    checkPublicKeyShape(protobufEncodedPublicKey);
    if (protobufEncodedPublicKey.length <= MAX_INLINE_KEY_LENGTH) {
      return new PeerId(Multihash.identity(protobufEncodedPublicKey));
    }
    return new PeerId(Multihash.sha2_256(protobufEncodedPublicKey));
  }

  /**
   * The peer ID whose binary form (a multihash) is {@code multihashBytes}.
   *
   * @throws MultiformatException when the bytes are not an identity or sha2-256 peer ID
   */
  public static PeerId fromBytes(final byte[] multihashBytes) {
    return new PeerId(Multihash.decode(multihashBytes));
  }

  /**
   * The peer ID in a CID: it must be a CIDv1 with codec libp2p-key.
   *
   * @throws MultiformatException for another codec or an unsuitable multihash
   */
  public static PeerId fromCid(final Cid cid) {
    if (cid.version() != 1 || cid.codec() != Multicodec.LIBP2P_KEY.code()) {
      throw new MultiformatException(
          "a PeerId CID must be CIDv1 with codec libp2p-key (0x72), got CIDv" + cid.version()
              + " " + cid.codecName());
    }
    return new PeerId(cid.multihash());
  }

  /**
   * Parses peer ID text: bare base58btc when it starts with {@code 1} or {@code Q} (as the spec
   * says), otherwise a multibase CIDv1 with codec libp2p-key.
   *
   * @throws MultiformatException when the text is not a valid peer ID
   */
  public static PeerId parse(final CharSequence text) {
    if (text.length() == 0) {
      throw new MultiformatException("empty PeerId text");
    }
    if (text.length() > MAX_TEXT_LENGTH) {
      throw new MultiformatException(
          "PeerId text of " + text.length() + " characters exceeds the limit of "
              + MAX_TEXT_LENGTH);
    }
    final char first = text.charAt(0);
    if (first == '1' || first == 'Q') {
      return fromBytes(Base58.decode(text));
    }
    return fromCid(Cid.parse(text));
  }

  /** The binary peer ID: the multihash bytes. */
  public byte[] bytes() {
    return multihash.bytes();
  }

  /** The legacy text form: base58btc of the multihash, no prefix. */
  public String toBase58() {
    return Base58.encode(multihash.bytes());
  }

  /** The same as {@link #toBase58()}. */
  @Override
  public String toString() {
    return toBase58();
  }

  /** The CIDv1 form, codec libp2p-key. */
  public Cid toCid() {
    return Cid.v1(Multicodec.LIBP2P_KEY, multihash);
  }

  /** The CIDv1 form in base36 ({@code k…}), as used in IPNS names and DNS labels. */
  public String toBase36Cid() {
    return toCid().toString(Multibase.Base.BASE36);
  }

  /** Whether the public key is inlined (identity multihash). */
  public boolean isIdentity() {
    return multihash.code() == Multicodec.IDENTITY.code();
  }

  /** The inlined {@code PublicKey} protobuf, for identity peer IDs; empty for sha2-256 ones. */
  public Optional<byte[]> publicKeyBytes() {
    return isIdentity() ? Optional.of(multihash.digest()) : Optional.empty();
  }

  /**
   * Checks {@code 08 <type> 12 <varint length> <key>} with nothing after the key: the
   * deterministic encoding that libp2p requires, so that the peer ID is reproducible.
   */
  private static void checkPublicKeyShape(final byte[] key) {
    if (key.length < 4 || key[0] != 0x08) {
      throw notAKey(key, "expected field 1 (0x08) at offset 0");
    }
    final int type = key[1] & 0xFF;
    if (type > MAX_KEY_TYPE) {
      throw notAKey(key, "unknown key type " + type + " at offset 1");
    }
    if (key[2] != 0x12) {
      throw notAKey(key, "expected field 2 (0x12) at offset 2");
    }
    final long length;
    try {
      length = Uvarint.read(key, 3, key.length);
    } catch (final MultiformatException e) {
      throw notAKey(key, e.getMessage());
    }
    final int start = 3 + Uvarint.size(length);
    if (length == 0 || length != key.length - start) {
      throw notAKey(
          key, "key data length " + length + " but " + (key.length - start) + " bytes follow");
    }
  }

  private static MultiformatException notAKey(final byte[] key, final String detail) {
    return new MultiformatException(
        "not a libp2p PublicKey protobuf (" + key.length + " bytes): " + detail);
  }
}
