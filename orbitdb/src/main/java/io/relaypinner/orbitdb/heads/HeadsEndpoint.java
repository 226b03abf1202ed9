package io.relaypinner.orbitdb.heads;

import io.relaypinner.multiformats.PeerId;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * One database's side of the heads exchange. Called on Netty event loops: implementations must
 * not block (hand work to an executor).
 */
public interface HeadsEndpoint {
  /** The entry blocks of our current heads, to send one per frame. */
  CompletableFuture<List<byte[]>> heads();

  /** An entry block the peer sent (unverified: verify and join it). */
  void onHead(byte[] block, PeerId from);
}
