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

  /** Removes a block; false when it was not held. */
  boolean delete(Cid cid);

  /**
   * Visits every stored block's CID (as CIDv1 {@code raw} when the store only keeps multihashes;
   * callers compare by multihash).
   */
  void forEachKey(Consumer<Cid> visitor);
}
