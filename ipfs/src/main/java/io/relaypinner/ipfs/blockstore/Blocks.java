package io.relaypinner.ipfs.blockstore;

import io.relaypinner.multiformats.Cid;
import io.relaypinner.multiformats.Multicodec;
import io.relaypinner.multiformats.MultiformatException;
import io.relaypinner.multiformats.Multihash;

/** Helpers shared by block stores: verification and identity CIDs. */
public final class Blocks {
  /** Largest block accepted anywhere (bitswap and Kubo use 2 MiB as the hard limit). */
  public static final int MAX_BLOCK_SIZE = 2 * 1024 * 1024;

  private Blocks() {}

  /** Whether the CID carries its data inline (identity multihash). */
  public static boolean isIdentity(final Cid cid) {
    return cid.multihash().code() == Multicodec.IDENTITY.code();
  }

  /**
   * Checks size and hash of a block offered under {@code cid}.
   *
   * @throws InvalidBlockException when the block is too large, the hash function is unsupported,
   *     or the bytes do not hash to the CID
   */
  public static void verify(final Cid cid, final byte[] data) {
    if (data.length > MAX_BLOCK_SIZE) {
      throw new InvalidBlockException(
          "block of " + data.length + " bytes exceeds the limit of " + MAX_BLOCK_SIZE);
    }
    final Multihash multihash = cid.multihash();
    final boolean matches;
    try {
      matches = multihash.verify(data);
    } catch (final MultiformatException | UnsupportedOperationException e) {
      throw new InvalidBlockException("cannot verify " + cid + ": " + e.getMessage());
    }
    if (!matches) {
      throw new InvalidBlockException("block does not hash to " + cid);
    }
  }

  /** The CIDv1 {@code raw} form of a multihash: how stores that key by multihash report keys. */
  public static Cid rawCid(final Multihash multihash) {
    return Cid.v1(Multicodec.RAW, multihash);
  }
}
