package io.relaypinner.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link RelayProcess} leaves no process behind (relay JVMs were seen running after their tests):
 * a launcher that starts a child and never serves {@code /health} stands in for
 * {@code ./relay-pinner} (one that forks before it {@code exec}s, e.g. while it builds the jar),
 * so each case costs a shell and two {@code sleep}s, no JVM.
 */
class RelayProcessIT {
  /** Writes its PID and its child's to {@code $DATASTORE_PATH/pids}, then waits. */
  private static final String LAUNCHER = """
      #!/usr/bin/env bash
      sleep 300 &
      echo "$$ $!" > "$DATASTORE_PATH/pids"
      wait
      """;

  @TempDir
  Path dir;

  @Test
  void aStartThatFails_shouldLeaveNoProcessBehind() throws Exception {
    final RelayProcess.Builder settings = settings().startTimeout(Duration.ofMillis(500));
    assertThatThrownBy(settings::start).isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("relay did not start");
    assertGone(pids());
  }

  @Test
  void close_shouldKillTheLauncherAndWhatItStarted() throws Exception {
    final RelayProcess relay = settings().launch();
    final List<Long> pids = pids();
    assertThat(pids).allSatisfy(pid -> assertThat(alive(pid)).isTrue());
    relay.close();
    assertGone(pids);
  }

  @Test
  void closeAll_theShutdownHooksLastResort_shouldKillEveryRelayNotClosed() throws Exception {
    settings().launch();
    final List<Long> pids = pids();
    RelayProcess.closeAll();
    assertGone(pids);
  }

  private RelayProcess.Builder settings() throws Exception {
    final Path launcher = dir.resolve("launcher.sh");
    Files.writeString(launcher, LAUNCHER, StandardCharsets.UTF_8);
    Files.setPosixFilePermissions(launcher, PosixFilePermissions.fromString("rwx------"));
    return RelayProcess.builder(dir.resolve("data")).launcher(launcher);
  }

  /** The launcher's PID and its child's, once it wrote them. */
  private List<Long> pids() {
    final Path file = dir.resolve("data").resolve("pids");
    await().atMost(Duration.ofSeconds(10)).until(() -> Files.exists(file)
        && Files.readString(file).trim().split(" ").length == 2);
    return Arrays.stream(read(file).trim().split(" ")).map(Long::parseLong).toList();
  }

  private static String read(final Path file) {
    try {
      return Files.readString(file);
    } catch (final java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  private static boolean alive(final long pid) {
    return ProcessHandle.of(pid).map(h -> !RelayProcess.ended(h)).orElse(false);
  }

  private static void assertGone(final List<Long> pids) {
    assertThat(pids).hasSize(2).allSatisfy(pid -> assertThat(alive(pid)).as("pid %d", pid)
        .isFalse());
  }
}
