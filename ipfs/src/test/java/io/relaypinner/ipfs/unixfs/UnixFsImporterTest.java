package io.relaypinner.ipfs.unixfs;

import static org.assertj.core.api.Assertions.assertThat;

import io.relaypinner.ipfs.blockstore.MemoryBlockstore;
import io.relaypinner.ipfs.dagpb.DagPb;
import io.relaypinner.ipfs.dagpb.PbLink;
import io.relaypinner.ipfs.dagpb.PbNode;
import io.relaypinner.ipfs.unixfs.pb.UnixFsProto;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.multiformats.Multicodec;
import java.io.ByteArrayInputStream;
import java.util.HexFormat;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class UnixFsImporterTest {
  private final MemoryBlockstore store = new MemoryBlockstore();

  @Test
  void importBytes_shouldGiveEmptyRawBlock_whenContentEmpty() {
    final Cid cid =
        new UnixFsImporter(store, UnixFsImporter.Options.HELIA).importBytes(new byte[0]);

    assertThat(cid).hasToString("bafkreihdwdcefgh4dqkjv67uzcmw7ojee6xedzdetojuzjevtenxquvyku");
    assertThat(store.get(cid)).hasValueSatisfying(bytes -> assertThat(bytes).isEmpty());
  }

  @Test
  void importStream_shouldGiveOneRawBlock_whenContentIsExactlyOneChunk() {
    final byte[] content = UnixFsReaderTest.pattern(16);
    final Cid cid = new UnixFsImporter(store, new UnixFsImporter.Options(16, 4))
        .importStream(new ByteArrayInputStream(content));

    assertThat(cid.codec()).isEqualTo(Multicodec.RAW.code());
    assertThat(store.count()).isEqualTo(1);
  }

  @Test
  void importBytes_shouldWriteJsShapedParent_whenTwoChunks() throws Exception {
    final byte[] content = UnixFsReaderTest.pattern(17);
    final Cid root = new UnixFsImporter(store, new UnixFsImporter.Options(16, 4))
        .importBytes(content);

    assertThat(root.version()).isEqualTo(1);
    assertThat(root.codec()).isEqualTo(Multicodec.DAG_PB.code());
    final PbNode node = DagPb.decode(store.get(root).orElseThrow());
    // Type=File, filesize=17, blocksizes 16 and 1 (unpacked), nothing else.
    assertThat(HexFormat.of().formatHex(node.data().orElseThrow())).isEqualTo("0802181120102001");
    assertThat(node.links()).extracting(PbLink::name).containsOnly(Optional.of(""));
    assertThat(node.links()).extracting(PbLink::tsize)
        .containsExactly(Optional.of(16L), Optional.of(1L));
    final UnixFsProto.Data data = UnixFsProto.Data.parseFrom(node.data().orElseThrow());
    assertThat(data.getBlocksizesList()).containsExactly(16L, 1L);
  }

  @Test
  void importBytes_shouldGiveLoneTrailingLeafItsOwnParent_whenOneOverAFullNode() {
    final byte[] content = UnixFsReaderTest.pattern(5);
    final Cid root = new UnixFsImporter(store, new UnixFsImporter.Options(1, 4))
        .importBytes(content);

    final PbNode top = DagPb.decode(store.get(root).orElseThrow());
    assertThat(top.links()).hasSize(2);
    final PbNode second = DagPb.decode(store.get(top.links().get(1).hash()).orElseThrow());
    assertThat(second.links()).hasSize(1);
    final PbNode first = DagPb.decode(store.get(top.links().get(0).hash()).orElseThrow());
    assertThat(top.links().get(0).tsize())
        .contains((long) DagPb.encode(first).length + 4);
    assertThat(UnixFsReaderTest.readAll(new UnixFsReader(store).open(root))).isEqualTo(content);
  }
}
