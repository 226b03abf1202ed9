package io.relaypinner.cli;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * Runs the launcher once ({@code ./relay-pinner --version}) before a test picks its free ports:
 * the first launch after a build trains the start-up archive with a relay of its own on
 * ephemeral ports, and one of those could be the "free" port a test just chose for its relay (a
 * health check then reached the training relay as it was being stopped).
 */
final class LauncherWarmUp {
  static final Path LAUNCHER = Path.of("..", "relay-pinner").toAbsolutePath().normalize();
  private static boolean done;

  private LauncherWarmUp() {}

  static synchronized void once() throws IOException, InterruptedException {
    if (done) {
      return;
    }
    final Process process = new ProcessBuilder(LAUNCHER.toString(), "--version")
        .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
    if (!process.waitFor(180, TimeUnit.SECONDS)) {
      // With its children: a Maven build of the jar or the archive's training relay.
      RelayProcess.killTree(process.toHandle(), Duration.ofSeconds(20));
      throw new IllegalStateException("./relay-pinner --version did not end in 180 s");
    }
    done = true;
  }
}
