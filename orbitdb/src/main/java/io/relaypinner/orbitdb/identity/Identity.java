package io.relaypinner.orbitdb.identity;

import io.relaypinner.ipfs.dagcbor.DagCbor;
import io.relaypinner.ipfs.dagcbor.DagCborException;
import io.relaypinner.ipfs.dagcbor.DagCborValue;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.orbitdb.MalformedBlockException;
import java.util.HexFormat;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * An OrbitDB identity block ({@code src/identities/identity.js}), decoded but not verified:
 * dag-cbor {@code {id, type, publicKey, signatures: {id, publicKey}}}. {@code publicKey} is the
 * hex signing key that signs entries; {@code id} is what access controllers list (a hex
 * secp256k1 key for {@code publickey}, {@code did:key:…} for {@code did});
 * {@code signatures.id} is the signing key's signature of {@code id} and
 * {@code signatures.publicKey} the identity provider's signature binding the two.
 *
 * <p>The passkey providers ({@code webauthn-varsig}, {@code worker-ed25519}) write
 * {@code publicKey} and both signatures as byte strings instead: then {@link #binary()} is true and
 * the three fields hold the bytes in lower-case hex. A block mixing text and bytes is malformed.
 *
 * @param hash the block's CID, which entries name in {@code entry.identity}
 * @param binary whether {@code publicKey} and the signatures were byte strings (given here in hex)
 */
public record Identity(Cid hash, String id, String type, String publicKey, String idSignature,
    String publicKeySignature, boolean binary) {
  /** Largest identity block accepted. */
  public static final int MAX_BLOCK_SIZE = 16 * 1024;

  private static final Set<String> FIELDS = Set.of("id", "type", "publicKey", "signatures");

  public Identity {
    Objects.requireNonNull(hash, "hash");
    Objects.requireNonNull(id, "id");
    Objects.requireNonNull(type, "type");
    Objects.requireNonNull(publicKey, "publicKey");
    Objects.requireNonNull(idSignature, "idSignature");
    Objects.requireNonNull(publicKeySignature, "publicKeySignature");
  }

  /**
   * Decodes an identity block fetched as {@code hash}.
   *
   * @throws MalformedBlockException when the bytes do not hash to {@code hash} or the block has
   *     another shape
   */
  public static Identity decode(final Cid hash, final byte[] block) {
    if (block.length > MAX_BLOCK_SIZE) {
      throw new MalformedBlockException("identity block of " + block.length + " bytes exceeds "
          + MAX_BLOCK_SIZE);
    }
    if (!hash.multihash().verify(block)) {
      throw new MalformedBlockException("identity block does not hash to " + hash);
    }
    try {
      final DagCborValue.Map map = DagCbor.decode(block).asMap();
      for (final String field : map.entries().keySet()) {
        if (!FIELDS.contains(field)) {
          throw new MalformedBlockException("identity has an unknown field \"" + field + "\"");
        }
      }
      final DagCborValue.Map signatures = map.require("signatures").asMap();
      if (signatures.size() != 2) {
        throw new MalformedBlockException("identity signatures must hold exactly id and"
            + " publicKey");
      }
      final DagCborValue publicKey = map.require("publicKey");
      final DagCborValue idSignature = signatures.require("id");
      final DagCborValue publicKeySignature = signatures.require("publicKey");
      final boolean binary = publicKey.kind() == DagCborValue.Kind.BYTES;
      if ((idSignature.kind() == DagCborValue.Kind.BYTES) != binary
          || (publicKeySignature.kind() == DagCborValue.Kind.BYTES) != binary) {
        throw new MalformedBlockException("identity mixes text and byte strings in publicKey and"
            + " signatures");
      }
      return new Identity(hash, map.require("id").asText(), map.require("type").asText(),
          field(publicKey), field(idSignature), field(publicKeySignature), binary);
    } catch (final DagCborException e) {
      throw new MalformedBlockException("malformed identity " + hash + ": " + e.getMessage(), e);
    }
  }

  private static String field(final DagCborValue value) {
    return value.kind() == DagCborValue.Kind.BYTES ? Hex.encode(value.asBytes()) : value.asText();
  }

  /**
   * This identity's canonical block (dag-cbor is canonical, so it hashes to {@link #hash()} when
   * the identity was decoded from a valid block): byte strings where {@link #binary()}.
   */
  public byte[] encode() {
    // The hex of a binary identity came from its own block's bytes: always valid, any length.
    final HexFormat hex = HexFormat.of();
    return binary
        ? encode(id, type, hex.parseHex(publicKey), hex.parseHex(idSignature),
            hex.parseHex(publicKeySignature))
        : encode(id, type, publicKey, idSignature, publicKeySignature);
  }

  /** The canonical block of an identity whose key and signatures are byte strings (tests). */
  public static byte[] encode(final String id, final String type, final byte[] publicKey,
      final byte[] idSignature, final byte[] publicKeySignature) {
    return DagCbor.encode(DagCborValue.map(Map.of(
        "id", DagCborValue.of(id),
        "type", DagCborValue.of(type),
        "publicKey", DagCborValue.of(publicKey),
        "signatures", DagCborValue.map(Map.of(
            "id", DagCborValue.of(idSignature),
            "publicKey", DagCborValue.of(publicKeySignature))))));
  }

  /** The canonical block for these fields (tests). */
  public static byte[] encode(final String id, final String type, final String publicKey,
      final String idSignature, final String publicKeySignature) {
    return DagCbor.encode(DagCborValue.map(Map.of(
        "id", DagCborValue.of(id),
        "type", DagCborValue.of(type),
        "publicKey", DagCborValue.of(publicKey),
        "signatures", DagCborValue.map(Map.of(
            "id", DagCborValue.of(idSignature),
            "publicKey", DagCborValue.of(publicKeySignature))))));
  }
}
