package io.relaypinner.orbitdb;

import io.relaypinner.ipfs.blockstore.Blockstore;
import io.relaypinner.multiformats.Cid;
import java.util.NoSuchElementException;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;

/** A {@link BlockFetcher} over a local {@link Blockstore}: fails for blocks it does not hold. */
public final class BlockstoreFetcher implements BlockFetcher {
  private final Blockstore blockstore;

  public BlockstoreFetcher(final Blockstore blockstore) {
    this.blockstore = Objects.requireNonNull(blockstore, "blockstore");
  }

  @Override
  public CompletableFuture<byte[]> fetch(final Cid cid) {
    return blockstore.get(cid).map(CompletableFuture::completedFuture)
        .orElseGet(() -> CompletableFuture.failedFuture(
            new NoSuchElementException("block " + cid + " not found")));
  }
}
