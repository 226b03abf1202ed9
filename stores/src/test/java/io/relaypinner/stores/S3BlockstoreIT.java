package io.relaypinner.stores;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.relaypinner.ipfs.blockstore.CorruptBlockException;
import io.relaypinner.ipfs.blockstore.FlatFsBlockstore;
import io.relaypinner.ipfs.blockstore.InvalidBlockException;
import io.relaypinner.ipfs.blockstore.StoreUnavailableException;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.multiformats.Multicodec;
import io.relaypinner.multiformats.Multihash;
import io.relaypinner.testkit.S3ProxyServer;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@link S3Blockstore} against s3proxy on loopback (a real S3 server speaking SigV4). */
class S3BlockstoreIT {
  private static final String BUCKET = "relay-blocks";
  @TempDir
  static Path dir;
  private static S3ProxyServer server;

  @BeforeAll
  static void startServer() {
    server = new S3ProxyServer(dir.resolve("s3"), BUCKET).start();
  }

  @AfterAll
  static void stopServer() {
    if (server != null) {
      server.close();
    }
  }

  private static S3StoreConfig config(final String prefix) {
    return config(server.endpoint(), prefix);
  }

  private static S3StoreConfig config(final URI endpoint, final String prefix) {
    return new S3StoreConfig(Optional.of(endpoint), BUCKET, S3ProxyServer.REGION, prefix,
        Optional.of(S3ProxyServer.ACCESS_KEY), Optional.of(S3ProxyServer.SECRET_KEY), 4, 2,
        java.time.Duration.ofSeconds(5));
  }

  private static Cid rawCid(final byte[] data) {
    return Cid.v1(Multicodec.RAW, Multihash.sha2_256(data));
  }

  private static byte[] random(final int size, final long seed) {
    final byte[] data = new byte[size];
    new Random(seed).nextBytes(data);
    return data;
  }

  @Test
  void storesReadsListsAndDeletesBlocksUnderFlatFsKeys() {
    try (S3Blockstore store = S3Blockstore.open(config("a/"))) {
      final byte[] data = random(300_000, 1);
      final Cid cid = rawCid(data);
      assertThat(store.has(cid)).isFalse();
      assertThat(store.get(cid)).isEmpty();
      store.put(cid, data);
      assertThat(store.has(cid)).isTrue();
      assertThat(store.get(cid)).hasValueSatisfying(b -> assertThat(b).isEqualTo(data));
      assertThat(store.size(cid)).contains(data.length);
      // The same block under a CIDv0 or another codec is the same object (keyed by multihash).
      assertThat(store.get(Cid.v0(cid.multihash()))).isPresent();
      final String key = FlatFsBlockstore.keyOf(cid.multihash());
      assertThat(store.objectKey(cid.multihash())).isEqualTo(
          "a/" + key.substring(key.length() - 3, key.length() - 1) + "/" + key + ".data");
      final List<Cid> listed = new ArrayList<>();
      store.forEachKey(listed::add);
      assertThat(listed).extracting(Cid::multihash).containsExactly(cid.multihash());
      assertThat(store.delete(cid)).isTrue();
      assertThat(store.delete(cid)).isFalse();
      assertThat(store.has(cid)).isFalse();
    }
  }

  @Test
  void putsAreIdempotentAcrossRelaysAndRacingWriters() throws Exception {
    final byte[] data = "shared block".getBytes(StandardCharsets.UTF_8);
    final Cid cid = rawCid(data);
    final ExecutorService pool = Executors.newFixedThreadPool(8);
    try (S3Blockstore one = S3Blockstore.open(config("b/"));
        S3Blockstore two = S3Blockstore.open(config("b/"))) {
      final List<Future<?>> puts = new ArrayList<>();
      for (int i = 0; i < 16; i++) {
        final S3Blockstore store = i % 2 == 0 ? one : two;
        puts.add(pool.submit(() -> store.put(cid, data)));
      }
      for (final Future<?> put : puts) {
        put.get();
      }
      // If-None-Match: * made every put after the first a no-op.
      assertThat(one.blocksWritten() + two.blocksWritten()).isBetween(1L, 16L);
      one.put(cid, data);
      assertThat(two.get(cid)).hasValueSatisfying(b -> assertThat(b).isEqualTo(data));
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void refusesBadPutsAndDetectsTamperedObjects() throws Exception {
    try (S3Blockstore store = S3Blockstore.open(config("c/"))) {
      final byte[] data = random(1000, 2);
      final Cid cid = rawCid(data);
      assertThatThrownBy(() -> store.put(cid, random(1000, 3)))
          .isInstanceOf(InvalidBlockException.class);
      assertThat(store.has(cid)).isFalse();
      store.put(cid, data);
      // Someone edits the object behind our back: the read is refused, not served.
      final Path object = server.bucketDir(BUCKET).resolve(store.objectKey(cid.multihash()));
      assertThat(object).exists();
      final byte[] tampered = data.clone();
      tampered[0] ^= 1;
      Files.write(object, tampered);
      assertThatThrownBy(() -> store.get(cid)).isInstanceOf(CorruptBlockException.class)
          .hasMessageContaining(cid.toString());
    }
  }

  @Test
  void aFlatFsDirectoryCopiedIntoTheBucketIsAStore() throws Exception {
    final Path flat = dir.resolve("flatfs");
    final List<Cid> cids = new ArrayList<>();
    try (FlatFsBlockstore local = new FlatFsBlockstore(flat)) {
      for (int i = 0; i < 5; i++) {
        final byte[] data = random(100 + i, 10 + i);
        cids.add(rawCid(data));
        local.put(cids.get(i), data);
      }
    }
    final Path target = server.bucketDir(BUCKET).resolve("copied");
    try (Stream<Path> files = Files.walk(flat)) {
      for (final Path file : files.filter(f -> f.toString().endsWith(".data")).toList()) {
        final Path to = target.resolve(flat.relativize(file).toString());
        Files.createDirectories(to.getParent());
        Files.copy(file, to);
      }
    }
    try (S3Blockstore store = S3Blockstore.open(config("copied/"))) {
      for (final Cid cid : cids) {
        assertThat(store.get(cid)).isPresent();
      }
      final List<Cid> listed = new ArrayList<>();
      store.forEachKey(listed::add);
      assertThat(listed).hasSize(cids.size());
    }
  }

  @Test
  void anUnreachableServiceFailsOpenNamingItAndAnOutageKeepsWhatWasStored() {
    assertThatThrownBy(() -> S3Blockstore.open(config(URI.create("http://127.0.0.1:9"), "")))
        .isInstanceOf(StoreUnavailableException.class)
        .hasMessageContaining("s3 unavailable").hasMessageContaining(BUCKET);
    final byte[] data = random(5000, 4);
    final Cid cid = rawCid(data);
    try (S3Blockstore store = S3Blockstore.open(config("d/"))) {
      store.put(cid, data);
      server.stop();
      try {
        assertThatThrownBy(() -> store.get(cid)).isInstanceOf(StoreUnavailableException.class);
        assertThatThrownBy(() -> store.put(rawCid(new byte[] {1}), new byte[] {1}))
            .isInstanceOf(StoreUnavailableException.class);
      } finally {
        server.start();
      }
      assertThat(store.get(cid)).hasValueSatisfying(b -> assertThat(b).isEqualTo(data));
      assertThat(store.failures()).isGreaterThanOrEqualTo(2);
    }
  }
}
