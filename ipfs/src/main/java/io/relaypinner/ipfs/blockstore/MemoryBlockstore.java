package io.relaypinner.ipfs.blockstore;

import io.relaypinner.multiformats.Cid;
import io.relaypinner.multiformats.Multihash;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;

/** A {@link Blockstore} in memory, for tests and short-lived nodes. Verifies every put. */
public final class MemoryBlockstore implements Blockstore {
  private final Map<Multihash, byte[]> blocks = new ConcurrentHashMap<>();

  @Override
  public boolean has(final Cid cid) {
    return Blocks.isIdentity(cid) || blocks.containsKey(cid.multihash());
  }

  @Override
  public Optional<byte[]> get(final Cid cid) {
    if (Blocks.isIdentity(cid)) {
      return Optional.of(cid.multihash().digest());
    }
    final byte[] data = blocks.get(cid.multihash());
    return data == null ? Optional.empty() : Optional.of(data.clone());
  }

  @Override
  public Optional<Integer> size(final Cid cid) {
    if (Blocks.isIdentity(cid)) {
      return Optional.of(cid.multihash().digest().length);
    }
    // The stored value's length: no copy of the block.
    final byte[] data = blocks.get(cid.multihash());
    return data == null ? Optional.empty() : Optional.of(data.length);
  }

  @Override
  public void put(final Cid cid, final byte[] data) {
    Blocks.verify(cid, data);
    if (!Blocks.isIdentity(cid)) {
      blocks.putIfAbsent(cid.multihash(), data.clone());
    }
  }

  @Override
  public boolean delete(final Cid cid) {
    return blocks.remove(cid.multihash()) != null;
  }

  @Override
  public void forEachKey(final Consumer<Cid> visitor) {
    for (final Multihash multihash : blocks.keySet()) {
      visitor.accept(Blocks.rawCid(multihash));
    }
  }

  /** Number of stored (non-identity) blocks. */
  public int count() {
    return blocks.size();
  }
}
