package io.relaypinner.relay.replication;

import io.relaypinner.ipfs.blockstore.Blockstore;
import io.relaypinner.ipfs.dagcbor.DagCbor;
import io.relaypinner.ipfs.dagcbor.DagCborValue;
import io.relaypinner.libp2p.crypto.Secp256k1PrivateKey;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.multiformats.Multibase;
import io.relaypinner.orbitdb.Manifest;
import io.relaypinner.orbitdb.OrbitDbAddress;
import io.relaypinner.orbitdb.access.AccessControllerRef;
import io.relaypinner.orbitdb.access.IpfsAccessController;
import io.relaypinner.orbitdb.identity.Hex;
import io.relaypinner.orbitdb.identity.Identity;
import io.relaypinner.orbitdb.log.Entry;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A minimal OrbitDB writer for relay tests (a copy of the orbitdb module's JavaWriter), following what OrbitDB does (publickey identity, entries
 * signed over {v, id, next, refs, clock, payload}); checked against JS vectors by the verifier
 * tests, so logs of any shape can be built here.
 */
public final class TestWriter {
  private static final SecureRandom RANDOM = new SecureRandom();

  private final Secp256k1PrivateKey signingKey = Secp256k1PrivateKey.generate(RANDOM);
  private final String id;
  private final String publicKey;
  private final byte[] identityBlock;
  private final Cid identityCid;

  public TestWriter() {
    final Secp256k1PrivateKey identityKey = Secp256k1PrivateKey.generate(RANDOM);
    id = Hex.encode(identityKey.publicKey().raw());
    publicKey = Hex.encode(signingKey.publicKey().raw());
    final String idSignature = Hex.encode(signingKey.sign(id.getBytes(StandardCharsets.UTF_8)));
    final String pkSignature = Hex.encode(identityKey.sign(
        (publicKey + idSignature).getBytes(StandardCharsets.UTF_8)));
    identityBlock = Identity.encode(id, "publickey", publicKey, idSignature, pkSignature);
    identityCid = DagCbor.cid(identityBlock);
  }

  public String id() {
    return id;
  }

  public Cid identityCid() {
    return identityCid;
  }

  public byte[] identityBlock() {
    return identityBlock.clone();
  }

  /** A database whose ipfs access controller lists {@code writers}; blocks go to {@code store}. */
  public static OrbitDbAddress database(final Blockstore store, final String name,
      final List<String> writers) {
    final byte[] ac = IpfsAccessController.encode(writers);
    final Cid acCid = DagCbor.cid(ac);
    store.put(acCid, ac);
    final byte[] manifest = Manifest.encode(name, "events",
        "/ipfs/" + acCid.toString(Multibase.Base.BASE58BTC), null);
    final Cid manifestCid = DagCbor.cid(manifest);
    store.put(manifestCid, manifest);
    return new OrbitDbAddress(manifestCid);
  }

  /** An events entry block. */
  public byte[] entry(final OrbitDbAddress address, final long time, final List<Cid> next,
      final List<Cid> refs, final DagCborValue value) {
    final Map<String, DagCborValue> fields = new HashMap<>();
    fields.put("v", DagCborValue.of(2));
    fields.put("id", DagCborValue.of(address.toString()));
    fields.put("next", texts(next));
    fields.put("refs", texts(refs));
    fields.put("clock", DagCborValue.map(Map.of("id", DagCborValue.of(publicKey),
        "time", DagCborValue.of(time))));
    fields.put("payload", DagCborValue.map(Map.of("op", DagCborValue.of("ADD"),
        "key", DagCborValue.nullValue(), "value", value)));
    final byte[] signed = DagCbor.encode(DagCborValue.map(fields));
    fields.put("key", DagCborValue.of(publicKey));
    fields.put("identity", DagCborValue.of(identityCid.toString(Multibase.Base.BASE58BTC)));
    fields.put("sig", DagCborValue.of(Hex.encode(signingKey.sign(signed))));
    return DagCbor.encode(DagCborValue.map(fields));
  }

  /**
   * A linear log of {@code count} entries like OrbitDB writes it (next = previous entry, refs =
   * entries 2, 4, 8, … back); blocks go into {@code store}, oldest first in the result.
   */
  public List<Entry> chain(final Blockstore store, final OrbitDbAddress address,
      final int count) {
    final List<Entry> out = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      final List<Cid> next = i == 0 ? List.of() : List.of(out.get(i - 1).cid());
      final List<Cid> refs = new ArrayList<>();
      for (int back = 2; back <= 16 && i - back >= 0; back *= 2) {
        refs.add(out.get(i - back).cid());
      }
      final byte[] block = entry(address, i + 1, next, refs,
          DagCborValue.map(Map.of("i", DagCborValue.of(i))));
      final Entry entry = Entry.decode(block);
      store.put(entry.cid(), block);
      out.add(entry);
    }
    return out;
  }

  private static DagCborValue texts(final List<Cid> cids) {
    final List<DagCborValue> items = new ArrayList<>();
    for (final Cid cid : cids) {
      items.add(DagCborValue.of(cid.toString(Multibase.Base.BASE58BTC)));
    }
    return DagCborValue.list(items);
  }

  /** The ref type for the write list (tests that build controllers by hand). */
  public static AccessControllerRef ref(final Cid acManifest) {
    return AccessControllerRef.parse("/ipfs/" + acManifest.toString(Multibase.Base.BASE58BTC));
  }
}
