package io.relaypinner.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Attacks on a relay started as an operator starts it ({@link RelayProcess}: {@code ./relay-pinner
 * run} with {@code packaging/jvm.options}), each followed by an honest client that must still be
 * served ({@link HonestClient}, with a round of the honest JS client {@link HonestJsClient}) and
 * a bound on the heap after a full collection (issue 36, "Must show"). This class holds the
 * last line of defence: an OutOfMemoryError ends the process, and the next start counts the
 * unclean exit.
 */
class AttackSuiteIT {
  /**
   * Heap after a full collection of an idle relay with one pinned file: the live set a fresh
   * node needs (about 10 MiB measured on JDK 17, 2026-11); an attack's bound is this plus what the
   * attacked surface may hold.
   */
  static final long IDLE_HEAP_AFTER_GC = 32L << 20;
  /** The shipped heap cap, -Xmx160m in packaging/jvm.options. */
  static final long SHIPPED_MAX_HEAP = 160L << 20;

  /** Booting while the first test starts its relay. */
  private final HonestJsClient js = HonestJsClient.shared();
  @TempDir
  Path dir;

  @Test
  void shippedRelay_shouldRunWithTheLaunchersJvmOptions_andServeAnHonestClient()
      throws Exception {
    try (RelayProcess relay = RelayProcess.builder(dir.resolve("data"))
        .seedFile("an honest file".getBytes(StandardCharsets.UTF_8)).start()) {
      final String flags = relay.vmFlags();
      assertThat(flags).contains("-XX:+ExitOnOutOfMemoryError", "-XX:+UseSerialGC",
          "-XX:MaxHeapSize=" + SHIPPED_MAX_HEAP);
      HonestClient.assertServed(relay, js);
      assertThat(relay.heapAfterGcBytes()).isPositive().isLessThan(IDLE_HEAP_AFTER_GC);
      assertThat(relay.metric("relay_unclean_exits_total")).hasValue(0);
    }
  }

  @Test
  void outOfMemory_shouldEndTheRelayWithStatus3_andTheNextStartCountIt() throws Exception {
    // A heap too small for the relay: the first OutOfMemoryError must end the JVM, whatever code
    // was running and whatever it catches; no relay is left half working.
    final RelayProcess.Builder settings = RelayProcess.builder(dir.resolve("data"));
    try (RelayProcess starved = settings.jvmOptions("-Xms8m", "-Xmn2m", "-Xmx8m").launch()) {
      final Optional<Integer> status = starved.awaitExit(Duration.ofSeconds(60));
      assertThat(status).as("the relay ended; stderr:\n%s", starved.stderr()).hasValue(3);
      assertThat(starved.stdout() + starved.stderr())
          .contains("Terminating due to java.lang.OutOfMemoryError");
    }
    // Usually the heap ran out after the stores opened and the run was marked running (seen at
    // 8 MiB: after the HTTP listener started); then the next start counts it. An OOM before that
    // (a relay that never served) is not counted.
    final Path runState = dir.resolve("data").resolve("run-state");
    final boolean marked = Files.exists(runState)
        && Files.readString(runState).contains("state=running");
    try (RelayProcess restarted = settings.jvmOptions("-Xms48m", "-Xmn16m", "-Xmx160m").start()) {
      assertThat(restarted.metric("relay_unclean_exits_total")).hasValue(marked ? 1 : 0);
      assertThat(restarted.metric("relay_previous_run_unclean")).hasValue(marked ? 1 : 0);
      HonestClient.assertHealthy(restarted);
    }
  }

  @Test
  void uncleanExit_shouldBeCountedOnTheNextStart_andACleanStopNot() throws Exception {
    final RelayProcess.Builder settings = RelayProcess.builder(dir.resolve("data"));
    try (RelayProcess first = settings.start()) {
      assertThat(first.metric("relay_unclean_exits_total")).hasValue(0);
      // SIGKILL ends the JVM as an OutOfMemoryError exit does: no shutdown hook runs.
      first.kill9();
    }
    try (RelayProcess second = settings.start()) {
      assertThat(second.metric("relay_unclean_exits_total")).hasValue(1);
      assertThat(second.metric("relay_previous_run_unclean")).hasValue(1);
      assertThat(second.stderr()).contains("did not stop cleanly");
      HonestClient.assertHealthy(second);
      second.stop();
    }
    assertThat(Files.readString(dir.resolve("data").resolve("run-state")))
        .contains("state=stopped", "unclean_exits=1");
    try (RelayProcess third = settings.start()) {
      assertThat(third.metric("relay_unclean_exits_total")).hasValue(1);
      assertThat(third.metric("relay_previous_run_unclean")).hasValue(0);
    }
  }
}
