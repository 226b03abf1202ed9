package io.relaypinner.relay.storage;

import io.relaypinner.multiformats.Multihash;
import java.util.function.Consumer;

/**
 * Blocks garbage collection keeps although no pin reaches them, visited one at a time (e.g.
 * {@link LogMembers}), so that {@link StorageGc} can put them in its scratch space instead of a
 * set in the heap.
 */
@FunctionalInterface
public interface KeptBlocks {
  /** Keeps nothing. */
  KeptBlocks NONE = visitor -> { };

  /** Calls {@code visitor} with each kept block (a block may come more than once). */
  void forEach(Consumer<Multihash> visitor);
}
