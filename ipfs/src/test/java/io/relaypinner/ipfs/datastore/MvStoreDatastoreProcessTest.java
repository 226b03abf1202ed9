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
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link MvStoreDatastore} against another process: the file lock ({@link DatastoreHolder}) and
 * durability across a SIGKILL ({@link DatastoreCrashWriter}), each in a child JVM.
 */
class MvStoreDatastoreProcessTest {
  @TempDir
  Path dir;

  /** A child JVM on our class path and the last line it printed. */
  private record Child(Process process, AtomicReference<String> lastLine, Thread reader) {
    static Child start(final Class<?> main, final Path file) throws IOException {
      final Path java = Path.of(System.getProperty("java.home"), "bin", "java");
      final Process process = new ProcessBuilder(java.toString(), "-cp",
          System.getProperty("java.class.path"), main.getName(), file.toString())
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
}
