package io.relaypinner.testkit;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Assumptions;

/**
 * Test servers that come from Debian's packages (pebble, PostgreSQL): installed by the test
 * itself with {@code apt-get} when missing and the build runs as root, as on the developers' and
 * CI machines. A root build whose install fails fails the test saying why; only a non-root user
 * without the package skips, with the command that would install it.
 */
public final class DebianPackages {
  private DebianPackages() {}

  /**
   * Makes sure {@code present} holds, installing {@code packageName} when it does not.
   *
   * @param what what needs the package, for the messages
   */
  public static synchronized void ensure(final String packageName, final BooleanSupplier present,
      final String what) {
    if (present.getAsBoolean()) {
      return;
    }
    final boolean root = "root".equals(System.getProperty("user.name"));
    Assumptions.assumeTrue(root, what + " needs Debian's " + packageName + " package, which is "
        + "not installed, and this user cannot install it: run `apt-get install " + packageName
        + "` as root");
    final List<String> failures = new ArrayList<>();
    // A fresh machine may have no package lists yet: install, else update and install again.
    for (final List<String> command : List.of(List.of("apt-get", "install", "-y", packageName),
        List.of("apt-get", "update"), List.of("apt-get", "install", "-y", packageName))) {
      if (present.getAsBoolean()) {
        return;
      }
      try {
        final ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
        builder.environment().put("DEBIAN_FRONTEND", "noninteractive");
        final Process process = builder.start();
        final String output = new String(process.getInputStream().readAllBytes(),
            StandardCharsets.UTF_8);
        if (!process.waitFor(10, TimeUnit.MINUTES) || process.exitValue() != 0) {
          failures.add(String.join(" ", command) + ": " + output.strip().lines()
              .reduce((a, b) -> b).orElse("(no output)"));
        }
      } catch (final IOException e) {
        failures.add(String.join(" ", command) + ": " + e.getMessage());
      } catch (final InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new AssertionError("interrupted while installing " + packageName, e);
      }
    }
    if (!present.getAsBoolean()) {
      throw new AssertionError(what + " needs Debian's " + packageName + " package and "
          + "installing it failed: " + failures);
    }
  }
}
