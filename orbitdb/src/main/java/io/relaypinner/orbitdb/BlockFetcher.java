package io.relaypinner.orbitdb;

import io.relaypinner.multiformats.Cid;
import java.util.concurrent.CompletableFuture;

/**
 * Where the OrbitDB code gets blocks it does not hold: bitswap in the node, a local store in
 * tests. The returned bytes are untrusted; callers check that they hash to {@code cid}.
 */
@FunctionalInterface
public interface BlockFetcher {
  /**
   * The bytes of {@code cid}. Completes exceptionally when the block cannot be had (not found,
   * timed out, cancelled); implementations bound their own waiting.
   */
  CompletableFuture<byte[]> fetch(Cid cid);
}
