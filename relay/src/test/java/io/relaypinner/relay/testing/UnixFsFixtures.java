package io.relaypinner.relay.testing;

import io.relaypinner.ipfs.blockstore.Blockstore;
import io.relaypinner.ipfs.dagpb.DagPb;
import io.relaypinner.ipfs.dagpb.PbLink;
import io.relaypinner.ipfs.dagpb.PbNode;
import io.relaypinner.ipfs.unixfs.pb.UnixFsProto;
import io.relaypinner.multiformats.Cid;
import java.util.List;

/** UnixFS content the gateway tests build by hand (the importer makes files only). */
public final class UnixFsFixtures {
  private UnixFsFixtures() {}

  /** Stores a UnixFS directory holding {@code child} as {@code name}; returns its CID. */
  public static Cid directory(final Blockstore store, final String name, final Cid child) {
    final byte[] data = UnixFsProto.Data.newBuilder()
        .setType(UnixFsProto.Data.DataType.Directory).build().toByteArray();
    final byte[] block = DagPb.encode(PbNode.of(data, List.of(PbLink.of(child, name, 1))));
    final Cid cid = DagPb.cidOf(block);
    store.put(cid, block);
    return cid;
  }
}
