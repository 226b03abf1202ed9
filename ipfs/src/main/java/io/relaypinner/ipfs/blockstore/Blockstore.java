package io.relaypinner.ipfs.blockstore;

import io.relaypinner.multiformats.Cid;
import java.util.Optional;
import java.util.function.Consumer;

/**
 * Content-addressed block storage. Blocks are keyed by the CID's <em>multihash</em> (as Kubo and
 * Helia key them), so the same bytes under a CIDv0 and a CIDv1, or under another codec, are one
 * block. Identity-hash CIDs hold their data inline and are never stored: {@link #get} answers
 * them from the CID itself.
 *
 * <p>Every {@link #put} verifies that the bytes hash to the CID; a mismatch throws
 * {@link InvalidBlockException} and stores nothing. Implementations are thread-safe. They may
 * block on disk I/O, so callers on Netty event loops hand calls to a bounded executor.
 *
 * <p><b>Durability and group commit.</b> A {@link #put} that returned is durable (it survives a
 * crash and a power loss, where the store is persistent at all). A {@link #stage} is visible at
 * once ({@link #has}, {@link #get}, {@link #size}) but durable only once a later {@link #sync}
 * returned: that one barrier makes every block staged before it durable together, so a batch of
 * blocks (one OrbitDB join, a bitswap batch, a DAG) costs one barrier rather than one per block.
 * Whoever persists something that references a block (a pin, a log's heads) calls {@link #sync}
 * first, so a crash never leaves a reference to a block that is not stored. A staged block lost
 * in a crash was referenced by nothing durable. Stores whose puts are durable anyway (S3, memory)
 * keep the defaults: {@code stage} is {@code put}, {@code sync} does nothing.
 */
public interface Blockstore {
  /** Whether the block is held (identity CIDs: always). */
  boolean has(Cid cid);

  /** The block's bytes, if held. */
  Optional<byte[]> get(Cid cid);

  /** The block's size in bytes, if held. */
  Optional<Integer> size(Cid cid);

  /**
   * Stores a block after checking that {@code data} hashes to {@code cid}.
   *
   * @throws InvalidBlockException when it does not (or the hash function is not supported)
   */
  void put(Cid cid, byte[] data);

  /**
   * Stores a block as {@link #put} does, except that it need not be durable before the next
   * {@link #sync}; visible to readers at once. The caller does not modify {@code data} after the
   * call. This default is {@code put} (durable on return).
   *
   * @throws InvalidBlockException when the bytes do not hash to {@code cid}
   */
  default void stage(final Cid cid, final byte[] data) {
    put(cid, data);
  }

  /**
   * The durability barrier: returns once every block staged before the call is durable (one
   * group commit for all of them, whoever staged them). Does nothing when nothing is staged; this
   * default does nothing.
   */
  default void sync() {
  }

  /** Removes a block; false when it was not held. */
  boolean delete(Cid cid);

  /**
   * Visits every stored block's CID (as CIDv1 {@code raw} when the store only keeps multihashes;
   * callers compare by multihash).
   */
  void forEachKey(Consumer<Cid> visitor);
}
