package io.relaypinner.orbitdb.access;

import io.relaypinner.ipfs.dagcbor.DagCbor;
import io.relaypinner.ipfs.dagcbor.DagCborException;
import io.relaypinner.ipfs.dagcbor.DagCborValue;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.orbitdb.MalformedBlockException;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * OrbitDB's default access controller ({@code src/access-controllers/ipfs.js}): an immutable
 * manifest block {@code {type: 'ipfs', write: [id…]}} listing the identity ids (not keys) that
 * may write, or {@code '*'} for anyone.
 */
public final class IpfsAccessController implements AccessController {
  /** Largest manifest block accepted. */
  public static final int MAX_BLOCK_SIZE = 256 * 1024;

  /** Most writers accepted in one list. */
  public static final int MAX_WRITERS = 4096;

  private final AccessControllerRef ref;
  private final List<String> write;
  private final Set<String> writeSet;

  public IpfsAccessController(final AccessControllerRef ref, final List<String> write) {
    this.ref = Objects.requireNonNull(ref, "ref");
    this.write = List.copyOf(write);
    this.writeSet = Set.copyOf(write);
  }

  /**
   * Decodes the manifest block {@code ref} names; the bytes must hash to its CID.
   *
   * @throws MalformedBlockException when they do not, or the block has another shape
   */
  public static IpfsAccessController decode(final AccessControllerRef ref, final byte[] block) {
    final Cid cid = ref.ipfsManifest();
    if (block.length > MAX_BLOCK_SIZE) {
      throw new MalformedBlockException("access controller block of " + block.length
          + " bytes exceeds " + MAX_BLOCK_SIZE);
    }
    if (!cid.multihash().verify(block)) {
      throw new MalformedBlockException("access controller block does not hash to " + cid);
    }
    try {
      final DagCborValue.Map map = DagCbor.decode(block).asMap();
      final String type = map.require("type").asText();
      if (!type.equals(AccessControllerRef.IPFS)) {
        throw new MalformedBlockException("ipfs access controller manifest says type \"" + type
            + "\"");
      }
      final DagCborValue.List list = map.require("write").asList();
      if (list.size() > MAX_WRITERS) {
        throw new MalformedBlockException("access controller lists " + list.size()
            + " writers, more than " + MAX_WRITERS);
      }
      final List<String> write = new ArrayList<>(list.size());
      for (final DagCborValue item : list.items()) {
        write.add(item.asText());
      }
      return new IpfsAccessController(ref, write);
    } catch (final DagCborException e) {
      throw new MalformedBlockException("malformed ipfs access controller " + cid + ": "
          + e.getMessage(), e);
    }
  }

  /** The canonical manifest block for a write list (tests). */
  public static byte[] encode(final List<String> write) {
    final List<DagCborValue> items = new ArrayList<>();
    for (final String id : write) {
      items.add(DagCborValue.of(id));
    }
    return DagCbor.encode(DagCborValue.map(java.util.Map.of(
        "type", DagCborValue.of(AccessControllerRef.IPFS),
        "write", DagCborValue.list(items))));
  }

  @Override
  public String type() {
    return AccessControllerRef.IPFS;
  }

  @Override
  public AccessControllerRef ref() {
    return ref;
  }

  /** The write list as the block gave it. */
  public List<String> write() {
    return write;
  }

  @Override
  public boolean canWrite(final String identityId) {
    return writeSet.contains(identityId) || writeSet.contains(ANY);
  }

  @Override
  public String toString() {
    return "IpfsAccessController[" + ref + ", write=" + write + "]";
  }
}
