package io.relaypinner.orbitdb;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.relaypinner.ipfs.blockstore.Blockstore;
import io.relaypinner.ipfs.blockstore.MemoryBlockstore;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.multiformats.Multicodec;
import io.relaypinner.multiformats.Multihash;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What interop/js/common/orbitdb-peer.mjs printed: databases created by real OrbitDB (3 on stack
 * A, 4 on stack B), their entries as the JS log lists them, and every block of the JS node's
 * blockstore. Loaded from the committed vectors in src/test/resources or from a live run.
 */
public record JsDump(JsonNode root, Map<Multihash, byte[]> blocks) {
  private static final ObjectMapper JSON = new ObjectMapper();

  /** One database of the dump. */
  public record Db(String name, String type, String identityType, String identityId,
      OrbitDbAddress address, String accessController, JsonNode entries, List<String> heads) {}

  public static JsDump parse(final JsonNode root) {
    // Helia lists its blockstore by multihash, as raw-codec CIDs; OrbitDB names dag-cbor CIDs.
    final Map<Multihash, byte[]> blocks = new LinkedHashMap<>();
    root.get("blocks").fields().forEachRemaining(e -> blocks.put(Cid.parse(e.getKey())
        .multihash(),
        Base64.getDecoder().decode(e.getValue().asText())));
    return new JsDump(root, blocks);
  }

  /** A committed vector file, e.g. {@code orbitdb-vectors-stack-a.json}. */
  public static JsDump resource(final String name) {
    try (InputStream in = JsDump.class.getResourceAsStream("/" + name)) {
      if (in == null) {
        throw new IllegalStateException("missing test resource " + name);
      }
      return parse(JSON.readTree(in));
    } catch (final IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  public List<Db> dbs() {
    final List<Db> out = new ArrayList<>();
    for (final JsonNode db : root.get("dbs")) {
      final List<String> heads = new ArrayList<>();
      db.get("heads").forEach(h -> heads.add(h.asText()));
      out.add(new Db(db.get("name").asText(), db.get("type").asText(),
          db.get("identityType").asText(), db.get("identityId").asText(),
          OrbitDbAddress.parse(db.get("address").asText()),
          db.get("accessController").asText(), db.get("entries"), heads));
    }
    return out;
  }

  public Db db(final String name) {
    return dbs().stream().filter(d -> d.name().equals(name)).findFirst().orElseThrow();
  }

  public byte[] block(final Cid cid) {
    final byte[] bytes = blocks.get(cid.multihash());
    if (bytes == null) {
      throw new IllegalStateException("no block " + cid + " in the dump");
    }
    return bytes.clone();
  }

  public byte[] block(final String cid) {
    return block(Cid.parse(cid));
  }

  /** The intruder's entry block (an identity the access controller does not list). */
  public byte[] intruderBlock() {
    return Base64.getDecoder().decode(root.get("intruder").get("block").asText());
  }

  /** Puts every block into {@code store}. */
  public void copyTo(final Blockstore store) {
    blocks.forEach((multihash, bytes) -> store.put(Cid.v1(Multicodec.RAW, multihash), bytes));
  }

  /** A fetcher over the dump's blocks, as if a peer served them. */
  public BlockFetcher fetcher() {
    final MemoryBlockstore store = new MemoryBlockstore();
    copyTo(store);
    return new BlockstoreFetcher(store);
  }
}
