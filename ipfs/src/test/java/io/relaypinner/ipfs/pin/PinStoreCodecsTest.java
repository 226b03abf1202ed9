package io.relaypinner.ipfs.pin;

import static org.assertj.core.api.Assertions.assertThat;

import io.relaypinner.ipfs.blockstore.FlatFsBlockstore;
import io.relaypinner.ipfs.dagcbor.DagCbor;
import io.relaypinner.ipfs.dagcbor.DagCborValue;
import io.relaypinner.ipfs.datastore.MvStoreDatastore;
import io.relaypinner.ipfs.unixfs.UnixFsImporter;
import io.relaypinner.ipfs.unixfs.UnixFsReader;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.multiformats.Multicodec;
import io.relaypinner.multiformats.Multihash;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Pins and GC with the real codecs, on disk: an OrbitDB-like DAG-CBOR entry that links to a
 * 3 MiB UnixFS file (dag-pb root, raw leaves), as the relay will pin them.
 */
class PinStoreCodecsTest {
  private static final PinHolder HOLDER = PinHolder.of("test", "holder");
  @Test
  void pin_shouldKeepAWholeUnixFsFileLinkedFromDagCbor_acrossGcAndRestart(
      @TempDir final Path dir) throws Exception {
    final byte[] content = new byte[3 * 1024 * 1024 + 17];
    new Random(7).nextBytes(content);
    final Cid entry;
    final Cid file;
    try (FlatFsBlockstore blocks = new FlatFsBlockstore(dir.resolve("blocks"));
        MvStoreDatastore datastore = new MvStoreDatastore(dir.resolve("datastore.mv"))) {
      file = new UnixFsImporter(blocks, UnixFsImporter.Options.HELIA).importBytes(content);
      assertThat(file.codec()).isEqualTo(Multicodec.DAG_PB.code());
      final byte[] entryBlock = DagCbor.encode(DagCborValue.map(Map.of(
          "payload", DagCborValue.map(Map.of("media", DagCborValue.of(file))),
          "v", DagCborValue.of(2))));
      entry = DagCbor.cid(entryBlock);
      blocks.put(entry, entryBlock);
      final byte[] strayBytes = "not pinned".getBytes(StandardCharsets.UTF_8);
      final Cid stray = Cid.v1(Multicodec.RAW, Multihash.sha2_256(strayBytes));
      blocks.put(stray, strayBytes);

      final PinStore pins = new PinStore(datastore, blocks, CodecLinkResolver.standard());
      assertThat(pins.pin(entry, HOLDER)).isInstanceOf(PinResult.Pinned.class);
      final GcResult gc = pins.gc();
      assertThat(gc.removed()).isEqualTo(1);
      assertThat(blocks.has(stray)).isFalse();
      // entry + file root + 4 raw leaves (3 MiB + 17 bytes in 1 MiB chunks)
      assertThat(blocks.blockCount()).isEqualTo(6);
    }
    try (FlatFsBlockstore blocks = new FlatFsBlockstore(dir.resolve("blocks"));
        MvStoreDatastore datastore = new MvStoreDatastore(dir.resolve("datastore.mv"))) {
      final PinStore pins = new PinStore(datastore, blocks, CodecLinkResolver.standard());
      assertThat(pins.isPinned(entry)).isTrue();
      assertThat(pins.gc().removed()).isZero();
      try (InputStream in = new UnixFsReader(blocks).open(file)) {
        assertThat(in.readAllBytes()).isEqualTo(content);
      }
    }
  }
}
