package io.relaypinner.handoff.guest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.relaypinner.handoff.deploy.DeployWallet;
import io.relaypinner.testkit.Sigkill;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Kills a child JVM ({@link SecretKeyCrashWriter}) with SIGKILL while it writes the deploy wallet
 * key and the guest's publisher key through the shared {@code SecretFile} helper, then checks
 * that every key file is either absent (a creation the kill interrupted), or the old key, or the
 * complete new one: never empty, never partial, never readable by others. The old
 * {@code DeployWallet.load} (create, then write) left an empty {@code wallet.key} here, and the
 * owner's wallet was lost on the next deploy.
 */
class SecretKeyCrashTest {
  private static final int WRITES_BEFORE_KILL = 25;

  @TempDir
  Path dir;

  @Test
  void walletKey_shouldBeAbsentOrComplete_whenTheWriterIsKilledMidWrite() throws Exception {
    final List<String> lines = runAndKill("wallet");
    for (final String line : lines) {
      final String[] parts = line.split(" ");
      // Every generation that returned is on disk as printed.
      assertThat(DeployWallet.load(null, Map.of(), dir.resolve(parts[1]), new SecureRandom())
          .key().address().toString()).isEqualTo(parts[2]);
    }
    assertEveryKeyFileCompleteOrAbsent("wallet.key", lines.size());
    // The interrupted one (if it got as far as a file) loads; otherwise a new one is generated.
    final DeployWallet.Loaded next = DeployWallet.load(null, Map.of(),
        dir.resolve(Integer.toString(lines.size())), new SecureRandom());
    assertThat(next.source()).isIn(DeployWallet.Source.STORED, DeployWallet.Source.GENERATED);
  }

  @Test
  void publisherKey_shouldBeAbsentOrComplete_whenTheWriterIsKilledMidWrite() throws Exception {
    final List<String> lines = runAndKill("publisher");
    for (final String line : lines) {
      final String[] parts = line.split(" ");
      assertThat(PublisherKey.loadOrCreate(dir.resolve(parts[1]).resolve("publisher.key"),
          new SecureRandom()).key().address()).isEqualTo(parts[2]);
    }
    assertEveryKeyFileCompleteOrAbsent("publisher.key", lines.size());
  }

  @Test
  void publisherKey_shouldBeTheOldOrTheCompleteNewKey_whenKilledWhileReplacing()
      throws Exception {
    final List<String> lines = runAndKill("replace");
    // The last replacement that returned, and the one that may have been in progress.
    String lastDone = null;
    String inProgress = null;
    for (final String line : lines) {
      if (line.startsWith("done ")) {
        lastDone = line.substring(5);
        inProgress = null;
      } else if (line.startsWith("next ")) {
        inProgress = line.substring(5);
      }
    }
    assertThat(lastDone).isNotNull();
    final Path file = dir.resolve("publisher.key");
    final String onDisk = PublisherKey.loadOrCreate(file, new SecureRandom()).key().address();
    assertThat(onDisk).isIn(lastDone, inProgress);
    assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(file)))
        .isEqualTo("rw-------");
  }

  /** Runs the writer until it wrote enough, kills it, returns its complete lines. */
  private List<String> runAndKill(final String mode) throws Exception {
    final Path java = Path.of(System.getProperty("java.home"), "bin", "java");
    final Process child = new ProcessBuilder(java.toString(), "-Xmx128m", "-cp",
        System.getProperty("java.class.path"), SecretKeyCrashWriter.class.getName(), mode,
        dir.toString())
        .redirectError(ProcessBuilder.Redirect.DISCARD)
        .start();
    final List<String> lines = new CopyOnWriteArrayList<>();
    final List<IOException> readErrors = new CopyOnWriteArrayList<>();
    final Thread reader = new Thread(() -> {
      try (BufferedReader out = new BufferedReader(
          new InputStreamReader(child.getInputStream(), StandardCharsets.US_ASCII))) {
        for (String line = out.readLine(); line != null; line = out.readLine()) {
          lines.add(line);
        }
      } catch (final IOException e) {
        readErrors.add(e);
      }
    }, "writer-stdout");
    reader.setDaemon(true);
    reader.start();
    try {
      await().atMost(Duration.ofSeconds(60)).until(() ->
          lines.stream().filter(l -> l.startsWith("done ")).count() >= WRITES_BEFORE_KILL
              || !child.isAlive());
      assertThat(child.isAlive()).as("writer still running").isTrue();
    } finally {
      // Keeps the pipe open so the reader gets every line the child printed before it died.
      assertThat(Sigkill.killAndWait(child, Duration.ofSeconds(30))).isTrue();
      reader.join(TimeUnit.SECONDS.toMillis(30));
    }
    // A lost line would make the last acknowledged write look older than it is.
    assertThat(reader.isAlive()).as("writer output still being read").isFalse();
    assertThat(readErrors).as("errors reading the writer's output").isEmpty();
    return List.copyOf(lines.stream().filter(l -> !mode.equals("wallet")
        && !mode.equals("publisher") || l.startsWith("done ")).toList());
  }

  /** In each numbered directory up to {@code count}, the key file is absent or a whole key. */
  private void assertEveryKeyFileCompleteOrAbsent(final String name, final int count)
      throws IOException {
    for (int n = 0; n <= count; n++) {
      final Path file = dir.resolve(Integer.toString(n)).resolve(name);
      if (Files.exists(file)) {
        assertThat(Files.readString(file, StandardCharsets.US_ASCII))
            .matches("0x[0-9a-f]{64}\n");
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(file)))
            .isEqualTo("rw-------");
      }
    }
    try (Stream<Path> files = Files.walk(dir)) {
      // Temporary files a kill left behind are owner-only too, and never under the key's name.
      files.filter(p -> p.getFileName().toString().endsWith(".tmp")).forEach(p -> {
        try {
          assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(p)))
              .isEqualTo("rw-------");
        } catch (final IOException e) {
          throw new java.io.UncheckedIOException(e);
        }
      });
    }
  }
}
