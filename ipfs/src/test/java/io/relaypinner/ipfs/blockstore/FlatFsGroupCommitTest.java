package io.relaypinner.ipfs.blockstore;

import static org.assertj.core.api.Assertions.assertThat;

import io.relaypinner.ipfs.blockstore.FlatFsBlockstore.Io;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.multiformats.Multicodec;
import io.relaypinner.multiformats.Multihash;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The group commit of {@link FlatFsBlockstore}: stage, then one barrier for many blocks. */
class FlatFsGroupCommitTest {
  @TempDir
  Path dir;

  /** One disk operation, as the store reported it. */
  private record Op(Io kind, Path path) {}

  private final List<Op> ops = Collections.synchronizedList(new ArrayList<>());

  private FlatFsBlockstore open(final Path at) {
    return new FlatFsBlockstore(at, false, tmp -> {}, (kind, path) -> ops.add(new Op(kind, path)));
  }

  private static byte[] block(final long seed) {
    final byte[] data = new byte[1000 + (int) seed];
    new Random(seed).nextBytes(data);
    return data;
  }

  private static Cid cid(final byte[] data) {
    return Cid.v1(Multicodec.RAW, Multihash.sha2_256(data));
  }

  private static List<Path> dataFiles(final Path root) throws IOException {
    try (Stream<Path> walk = Files.walk(root)) {
      return walk.filter(p -> p.toString().endsWith(".data")).toList();
    }
  }

  @Test
  void stage_shouldBeReadableAtOnce_butNamedAndFsyncedOnlyByTheBarrier() throws IOException {
    final FlatFsBlockstore store = open(dir.resolve("blocks"));
    final long atOpen = store.fsyncs();
    final List<byte[]> blocks = List.of(block(1), block(2), block(3));
    for (final byte[] data : blocks) {
      store.stage(cid(data), data);
    }

    for (final byte[] data : blocks) {
      assertThat(store.has(cid(data))).isTrue();
      assertThat(store.get(cid(data))).hasValue(data);
      assertThat(store.size(cid(data))).hasValue(data.length);
    }
    assertThat(dataFiles(store.directory())).isEmpty();
    assertThat(store.fsyncs()).isEqualTo(atOpen);
    assertThat(store.stagedBlocks()).isEqualTo(3);

    store.sync();

    assertThat(dataFiles(store.directory())).hasSize(3);
    assertThat(store.stagedBlocks()).isZero();
    assertThat(store.blockCount()).isEqualTo(3);
    for (final byte[] data : blocks) {
      assertThat(store.get(cid(data))).hasValue(data);
    }
    store.close();
  }

  @Test
  void sync_shouldFsyncEveryFileBeforeAnyLink_andEachShardOnceAfterItsLinks() {
    final FlatFsBlockstore store = open(dir.resolve("blocks"));
    final List<byte[]> blocks = new ArrayList<>();
    for (int i = 0; i < 40; i++) {
      blocks.add(block(i));
    }
    // Half of them first, so that the second barrier finds most shards present.
    for (final byte[] data : blocks.subList(0, 20)) {
      store.put(cid(data), data);
    }
    ops.clear();
    final long before = store.fsyncs();
    for (final byte[] data : blocks.subList(20, 40)) {
      store.stage(cid(data), data);
    }
    assertThat(ops).isEmpty();

    store.sync();

    final List<Op> seen = List.copyOf(ops);
    final int lastFileSync = lastIndex(seen, Io.FSYNC_FILE);
    final int firstLink = firstIndex(seen, Io.LINK);
    assertThat(seen.stream().filter(op -> op.kind() == Io.FSYNC_FILE)).hasSize(20);
    assertThat(seen.stream().filter(op -> op.kind() == Io.LINK)).hasSize(20);
    assertThat(lastFileSync).isLessThan(firstLink);
    final Set<Path> shards = new HashSet<>();
    for (int i = 0; i < seen.size(); i++) {
      if (seen.get(i).kind() == Io.LINK) {
        final Path shard = seen.get(i).path().getParent();
        shards.add(shard);
        // Every name is followed by an fsync of its directory.
        assertThat(seen.subList(i + 1, seen.size())).contains(new Op(Io.FSYNC_DIR, shard));
      }
    }
    final long dirSyncs = seen.stream().filter(op -> op.kind() == Io.FSYNC_DIR).count();
    final boolean newShard = seen.contains(new Op(Io.FSYNC_DIR, store.directory()));
    assertThat(dirSyncs).isEqualTo(shards.size() + (newShard ? 1 : 0));
    assertThat(store.fsyncs() - before).isEqualTo(20 + dirSyncs);
    assertThat(store.barriers()).isEqualTo(1);
    store.close();
  }

  @Test
  void put_shouldCostTwoFsyncs_aFileAndItsShard() {
    final FlatFsBlockstore store = open(dir.resolve("blocks"));
    final byte[] first = block(7);
    store.put(cid(first), first);
    final long before = store.fsyncs();
    // A block present already costs nothing.
    final byte[] again = block(7);
    store.put(cid(again), again);
    assertThat(store.fsyncs()).isEqualTo(before);
    ops.clear();
    final byte[] second = block(8);
    store.put(cid(second), second);
    final List<Io> kinds = ops.stream().map(Op::kind).toList();
    assertThat(kinds).endsWith(Io.FSYNC_FILE, Io.LINK, Io.FSYNC_DIR);
    store.close();
  }

  @Test
  void crashBeforeTheBarrier_shouldLeaveNoBlock_andNoTemporaryFileAfterReopen() throws IOException {
    final Path live = dir.resolve("blocks");
    final FlatFsBlockstore store = open(live);
    final byte[] durable = block(10);
    store.put(cid(durable), durable);
    final byte[] staged = block(11);
    store.stage(cid(staged), staged);
    // A kill -9 now: what is on the disk is what a copy of the directory holds.
    final Path copy = dir.resolve("after-crash");
    copyTree(live, copy);
    store.close();

    final FlatFsBlockstore reopened = new FlatFsBlockstore(copy);
    assertThat(reopened.has(cid(durable))).isTrue();
    assertThat(reopened.has(cid(staged))).isFalse();
    try (Stream<Path> walk = Files.walk(copy)) {
      assertThat(walk.filter(p -> p.getFileName().toString().startsWith(".tmp-"))).isEmpty();
    }
    reopened.close();
  }

  @Test
  void concurrentStagersAndBarriers_shouldFindTheirBlocksDurable_sharingBarriers()
      throws Exception {
    final FlatFsBlockstore store = open(dir.resolve("blocks"));
    final ExecutorService pool = Executors.newFixedThreadPool(4);
    try {
      final List<Future<?>> done = new ArrayList<>();
      for (int t = 0; t < 4; t++) {
        final int thread = t;
        done.add(pool.submit(() -> {
          for (int i = 0; i < 25; i++) {
            final byte[] data = block(1000L * thread + i);
            store.stage(cid(data), data);
            store.sync();
            // Durable on return: named, not staged any more.
            assertThat(Files.isRegularFile(store.directory()
                .resolve(FlatFsBlockstore.shardOf(FlatFsBlockstore.keyOf(cid(data).multihash())))
                .resolve(FlatFsBlockstore.keyOf(cid(data).multihash()) + ".data"))).isTrue();
          }
          return null;
        }));
      }
      for (final Future<?> f : done) {
        f.get(60, TimeUnit.SECONDS);
      }
    } finally {
      pool.shutdownNow();
    }
    assertThat(store.blockCount()).isEqualTo(100);
    assertThat(store.barriers()).isLessThanOrEqualTo(100);
    assertThat(store.stagedBlocks()).isZero();
    store.close();
  }

  @Test
  void delete_shouldForgetAStagedBlock_andPut_shouldMakeAStagedBlockDurable() throws IOException {
    final FlatFsBlockstore store = open(dir.resolve("blocks"));
    final byte[] gone = block(20);
    store.stage(cid(gone), gone);
    assertThat(store.delete(cid(gone))).isTrue();
    assertThat(store.has(cid(gone))).isFalse();
    final byte[] kept = block(21);
    store.stage(cid(kept), kept);
    store.put(cid(kept), kept);
    assertThat(store.stagedBlocks()).isZero();
    assertThat(dataFiles(store.directory())).hasSize(1);
    store.close();
  }

  private static int firstIndex(final List<Op> ops, final Io kind) {
    for (int i = 0; i < ops.size(); i++) {
      if (ops.get(i).kind() == kind) {
        return i;
      }
    }
    return -1;
  }

  private static int lastIndex(final List<Op> ops, final Io kind) {
    for (int i = ops.size() - 1; i >= 0; i--) {
      if (ops.get(i).kind() == kind) {
        return i;
      }
    }
    return -1;
  }

  private static void copyTree(final Path from, final Path to) throws IOException {
    try (Stream<Path> walk = Files.walk(from)) {
      for (final Path p : walk.toList()) {
        final Path target = to.resolve(from.relativize(p).toString());
        if (Files.isDirectory(p)) {
          Files.createDirectories(target);
        } else if (!p.getFileName().toString().equals(FlatFsBlockstore.LOCK_FILE)) {
          Files.copy(p, target);
        }
      }
    }
  }
}
