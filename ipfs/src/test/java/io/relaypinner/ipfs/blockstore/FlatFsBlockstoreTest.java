package io.relaypinner.ipfs.blockstore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.relaypinner.multiformats.Cid;
import io.relaypinner.multiformats.Multicodec;
import io.relaypinner.multiformats.Multihash;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class FlatFsBlockstoreTest {
  private static final byte[] HELLO = "hello".getBytes(StandardCharsets.UTF_8);

  @TempDir
  Path dir;

  private static Cid rawCid(final byte[] data) {
    return Cid.v1(Multicodec.RAW, Multihash.sha2_256(data));
  }

  private static byte[] randomBytes(final int size, final long seed) {
    final byte[] data = new byte[size];
    new Random(seed).nextBytes(data);
    return data;
  }

  private static List<Path> filesUnder(final Path root) throws IOException {
    try (Stream<Path> walk = Files.walk(root)) {
      return walk.filter(Files::isRegularFile).toList();
    }
  }

  @Test
  void put_shouldStoreServeAndDeleteBlocks_keyedByMultihash() {
    try (FlatFsBlockstore store = new FlatFsBlockstore(dir)) {
      final Multihash hash = Multihash.sha2_256(HELLO);
      store.put(Cid.v1(Multicodec.RAW, hash), HELLO);
      store.put(Cid.v1(Multicodec.DAG_CBOR, hash), HELLO);

      assertThat(store.has(Cid.v1(Multicodec.DAG_CBOR, hash))).isTrue();
      assertThat(store.get(Cid.v0(hash))).contains(HELLO);
      assertThat(store.size(Cid.v1(Multicodec.RAW, hash))).contains(5);
      final List<Cid> keys = new ArrayList<>();
      store.forEachKey(keys::add);
      assertThat(keys).containsExactly(Cid.v1(Multicodec.RAW, hash));
      assertThat(store.blockCount()).isEqualTo(1);
      assertThat(store.byteCount()).isEqualTo(5);
      assertThat(store.blocksWritten()).isEqualTo(1);

      assertThat(store.delete(Cid.v0(hash))).isTrue();
      assertThat(store.delete(Cid.v0(hash))).isFalse();
      assertThat(store.has(Cid.v1(Multicodec.RAW, hash))).isFalse();
      assertThat(store.get(Cid.v1(Multicodec.RAW, hash))).isEmpty();
      assertThat(store.size(Cid.v1(Multicodec.RAW, hash))).isEmpty();
      assertThat(store.blockCount()).isZero();
      assertThat(store.byteCount()).isZero();
    }
  }

  @Test
  void put_shouldRejectBytesThatDoNotHashToTheCid_andWriteNothing() throws IOException {
    try (FlatFsBlockstore store = new FlatFsBlockstore(dir)) {
      final List<Path> before = filesUnder(dir);
      final Cid cid = rawCid(HELLO);
      assertThatThrownBy(() -> store.put(cid, "hellO".getBytes(StandardCharsets.UTF_8)))
          .isInstanceOf(InvalidBlockException.class).hasMessageContaining(cid.toString());
      assertThatThrownBy(() -> store.put(cid, new byte[Blocks.MAX_BLOCK_SIZE + 1]))
          .isInstanceOf(InvalidBlockException.class).hasMessageContaining("exceeds");

      assertThat(filesUnder(dir)).containsExactlyInAnyOrderElementsOf(before);
      assertThat(store.has(cid)).isFalse();
      assertThat(store.putsRejected()).isEqualTo(2);
      assertThat(store.blockCount()).isZero();
    }
  }

  @Test
  void identityCids_shouldBeAnsweredInline_andNeverWritten() throws IOException {
    try (FlatFsBlockstore store = new FlatFsBlockstore(dir)) {
      final List<Path> before = filesUnder(dir);
      final Cid inline = Cid.v1(Multicodec.RAW, Multihash.identity(HELLO));
      store.put(inline, HELLO);
      assertThat(store.has(inline)).isTrue();
      assertThat(store.get(inline)).contains(HELLO);
      assertThat(store.size(inline)).contains(5);
      assertThat(store.path(inline)).isEmpty();
      assertThat(store.delete(inline)).isFalse();
      assertThat(filesUnder(dir)).containsExactlyInAnyOrderElementsOf(before);
    }
  }

  @Test
  void put_shouldWriteUpperCaseBase32Keys_inNextToLastTwoShards() throws IOException {
    try (FlatFsBlockstore store = new FlatFsBlockstore(dir)) {
      final Cid cid = rawCid(HELLO);
      store.put(cid, HELLO);

      // sha2-256 multihashes start 0x12 0x20, which base32 spells "CIQ" as in Kubo's blocks/.
      final String key = FlatFsBlockstore.keyOf(cid.multihash());
      assertThat(key).startsWith("CIQ").matches("[A-Z2-7]+").hasSize(55);
      final Path expected = dir.resolve(key.substring(52, 54)).resolve(key + ".data");
      assertThat(expected).exists().hasBinaryContent(HELLO);
      assertThat(store.path(cid)).contains(expected);
      assertThat(dir.resolve("SHARDING"))
          .hasContent("/repo/flatfs/shard/v1/next-to-last/2");
      assertThat(FlatFsBlockstore.shardOf("AB")).isEqualTo("_A");
    }
  }

  @Test
  void put_shouldUseKubosFileName_forTheEmptyUnixFsDirectory() {
    try (FlatFsBlockstore store = new FlatFsBlockstore(dir)) {
      // Every Kubo repo holds this block as blocks/X3/CIQFTFEE…X3Y.data.
      final Cid emptyDir = Cid.parse("QmUNLLsPACCz1vLxQVkXqqLX5R1X345qqfHbsf67hvA3Nn");
      store.put(emptyDir, new byte[] {0x0a, 0x02, 0x08, 0x01});
      assertThat(dir.resolve("X3")
          .resolve("CIQFTFEEHEDF6KLBT32BFAGLXEZL4UWFNWM4LFTLMXQBCERZ6CMLX3Y.data"))
          .exists().hasSize(4);
    }
  }

  @Test
  void open_shouldRefuseAnotherShardFunction() throws IOException {
    Files.writeString(dir.resolve("SHARDING"), "/repo/flatfs/shard/v1/prefix/2\n");
    assertThatThrownBy(() -> new FlatFsBlockstore(dir))
        .isInstanceOf(IllegalStateException.class).hasMessageContaining("prefix/2");
    // The failed open released its lock.
    new FlatFsBlockstore(dir.resolve("other")).close();
  }

  @Test
  void open_shouldDeleteLeftoverTempFiles_andCountStoredBlocks() throws IOException {
    final Cid cid = rawCid(HELLO);
    final Path shard;
    try (FlatFsBlockstore store = new FlatFsBlockstore(dir)) {
      store.put(cid, HELLO);
      shard = store.path(cid).orElseThrow().getParent();
    }
    final Path tmpInShard = Files.write(shard.resolve(".tmp-123.part"), new byte[] {1, 2});
    final Path tmpInRoot = Files.write(dir.resolve(".tmp-456.part"), new byte[] {3});

    try (FlatFsBlockstore store = new FlatFsBlockstore(dir)) {
      assertThat(tmpInShard).doesNotExist();
      assertThat(tmpInRoot).doesNotExist();
      assertThat(store.get(cid)).contains(HELLO);
      assertThat(store.blockCount()).isEqualTo(1);
      assertThat(store.byteCount()).isEqualTo(5);
      assertThat(store.blocksWritten()).isZero();
    }
  }

  @Test
  void forEachKey_shouldIgnoreForeignFiles() throws IOException {
    try (FlatFsBlockstore store = new FlatFsBlockstore(dir)) {
      final Cid cid = rawCid(HELLO);
      store.put(cid, HELLO);
      final String key = FlatFsBlockstore.keyOf(cid.multihash());
      final Path shard = store.path(cid).orElseThrow().getParent();
      Files.writeString(dir.resolve("README"), "not a block");
      Files.writeString(shard.resolve("notes.txt"), "not a block");
      Files.write(shard.resolve(key.toLowerCase() + ".data"), HELLO);
      Files.write(shard.resolve("AAAA.data"), HELLO);
      Files.createDirectories(dir.resolve("ZZ"));
      Files.write(dir.resolve("ZZ").resolve(key + ".data"), HELLO);
      Files.createDirectories(dir.resolve("nested"));

      final List<Cid> keys = new ArrayList<>();
      store.forEachKey(keys::add);
      assertThat(keys).containsExactly(Cid.v1(Multicodec.RAW, cid.multihash()));
    }
  }

  @Test
  void put_shouldStoreOneCopy_whenTheSameBlockIsPutConcurrently() throws Exception {
    final byte[] data = randomBytes(1024 * 1024, 7);
    final Cid cid = rawCid(data);
    final int threads = 8;
    final ExecutorService pool = Executors.newFixedThreadPool(threads);
    try (FlatFsBlockstore store = new FlatFsBlockstore(dir)) {
      final CountDownLatch start = new CountDownLatch(1);
      final List<Future<?>> puts = new ArrayList<>();
      for (int i = 0; i < threads; i++) {
        puts.add(pool.submit(() -> {
          start.await();
          store.put(cid, data);
          return null;
        }));
      }
      start.countDown();
      for (final Future<?> put : puts) {
        put.get(30, TimeUnit.SECONDS);
      }
      assertThat(store.get(cid)).hasValueSatisfying(bytes -> assertThat(bytes).isEqualTo(data));
      assertThat(store.blockCount()).isEqualTo(1);
      assertThat(store.byteCount()).isEqualTo(data.length);
      assertThat(store.blocksWritten()).isEqualTo(1);
      assertThat(filesUnder(dir)).noneMatch(p -> p.getFileName().toString().startsWith(".tmp-"));
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void open_shouldFail_whenTheDirectoryIsAlreadyOpen() {
    try (FlatFsBlockstore store = new FlatFsBlockstore(dir)) {
      assertThat(store.directory()).isEqualTo(dir.toAbsolutePath());
      assertThatThrownBy(() -> new FlatFsBlockstore(dir))
          .isInstanceOf(BlockstoreLockedException.class).hasMessageContaining("already open");
    }
    new FlatFsBlockstore(dir).close();
  }

  @Test
  void get_shouldRefuseFilesLargerThanABlock() throws IOException {
    try (FlatFsBlockstore store = new FlatFsBlockstore(dir)) {
      final Cid cid = rawCid(HELLO);
      store.put(cid, HELLO);
      final Path file = store.path(cid).orElseThrow();
      Files.write(file, new byte[Blocks.MAX_BLOCK_SIZE + 1]);
      assertThatThrownBy(() -> store.get(cid)).isInstanceOf(CorruptBlockException.class)
          .hasMessageContaining("limit");
      assertThatThrownBy(() -> store.size(cid)).isInstanceOf(CorruptBlockException.class);
      assertThatThrownBy(() -> store.openChannel(cid)).isInstanceOf(CorruptBlockException.class);
    }
  }

  @Test
  void get_shouldDetectTamperedFiles_onlyWhenVerifyOnReadIsOn() throws IOException {
    final Cid cid = rawCid(HELLO);
    try (FlatFsBlockstore store = new FlatFsBlockstore(dir)) {
      store.put(cid, HELLO);
      Files.write(store.path(cid).orElseThrow(), "jello".getBytes(StandardCharsets.UTF_8));
      assertThat(store.get(cid)).hasValueSatisfying(b -> assertThat(b).startsWith('j'));
    }
    try (FlatFsBlockstore store = new FlatFsBlockstore(dir, true)) {
      assertThatThrownBy(() -> store.get(cid)).isInstanceOf(CorruptBlockException.class)
          .hasMessageContaining("does not hash");
    }
  }

  @Test
  void openChannel_shouldServeTheFile_whenTheBlockIsDeletedMeanwhile() throws IOException {
    try (FlatFsBlockstore store = new FlatFsBlockstore(dir)) {
      final Cid cid = rawCid(HELLO);
      assertThat(store.openChannel(cid)).isEmpty();
      store.put(cid, HELLO);
      try (FileChannel channel = store.openChannel(cid).orElseThrow()) {
        assertThat(store.delete(cid)).isTrue();
        final ByteBuffer buffer = ByteBuffer.allocate(16);
        assertThat(channel.read(buffer, 0)).isEqualTo(5);
        assertThat(buffer.flip()).isEqualTo(ByteBuffer.wrap(HELLO));
      }
    }
  }
}
