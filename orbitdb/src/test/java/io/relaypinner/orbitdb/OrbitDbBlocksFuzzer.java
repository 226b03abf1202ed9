package io.relaypinner.orbitdb;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.multiformats.Multicodec;
import io.relaypinner.multiformats.Multihash;
import io.relaypinner.orbitdb.identity.Identity;
import io.relaypinner.orbitdb.log.Entry;
import io.relaypinner.testkit.FuzzCheck;

/**
 * Jazzer: the OrbitDB blocks a peer hands us (log entry, manifest, identity), each addressed by
 * its own CID so decoding gets past the hash check: refused as a malformed block, nothing else.
 */
class OrbitDbBlocksFuzzer {
  @FuzzTest
  void decode(final byte[] input) throws Exception {
    final Cid cid = Cid.v1(Multicodec.DAG_CBOR, Multihash.sha2_256(input));
    FuzzCheck.accepts(() -> Entry.decode(cid, input), MalformedBlockException.class);
    FuzzCheck.accepts(() -> Manifest.decode(OrbitDbAddress.parse("/orbitdb/"
        + cid.toString(io.relaypinner.multiformats.Multibase.Base.BASE58BTC)), input),
        MalformedBlockException.class);
    FuzzCheck.accepts(() -> Identity.decode(cid, input), MalformedBlockException.class);
  }
}
