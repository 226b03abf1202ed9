package io.relaypinner.orbitdb;

import io.relaypinner.ipfs.blockstore.Blockstore;
import io.relaypinner.ipfs.dagcbor.DagCbor;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.orbitdb.access.AccessController;
import io.relaypinner.orbitdb.access.AccessControllerRef;
import io.relaypinner.orbitdb.access.IpfsAccessController;
import io.relaypinner.orbitdb.access.OrbitDbAccessController;
import io.relaypinner.orbitdb.log.Entry;
import java.util.ArrayList;
import java.util.List;

/** Builds verification state straight from a JS dump (no log, no network). */
public final class TestSupportAccess {
  private TestSupportAccess() {}

  /** The access controller of a dumped database, with an orbitdb one refreshed from the dump. */
  public static AccessController of(final JsDump dump, final JsDump.Db db) {
    final Manifest manifest = Manifest.decode(db.address(), dump.block(db.address().manifest()));
    final AccessControllerRef ref = manifest.accessController();
    if (ref.type().equals(AccessControllerRef.IPFS)) {
      return IpfsAccessController.decode(ref, dump.block(ref.ipfsManifest()));
    }
    final OrbitDbAddress acAddress = ref.orbitDbAddress();
    final Manifest acManifest = Manifest.decode(acAddress, dump.block(acAddress.manifest()));
    final IpfsAccessController acOfAc = IpfsAccessController.decode(
        acManifest.accessController(), dump.block(acManifest.accessController().ipfsManifest()));
    final OrbitDbAccessController controller = new OrbitDbAccessController(ref, acOfAc);
    final List<Entry> entries = new ArrayList<>();
    for (final JsDump.Db other : dump.dbs()) {
      if (other.address().equals(acAddress)) {
        other.entries().forEach(e -> entries.add(Entry.decode(dump.block(e.get("hash")
            .asText()))));
      }
    }
    controller.refresh(entries);
    return controller;
  }

  public static Cid put(final Blockstore store, final byte[] block) {
    final Cid cid = DagCbor.cid(block);
    store.put(cid, block);
    return cid;
  }
}
