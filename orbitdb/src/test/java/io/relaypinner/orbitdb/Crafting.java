package io.relaypinner.orbitdb;

import io.relaypinner.ipfs.dagcbor.DagCbor;
import io.relaypinner.ipfs.dagcbor.DagCborValue;
import io.relaypinner.libp2p.crypto.Secp256k1PrivateKey;
import io.relaypinner.orbitdb.identity.Hex;
import io.relaypinner.orbitdb.log.Entry;
import java.util.HashMap;
import java.util.Map;

/** Entry blocks crafted in Java from real ones: the attacks the verifier must refuse. */
public final class Crafting {
  private Crafting() {}

  /** {@code block} with some top-level fields replaced (no re-signing). */
  public static byte[] withFields(final byte[] block, final Map<String, DagCborValue> changes) {
    final Map<String, DagCborValue> fields = new HashMap<>(DagCbor.decode(block).asMap()
        .entries());
    fields.putAll(changes);
    return DagCbor.encode(DagCborValue.map(fields));
  }

  /** The same entry with another payload and the original signature. */
  public static byte[] forgedPayload(final byte[] block) {
    return withFields(block, Map.of("payload", DagCborValue.map(Map.of(
        "op", DagCborValue.of("ADD"), "key", DagCborValue.nullValue(),
        "value", DagCborValue.of("forged")))));
  }

  /** The same entry signed correctly, but by {@code key}, which is not the identity's key. */
  public static byte[] signedByOtherKey(final byte[] block, final Secp256k1PrivateKey key) {
    final byte[] signed = Entry.decode(block).signedBytes();
    return withFields(block, Map.of(
        "key", DagCborValue.of(Hex.encode(key.publicKey().raw())),
        "sig", DagCborValue.of(Hex.encode(key.sign(signed)))));
  }
}
