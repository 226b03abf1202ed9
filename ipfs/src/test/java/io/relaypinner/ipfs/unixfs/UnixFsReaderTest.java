package io.relaypinner.ipfs.unixfs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.ByteString;
import io.relaypinner.ipfs.blockstore.Blockstore;
import io.relaypinner.ipfs.blockstore.MemoryBlockstore;
import io.relaypinner.ipfs.dagpb.DagPb;
import io.relaypinner.ipfs.dagpb.PbLink;
import io.relaypinner.ipfs.dagpb.PbNode;
import io.relaypinner.ipfs.unixfs.UnixFsEntry.Kind;
import io.relaypinner.ipfs.unixfs.UnixFsException.Reason;
import io.relaypinner.ipfs.unixfs.pb.UnixFsProto;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.multiformats.Multicodec;
import io.relaypinner.multiformats.Multihash;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

class UnixFsReaderTest {
  private final MemoryBlockstore store = new MemoryBlockstore();
  private final UnixFsReader reader = new UnixFsReader(store);

  static byte[] pattern(final int length) {
    final byte[] out = new byte[length];
    for (int i = 0; i < length; i++) {
      out[i] = (byte) (i * 31 + (i >>> 8));
    }
    return out;
  }

  static byte[] readAll(final InputStream in) {
    try (in) {
      return in.readAllBytes();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private Cid putNode(final UnixFsProto.Data data, final List<PbLink> links) {
    final byte[] block = DagPb.encode(PbNode.of(data.toByteArray(), links));
    final Cid cid = DagPb.cidOf(block);
    store.put(cid, block);
    return cid;
  }

  private Cid putRaw(final byte[] bytes) {
    final Cid cid = Cid.v1(Multicodec.RAW, Multihash.sha2_256(bytes));
    store.put(cid, bytes);
    return cid;
  }

  private static UnixFsProto.Data.Builder data(final UnixFsProto.Data.DataType type) {
    return UnixFsProto.Data.newBuilder().setType(type);
  }

  private Cid directory(final Map<String, Cid> entries) {
    final List<PbLink> links = new ArrayList<>();
    entries.forEach((name, cid) -> links.add(PbLink.of(cid, name, 1)));
    return putNode(data(UnixFsProto.Data.DataType.Directory).build(), links);
  }

  @Test
  void open_shouldReturnBytes_whenSingleRawBlock() {
    final byte[] content = "hello".getBytes(StandardCharsets.UTF_8);
    final Cid cid = new UnixFsImporter(store, UnixFsImporter.Options.HELIA).importBytes(content);

    assertThat(cid.codec()).isEqualTo(Multicodec.RAW.code());
    assertThat(reader.stat(cid)).isEqualTo(new UnixFsEntry(cid, Kind.RAW, 5));
    assertThat(readAll(reader.open(cid))).isEqualTo(content);
    assertThat(readAll(reader.open(cid, 1, 3))).isEqualTo("ell".getBytes(StandardCharsets.UTF_8));
  }

  @Test
  void open_shouldReturnEveryRange_whenBalancedMultiLevelFile() {
    final byte[] content = pattern(95);
    final Cid root = new UnixFsImporter(store, new UnixFsImporter.Options(10, 3))
        .importBytes(content);

    assertThat(reader.stat(root)).isEqualTo(new UnixFsEntry(root, Kind.FILE, 95));
    assertThat(readAll(reader.open(root))).isEqualTo(content);
    for (int offset = 0; offset <= 100; offset++) {
      for (final int length : new int[] {0, 1, 9, 10, 11, 20, 31, 95, 200}) {
        final int from = Math.min(offset, 95);
        final int to = (int) Math.min(95L, (long) offset + length);
        assertThat(readAll(reader.open(root, offset, length)))
            .as("offset %d length %d", offset, length)
            .isEqualTo(Arrays.copyOfRange(content, from, Math.max(from, to)));
      }
    }
  }

  @Test
  void open_shouldFetchOnlyBlocksOnThePath_whenRangeInLastChunk() {
    final byte[] content = pattern(95);
    final Cid root = new UnixFsImporter(store, new UnixFsImporter.Options(10, 3))
        .importBytes(content);
    final AtomicInteger gets = new AtomicInteger();
    final UnixFsReader counting = new UnixFsReader(counting(store, cid -> gets.incrementAndGet()));

    assertThat(readAll(counting.open(root, 92, 3))).isEqualTo(Arrays.copyOfRange(content, 92, 95));
    // 10 leaves, 3 per node: root -> level-2 node -> level-1 node -> leaf.
    assertThat(gets).hasValue(4);
  }

  @Test
  void open_shouldConcatenateInlineDataAndChildren_whenDagPbLeaves() {
    final Cid leafA = putNode(data(UnixFsProto.Data.DataType.File)
        .setData(ByteString.copyFromUtf8("bb")).setFilesize(2).build(), List.of());
    final Cid leafB = putNode(data(UnixFsProto.Data.DataType.Raw)
        .setData(ByteString.copyFromUtf8("ccc")).setFilesize(3).build(), List.of());
    final Cid rawLeaf = putRaw("d".getBytes(StandardCharsets.UTF_8));
    final Cid root = putNode(data(UnixFsProto.Data.DataType.File)
        .setData(ByteString.copyFromUtf8("a")).setFilesize(7)
        .addBlocksizes(2).addBlocksizes(3).addBlocksizes(1).build(),
        List.of(PbLink.of(leafA, "", 10), PbLink.of(leafB, "", 11), PbLink.of(rawLeaf, "", 1)));

    assertThat(reader.stat(root).size()).isEqualTo(7);
    assertThat(new String(readAll(reader.open(root)), StandardCharsets.UTF_8)).isEqualTo("abbcccd");
    assertThat(new String(readAll(reader.open(root, 2, 3)), StandardCharsets.UTF_8))
        .isEqualTo("bcc");
  }

  @Test
  void resolve_shouldFindFile_whenNestedDirectories() {
    final Cid file = putRaw("jpeg".getBytes(StandardCharsets.UTF_8));
    final Cid inner = directory(new TreeMap<>(Map.of("b.jpg", file)));
    final Cid root = directory(new TreeMap<>(Map.of("a", inner, "z", file)));

    assertThat(reader.resolve(root, "/a/b.jpg")).isEqualTo(new UnixFsEntry(file, Kind.RAW, 4));
    assertThat(reader.resolve(root, "a//b.jpg/")).isEqualTo(new UnixFsEntry(file, Kind.RAW, 4));
    assertThat(reader.resolve(root, "")).isEqualTo(new UnixFsEntry(root, Kind.DIRECTORY, 0));
    assertThat(reader.list(root)).extracting(DirectoryEntry::name).containsExactly("a", "z");
  }

  @Test
  void resolve_shouldThrowNotFound_whenNameMissing() {
    final Cid file = putRaw(new byte[] {1});
    final Cid root = directory(Map.of("a", file));

    assertThatThrownBy(() -> reader.resolve(root, "/b"))
        .isInstanceOfSatisfying(UnixFsException.class, e -> {
          assertThat(e.reason()).isEqualTo(Reason.NOT_FOUND);
          assertThat(e.cid()).contains(root);
        });
    assertThatThrownBy(() -> reader.resolve(root, "/a/x"))
        .isInstanceOfSatisfying(UnixFsException.class,
            e -> assertThat(e.reason()).isEqualTo(Reason.NOT_A_DIRECTORY));
    assertThatThrownBy(() -> reader.open(root))
        .isInstanceOfSatisfying(UnixFsException.class,
            e -> assertThat(e.reason()).isEqualTo(Reason.NOT_A_FILE));
  }

  @Test
  void hash64_shouldMatchJsMurmur3_whenKnownNames() {
    // First 8 bytes of @multiformats/murmur3 murmur3128 as printed by node.
    assertThat(Murmur3.hash64("".getBytes(StandardCharsets.UTF_8))).isZero();
    assertThat(Murmur3.hash64("a".getBytes(StandardCharsets.UTF_8)))
        .isEqualTo(0x85555565f6597889L);
    assertThat(Murmur3.hash64("hello".getBytes(StandardCharsets.UTF_8)))
        .isEqualTo(0xcbd8a7b341bd9b02L);
    assertThat(Murmur3.hash64("file-1.txt".getBytes(StandardCharsets.UTF_8)))
        .isEqualTo(0xc853837405db7a88L);
    assertThat(Murmur3.hash64("a name longer than sixteen bytes".getBytes(StandardCharsets.UTF_8)))
        .isNotZero();
  }

  /** Builds a HAMT the way the spec describes, independent of the reader's walk. */
  private Cid shard(final Map<String, Cid> entries, final int bits, final int depth) {
    final int fanout = 1 << bits;
    final int pad = Integer.toHexString(fanout - 1).length();
    final TreeMap<Integer, Map<String, Cid>> buckets = new TreeMap<>();
    entries.forEach((name, cid) -> {
      final long hash = Murmur3.hash64(name.getBytes(StandardCharsets.UTF_8));
      final int index = (int) ((hash << (depth * bits)) >>> (64 - bits));
      buckets.computeIfAbsent(index, k -> new TreeMap<>()).put(name, cid);
    });
    final List<PbLink> links = new ArrayList<>();
    final byte[] bitfield = new byte[fanout / 8 == 0 ? 1 : fanout / 8];
    buckets.forEach((index, bucket) -> {
      final String prefix = String.format("%0" + pad + "X", index);
      bitfield[bitfield.length - 1 - index / 8] |= (byte) (1 << (index % 8));
      if (bucket.size() == 1) {
        final Map.Entry<String, Cid> only = bucket.entrySet().iterator().next();
        links.add(PbLink.of(only.getValue(), prefix + only.getKey(), 1));
      } else {
        links.add(PbLink.of(shard(bucket, bits, depth + 1), prefix, 1));
      }
    });
    return putNode(data(UnixFsProto.Data.DataType.HAMTShard)
        .setData(ByteString.copyFrom(bitfield)).setHashType(0x22).setFanout(fanout).build(),
        new PbNode(Optional.empty(), links).sorted().links());
  }

  @Test
  void resolve_shouldFindEveryEntry_whenHamtShardedWithSubShards() {
    final Map<String, Cid> entries = new TreeMap<>();
    for (int i = 0; i < 40; i++) {
      entries.put("file-" + i + ".txt", putRaw(("content " + i).getBytes(StandardCharsets.UTF_8)));
    }
    // Fanout 4 forces many collisions, hence sub-shards several levels deep.
    final Cid root = shard(entries, 2, 0);

    assertThat(reader.stat(root).kind()).isEqualTo(Kind.HAMT_DIRECTORY);
    entries.forEach((name, cid) -> assertThat(reader.resolve(root, "/" + name).cid())
        .as(name).isEqualTo(cid));
    assertThat(reader.list(root)).extracting(DirectoryEntry::name)
        .containsExactlyInAnyOrderElementsOf(entries.keySet());
    assertThatThrownBy(() -> reader.resolve(root, "/file-40.txt"))
        .isInstanceOfSatisfying(UnixFsException.class,
            e -> assertThat(e.reason()).isEqualTo(Reason.NOT_FOUND));
  }

  @Test
  void resolve_shouldReportEveryShardOnTheWay_whenThePathCrossesSubShards() {
    final Map<String, Cid> entries = new TreeMap<>();
    for (int i = 0; i < 40; i++) {
      entries.put("file-" + i + ".txt", putRaw(("content " + i).getBytes(StandardCharsets.UTF_8)));
    }
    final Cid root = shard(entries, 2, 0);
    final Cid outer = putNode(data(UnixFsProto.Data.DataType.Directory).build(),
        List.of(PbLink.of(root, "sharded", 1)));
    for (final String name : entries.keySet()) {
      final List<Cid> through = new ArrayList<>();
      assertThat(reader.resolve(outer, "/sharded/" + name, through::add).cid())
          .isEqualTo(entries.get(name));
      assertThat(through.subList(0, 2)).containsExactly(outer, root);
      // Each further block is a sub-shard whose links lead on to the next one or the entry.
      for (int i = 1; i < through.size(); i++) {
        final PbNode node = DagPb.decode(store.get(through.get(i)).orElseThrow());
        final Cid next = i + 1 < through.size() ? through.get(i + 1) : entries.get(name);
        assertThat(node.links()).extracting(PbLink::hash).as(name).contains(next);
      }
    }
    // Fanout 4 and 40 names: some paths go through more than one level.
    assertThat(entries.keySet()).anySatisfy(name -> {
      final List<Cid> through = new ArrayList<>();
      reader.resolve(root, "/" + name, through::add);
      assertThat(through).hasSizeGreaterThan(2);
    });
  }

  @Test
  void open_shouldThrowMissingBlockNamingIt_whenLeafAbsent() {
    final byte[] content = pattern(30);
    final Cid root = new UnixFsImporter(store, new UnixFsImporter.Options(10, 3))
        .importBytes(content);
    final Cid second = DagPb.decode(store.get(root).orElseThrow()).links().get(1).hash();
    store.delete(second);

    assertThat(readAll(reader.open(root, 0, 10))).isEqualTo(Arrays.copyOf(content, 10));
    assertThat(readAll(reader.open(root, 20, 10))).isEqualTo(Arrays.copyOfRange(content, 20, 30));
    assertThatThrownBy(() -> readAll(reader.open(root)))
        .isInstanceOfSatisfying(UnixFsException.class, e -> {
          assertThat(e.reason()).isEqualTo(Reason.MISSING_BLOCK);
          assertThat(e.cid()).contains(second);
          assertThat(e).hasMessageContaining(second.toString());
        });
  }

  @Test
  void open_shouldThrowMalformed_whenNodesLieOrAreTruncated() {
    final Cid leaf = putRaw(pattern(10));
    final Cid countMismatch = putNode(data(UnixFsProto.Data.DataType.File).setFilesize(10)
        .build(), List.of(PbLink.of(leaf, "", 10)));
    final Cid sizeLie = putNode(data(UnixFsProto.Data.DataType.File).setFilesize(11)
        .addBlocksizes(11).build(), List.of(PbLink.of(leaf, "", 10)));
    final Cid filesizeLie = putNode(data(UnixFsProto.Data.DataType.File).setFilesize(12)
        .addBlocksizes(10).build(), List.of(PbLink.of(leaf, "", 10)));
    final byte[] good = DagPb.encode(PbNode.of(data(UnixFsProto.Data.DataType.File)
        .setFilesize(10).addBlocksizes(10).build().toByteArray(),
        List.of(PbLink.of(leaf, "", 10))));
    final byte[] cut = Arrays.copyOf(good, good.length - 3);
    final Cid truncated = DagPb.cidOf(cut);
    store.put(truncated, cut);
    final byte[] notUnixFs = DagPb.encode(PbNode.of(new byte[] {(byte) 0xFF}, List.of()));
    final Cid garbage = DagPb.cidOf(notUnixFs);
    store.put(garbage, notUnixFs);

    for (final Cid bad : List.of(countMismatch, sizeLie, filesizeLie, truncated, garbage)) {
      assertThatThrownBy(() -> readAll(reader.open(bad)))
          .as(bad.toString())
          .isInstanceOfSatisfying(UnixFsException.class,
              e -> assertThat(e.reason()).isEqualTo(Reason.MALFORMED));
    }
  }

  @Test
  void stat_shouldThrowUnsupported_whenCodecIsNotUnixFs() {
    final byte[] cbor = {(byte) 0xA0};
    final Cid cid = Cid.v1(Multicodec.DAG_CBOR, Multihash.sha2_256(cbor));
    store.put(cid, cbor);

    assertThatThrownBy(() -> reader.stat(cid))
        .isInstanceOfSatisfying(UnixFsException.class,
            e -> assertThat(e.reason()).isEqualTo(Reason.UNSUPPORTED));
  }

  private static Blockstore counting(final Blockstore inner, final Consumer<Cid> onGet) {
    return new Blockstore() {
      @Override
      public boolean has(final Cid cid) {
        return inner.has(cid);
      }

      @Override
      public Optional<byte[]> get(final Cid cid) {
        onGet.accept(cid);
        return inner.get(cid);
      }

      @Override
      public Optional<Integer> size(final Cid cid) {
        return inner.size(cid);
      }

      @Override
      public void put(final Cid cid, final byte[] data) {
        inner.put(cid, data);
      }

      @Override
      public boolean delete(final Cid cid) {
        return inner.delete(cid);
      }

      @Override
      public void forEachKey(final Consumer<Cid> visitor) {
        inner.forEachKey(visitor);
      }
    };
  }
}
