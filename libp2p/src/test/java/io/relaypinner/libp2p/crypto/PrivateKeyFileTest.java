package io.relaypinner.libp2p.crypto;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PrivateKeyFileTest {
  private final SecureRandom random = new SecureRandom();

  @Test
  void loadOrCreate_shouldCreateOwnerOnlyFile_andReturnTheSameKeyLater(@TempDir final Path dir) {
    final Path file = dir.resolve("data/identity.key");
    final PrivateKeyFile.Loaded first = PrivateKeyFile.loadOrCreate(
        file, () -> Keys.generate(KeyType.ED25519, random));
    assertThat(first.created()).isTrue();
    assertThat(file).exists();
    assertThat(PosixFilePermissions.toString(permissions(file))).isEqualTo("rw-------");

    final PrivateKeyFile.Loaded second = PrivateKeyFile.loadOrCreate(
        file, () -> Keys.generate(KeyType.ED25519, random));
    assertThat(second.created()).isFalse();
    assertThat(second.key().marshal()).isEqualTo(first.key().marshal());
    assertThat(second.key().publicKey().peerId()).isEqualTo(first.key().publicKey().peerId());
    try (var listing = Files.list(file.getParent())) {
      assertThat(listing.map(p -> p.getFileName().toString())).containsExactly("identity.key");
    } catch (final IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  @Test
  void loadOrCreate_shouldFailAndKeepTheFile_whenItIsCorrupt(@TempDir final Path dir)
      throws Exception {
    final Path file = dir.resolve("identity.key");
    Files.writeString(file, "not a key\n");
    assertThatThrownBy(() -> PrivateKeyFile.loadOrCreate(
        file, () -> Keys.generate(KeyType.ED25519, random)))
        .isInstanceOf(KeyFormatException.class).hasMessageContaining(file.toString());
    assertThat(Files.readString(file)).isEqualTo("not a key\n");
  }

  @Test
  void loadOrCreate_shouldAgreeOnOneKey_whenManyThreadsRace(@TempDir final Path dir)
      throws Exception {
    final Path file = dir.resolve("identity.key");
    final int threads = 8;
    final ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      final CountDownLatch start = new CountDownLatch(1);
      final List<Future<PrivateKeyFile.Loaded>> results = new ArrayList<>();
      for (int i = 0; i < threads; i++) {
        results.add(pool.submit(() -> {
          start.await();
          return PrivateKeyFile.loadOrCreate(file, () -> Keys.generate(KeyType.ED25519, random));
        }));
      }
      start.countDown();
      final byte[] onDisk = PrivateKeyFile.load(waitFor(results.get(0), file)).marshal();
      int created = 0;
      for (final Future<PrivateKeyFile.Loaded> result : results) {
        assertThat(result.get().key().marshal()).isEqualTo(onDisk);
        created += result.get().created() ? 1 : 0;
      }
      assertThat(created).isEqualTo(1);
    } finally {
      pool.shutdownNow();
    }
  }

  private static Path waitFor(final Future<?> future, final Path file) throws Exception {
    future.get();
    return file;
  }

  private static Set<PosixFilePermission> permissions(final Path file) {
    try {
      return Files.getPosixFilePermissions(file);
    } catch (final IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
