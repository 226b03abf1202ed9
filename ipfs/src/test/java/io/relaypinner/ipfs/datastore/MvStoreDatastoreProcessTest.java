package io.relaypinner.ipfs.datastore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.relaypinner.testkit.Sigkill;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link MvStoreDatastore} against another process: the file lock ({@link DatastoreHolder}) and
 * durability across a SIGKILL ({@link DatastoreCrashWriter}, and with maintenance running:
 * {@link DatastoreMaintenanceCrashWriter}), each in a child JVM.
 */
class MvStoreDatastoreProcessTest {
  @TempDir
  Path dir;

  /** A child JVM on our class path and the last line it printed. */
  private record Child(Process process, AtomicReference<String> lastLine, Thread reader) {
    static Child start(final Class<?> main, final Path file, final String... more)
        throws IOException {
      final Path java = Path.of(System.getProperty("java.home"), "bin", "java");
      final List<String> command = new ArrayList<>(List.of(java.toString(), "-cp",
          System.getProperty("java.class.path"), main.getName(), file.toString()));
      command.addAll(List.of(more));
      final Process process = new ProcessBuilder(command)
          .redirectError(ProcessBuilder.Redirect.DISCARD)
          .start();
      final AtomicReference<String> lastLine = new AtomicReference<>("");
      final Thread reader = new Thread(() -> readLines(process, lastLine), main.getSimpleName());
      reader.setDaemon(true);
      reader.start();
      return new Child(process, lastLine, reader);
    }

    private static void readLines(final Process process, final AtomicReference<String> last) {
      try (BufferedReader out = new BufferedReader(
          new InputStreamReader(process.getInputStream(), StandardCharsets.US_ASCII))) {
        for (String line = out.readLine(); line != null; line = out.readLine()) {
          last.set(line);
        }
      } catch (final IOException e) {
        // Sigkill keeps the pipe open, so this is a real failure: the last line would be stale.
        last.set("error: " + e);
      }
    }
  }

  @Test
  void open_shouldFailClearly_whenAnotherProcessHoldsTheFile() throws Exception {
    final Path file = dir.resolve("datastore.mv.db");
    final Child child = Child.start(DatastoreHolder.class, file);
    try {
      await().atMost(Duration.ofSeconds(60))
          .until(() -> child.lastLine().get().equals("open") || !child.process().isAlive());
      assertThat(child.lastLine().get()).isEqualTo("open");
      assertThatThrownBy(() -> new MvStoreDatastore(file))
          .isInstanceOf(DatastoreLockedException.class)
          .hasMessageContaining("another process");
    } finally {
      child.process().getOutputStream().close();
      if (!child.process().waitFor(30, TimeUnit.SECONDS)) {
        child.process().destroyForcibly();
      }
    }
    assertThat(child.process().exitValue()).isZero();
    try (MvStoreDatastore store = new MvStoreDatastore(file)) {
      assertThat(store.get("/held")).isPresent();
    }
  }

  @Test
  void reopen_shouldHoldEveryAcknowledgedPut_whenTheWriterWasKilled() throws Exception {
    final Path file = dir.resolve("datastore.mv.db");
    final Child child = Child.start(DatastoreCrashWriter.class, file);
    try {
      await().atMost(Duration.ofSeconds(60)).until(() -> {
        final String line = child.lastLine().get();
        return line.startsWith("put ") && Long.parseLong(line.substring(4)) >= 20
            || !child.process().isAlive();
      });
      assertThat(child.process().isAlive()).as("writer still running").isTrue();
    } finally {
      assertThat(Sigkill.killAndWait(child.process(), Duration.ofSeconds(30))).isTrue();
      child.reader().join(TimeUnit.SECONDS.toMillis(30));
    }
    final long acknowledged = Long.parseLong(child.lastLine().get().substring(4));

    try (MvStoreDatastore store = new MvStoreDatastore(file)) {
      final int found = store.scan("/k/").size();
      assertThat((long) found).isBetween(acknowledged, acknowledged + 1);
      for (long n = 1; n <= acknowledged; n++) {
        assertThat(store.get(DatastoreCrashWriter.key(n))).as("put %d", n).isPresent();
      }
    }
  }

  /**
   * Kill -9 at random moments of a writer that runs maintenance every few durable batches (chunk
   * rewrites, reuse of dead chunks at once), five times over: each reopen finds every
   * acknowledged write with its value (a hot key holds its last acknowledged value or a later
   * one) and opens without error.
   */
  @Test
  void reopen_shouldHoldEveryAcknowledgedWrite_whenKilledDuringMaintenance() throws Exception {
    final Path file = dir.resolve("datastore.mv.db");
    final Random random = new Random(36);
    final Map<String, Long> hotAcknowledged = new HashMap<>();
    long next = 1;
    long maintained = 0;
    for (int round = 0; round < 5; round++) {
      final long target = next + 20 + random.nextInt(60);
      final Child child = Child.start(DatastoreMaintenanceCrashWriter.class, file,
          Long.toString(next));
      try {
        await().atMost(Duration.ofSeconds(60)).until(() -> {
          final String line = child.lastLine().get();
          return line.startsWith("ack ") && Long.parseLong(line.split(" ")[1]) >= target
              || !child.process().isAlive();
        });
        assertThat(child.process().isAlive()).as("writer still running").isTrue();
        Thread.sleep(random.nextInt(40));
      } finally {
        assertThat(Sigkill.killAndWait(child.process(), Duration.ofSeconds(30))).isTrue();
        child.reader().join(TimeUnit.SECONDS.toMillis(30));
      }
      final String[] last = child.lastLine().get().split(" ");
      assertThat(last[0]).isEqualTo("ack");
      final long acknowledged = Long.parseLong(last[1]);
      maintained += Long.parseLong(last[2]);
      for (long n = next; n <= acknowledged; n++) {
        for (int i = 0; i < 4; i++) {
          final long h = n * 4 + i;
          hotAcknowledged.put(DatastoreMaintenanceCrashWriter.hotKey(h), h);
        }
      }
      try (MvStoreDatastore store = new MvStoreDatastore(file)) {
        for (long n = 1; n <= acknowledged; n++) {
          final long expected = n;
          assertThat(store.get(DatastoreMaintenanceCrashWriter.onceKey(n))).as("round %d, n %d",
              round, n).hasValueSatisfying(v -> assertThat(v).isEqualTo(
                  DatastoreMaintenanceCrashWriter.value(expected, 200)));
        }
        for (final Map.Entry<String, Long> hot : hotAcknowledged.entrySet()) {
          final byte[] value = store.get(hot.getKey()).orElseThrow();
          final long h = DatastoreMaintenanceCrashWriter.number(value);
          assertThat(h).as("round %d, %s", round, hot.getKey()).isGreaterThanOrEqualTo(
              hot.getValue());
          assertThat(value).isEqualTo(DatastoreMaintenanceCrashWriter.value(h, 4_000));
        }
        // An unacknowledged batch may be there too; the next writer overwrites it.
        next = acknowledged + 1;
      }
    }
    assertThat(maintained).as("maintenance runs that rewrote pages").isPositive();
  }
}
