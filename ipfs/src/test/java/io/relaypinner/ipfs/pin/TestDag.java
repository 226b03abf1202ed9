package io.relaypinner.ipfs.pin;

import io.relaypinner.ipfs.blockstore.Blockstore;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.multiformats.Multicodec;
import io.relaypinner.multiformats.Multihash;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Test fixture: builds small DAGs of raw leaves and {@link TestListCodec} parents in memory. */
final class TestDag {
  private final Map<Cid, byte[]> blocks = new LinkedHashMap<>();

  Cid leaf(final String text) {
    final byte[] data = text.getBytes(StandardCharsets.UTF_8);
    final Cid cid = Cid.v1(Multicodec.RAW, Multihash.sha2_256(data));
    blocks.put(cid, data);
    return cid;
  }

  Cid node(final String label, final Cid... children) {
    final byte[] data = TestListCodec.encode(label, List.of(children));
    final Cid cid = TestListCodec.cidOf(data);
    blocks.put(cid, data);
    return cid;
  }

  byte[] bytes(final Cid cid) {
    return blocks.get(cid);
  }

  /** Puts every block built so far except {@code skip}. */
  void putAll(final Blockstore store, final Cid... skip) {
    final List<Cid> skipped = List.of(skip);
    blocks.forEach((cid, data) -> {
      if (!skipped.contains(cid)) {
        store.put(cid, data);
      }
    });
  }
}
