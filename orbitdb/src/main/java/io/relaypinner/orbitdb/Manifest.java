package io.relaypinner.orbitdb;

import io.relaypinner.ipfs.dagcbor.DagCbor;
import io.relaypinner.ipfs.dagcbor.DagCborException;
import io.relaypinner.ipfs.dagcbor.DagCborValue;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.orbitdb.access.AccessControllerRef;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * The manifest block an OrbitDB address names ({@code src/manifest-store.js}): a dag-cbor map
 * {@code {name, type, accessController, meta?}}. {@code type} is the database type
 * ({@code events}, {@code keyvalue}, {@code documents} or a custom one); {@code accessController}
 * is {@code /<acType>/<cid>}.
 *
 * @param cid the block's CID, which is the address
 * @param meta the application's {@code meta} value, or null when the manifest has none
 */
public record Manifest(Cid cid, String name, String type, AccessControllerRef accessController,
    DagCborValue meta) {
  /** Largest manifest block accepted. */
  public static final int MAX_BLOCK_SIZE = 64 * 1024;

  private static final Set<String> KEYS = Set.of("name", "type", "accessController", "meta");

  public Manifest {
    Objects.requireNonNull(cid, "cid");
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(type, "type");
    Objects.requireNonNull(accessController, "accessController");
  }

  /** The database address. */
  public OrbitDbAddress address() {
    return new OrbitDbAddress(cid);
  }

  /** The {@code meta} value, if present. */
  public Optional<DagCborValue> metaValue() {
    return Optional.ofNullable(meta);
  }

  /**
   * Decodes a manifest block fetched for {@code address}; the bytes must hash to the address.
   *
   * @throws MalformedBlockException when the bytes do not hash to the address, are not DAG-CBOR
   *     or lack a field
   */
  public static Manifest decode(final OrbitDbAddress address, final byte[] block) {
    if (block.length > MAX_BLOCK_SIZE) {
      throw new MalformedBlockException("manifest block of " + block.length + " bytes exceeds "
          + MAX_BLOCK_SIZE);
    }
    if (!address.manifest().multihash().verify(block)) {
      throw new MalformedBlockException("manifest block does not hash to " + address);
    }
    try {
      final DagCborValue.Map map = DagCbor.decode(block).asMap();
      for (final String key : map.entries().keySet()) {
        if (!KEYS.contains(key)) {
          throw new MalformedBlockException("manifest has an unknown field \"" + key + "\"");
        }
      }
      final String name = map.require("name").asText();
      final String type = map.require("type").asText();
      final AccessControllerRef ac = AccessControllerRef.parse(
          map.require("accessController").asText());
      return new Manifest(address.manifest(), name, type, ac, map.get("meta"));
    } catch (final DagCborException e) {
      throw new MalformedBlockException("malformed manifest " + address + ": " + e.getMessage(),
          e);
    }
  }

  /** The canonical block for these fields (tests, and re-serving what was decoded). */
  public static byte[] encode(final String name, final String type,
      final String accessController, final DagCborValue meta) {
    final java.util.Map<String, DagCborValue> m = new java.util.HashMap<>();
    m.put("name", DagCborValue.of(name));
    m.put("type", DagCborValue.of(type));
    m.put("accessController", DagCborValue.of(accessController));
    if (meta != null) {
      m.put("meta", meta);
    }
    return DagCbor.encode(DagCborValue.map(m));
  }
}
