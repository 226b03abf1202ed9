package io.relaypinner.ipfs.blockstore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.relaypinner.multiformats.Cid;
import io.relaypinner.testkit.Sigkill;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Kills a child JVM ({@link FlatFsCrashWriter}) with SIGKILL while its threads write blocks of
 * almost 2 MiB, one of them stopped between its fsynced temporary file and the link, then checks
 * that the reopened store shows only complete, verifying blocks and no temporary file.
 */
class FlatFsBlockstoreCrashTest {
  @TempDir
  Path dir;

  @Test
  void reopen_shouldShowOnlyCompleteBlocks_whenTheWriterWasKilledMidWrite() throws Exception {
    final Path java = Path.of(System.getProperty("java.home"), "bin", "java");
    final Process child = new ProcessBuilder(java.toString(), "-Xmx256m", "-cp",
        System.getProperty("java.class.path"), FlatFsCrashWriter.class.getName(),
        dir.toString())
        .redirectError(ProcessBuilder.Redirect.DISCARD)
        .start();
    final AtomicInteger puts = new AtomicInteger();
    final AtomicReference<Path> parked = new AtomicReference<>();
    final AtomicReference<IOException> readError = new AtomicReference<>();
    final Thread reader = new Thread(() -> readProgress(child, puts, parked, readError),
        "writer-stdout");
    reader.setDaemon(true);
    reader.start();
    try {
      await().atMost(Duration.ofSeconds(60))
          .until(() -> parked.get() != null && puts.get() >= 10 || !child.isAlive());
      assertThat(child.isAlive()).as("writer still running").isTrue();
      assertThatThrownBy(() -> new FlatFsBlockstore(dir))
          .isInstanceOf(BlockstoreLockedException.class)
          .hasMessageContaining("another process");
    } finally {
      assertThat(Sigkill.killAndWait(child, Duration.ofSeconds(30))).isTrue();
      // Drain what the child printed before it died, so the count is every acknowledged put.
      reader.join(TimeUnit.SECONDS.toMillis(30));
    }
    // Sigkill keeps the pipe open: a read error or a reader still running means a short count.
    assertThat(reader.isAlive()).as("writer output still being read").isFalse();
    assertThat(readError.get()).as("error reading the writer's output").isNull();
    final int acknowledged = puts.get();
    // The parked write left its complete temporary file behind, under a name no reader uses.
    assertThat(parked.get()).exists().isRegularFile();

    try (FlatFsBlockstore store = new FlatFsBlockstore(dir, true)) {
      assertThat(parked.get()).doesNotExist();
      final List<Cid> keys = new ArrayList<>();
      store.forEachKey(keys::add);
      // Every acknowledged put is visible; each other writer may have linked one more.
      assertThat(keys.size()).isBetween(acknowledged,
          acknowledged + FlatFsCrashWriter.WRITERS - 1);
      for (final Cid cid : keys) {
        Blocks.verify(cid, store.get(cid).orElseThrow());
      }
      assertThat(store.blockCount()).isEqualTo(keys.size());
    }
    try (Stream<Path> files = Files.walk(dir)) {
      assertThat(files.map(p -> p.getFileName().toString()))
          .noneMatch(name -> name.startsWith(FlatFsBlockstore.TEMP_PREFIX));
    }
  }

  private static void readProgress(final Process child, final AtomicInteger puts,
      final AtomicReference<Path> parked, final AtomicReference<IOException> readError) {
    try (BufferedReader out = new BufferedReader(
        new InputStreamReader(child.getInputStream(), StandardCharsets.US_ASCII))) {
      for (String line = out.readLine(); line != null; line = out.readLine()) {
        if (line.equals("put")) {
          puts.incrementAndGet();
        } else if (line.startsWith("parked ")) {
          parked.set(Path.of(line.substring("parked ".length())));
        }
      }
    } catch (final IOException e) {
      readError.set(e);
    }
  }
}
