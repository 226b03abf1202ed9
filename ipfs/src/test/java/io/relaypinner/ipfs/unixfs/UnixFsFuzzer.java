package io.relaypinner.ipfs.unixfs;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.relaypinner.ipfs.blockstore.MemoryBlockstore;
import io.relaypinner.ipfs.dagpb.DagPbException;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.multiformats.Multicodec;
import io.relaypinner.multiformats.Multihash;
import io.relaypinner.testkit.FuzzCheck;

/**
 * Jazzer: a hostile dag-pb root as the gateway meets it (stat, list, read): refused with a
 * UnixFS or DAG-PB error, never anything else.
 */
class UnixFsFuzzer {
  @FuzzTest
  void read(final byte[] input) throws Exception {
    final MemoryBlockstore blocks = new MemoryBlockstore();
    final Cid root = Cid.v1(Multicodec.DAG_PB, Multihash.sha2_256(input));
    blocks.put(root, input);
    final UnixFsReader reader = new UnixFsReader(blocks);
    FuzzCheck.accepts(() -> {
      final UnixFsEntry entry = reader.stat(root);
      if (entry.kind().isDirectory()) {
        reader.list(root);
      } else if (entry.kind().isFile()) {
        try (var in = reader.open(root)) {
          in.readAllBytes();
        }
      }
    }, UnixFsException.class, DagPbException.class);
  }
}
