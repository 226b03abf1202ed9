package io.relaypinner.testkit;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * Kills a child process with SIGKILL and keeps what it printed readable. {@code
 * Process.destroyForcibly()} also closes the parent's ends of the child's pipes, so lines the child
 * wrote just before it died but that the reading thread had not taken yet are lost (the reader sees
 * "Stream closed"); a crash test that counts the child's acknowledged writes then undercounts them.
 * Signalling through the {@link ProcessHandle} leaves the pipes open: the reader drains them to
 * end of file.
 */
public final class Sigkill {
  private Sigkill() {}

  /** Sends SIGKILL and waits up to {@code timeout} for the process to end; true when it did. */
  public static boolean killAndWait(final Process process, final Duration timeout)
      throws InterruptedException {
    process.toHandle().destroyForcibly();
    return process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS);
  }
}
