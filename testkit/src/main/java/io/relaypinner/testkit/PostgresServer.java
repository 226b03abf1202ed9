package io.relaypinner.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A PostgreSQL server for tests, from the machine's Debian packages ({@code postgresql-15} or
 * another major version under {@code /usr/lib/postgresql/<version>/bin}), as a child process on
 * a free loopback port with a fresh cluster in a temporary directory. PostgreSQL refuses to run
 * as root, so under root the server runs as the {@code postgres} user (via {@code setpriv}).
 * Password authentication (SCRAM) with {@link #USER} / {@link #PASSWORD}; Unix sockets are off.
 * {@link #stop} (fast shutdown) and {@link #start} again simulate an outage.
 */
public final class PostgresServer implements AutoCloseable {
  public static final String USER = "relay";
  public static final String PASSWORD = "relay-test-password";
  private static final String OS_USER = "postgres";

  private final Path bin;
  private final Path dir;
  private final int port;
  private final boolean root;
  private Process process;

  /**
   * Installs Debian's PostgreSQL server when it is missing (see {@link DebianPackages}); call
   * before {@code new PostgresServer()}.
   */
  public static void ensureInstalled() {
    DebianPackages.ensure("postgresql", () -> binaries().isPresent(),
        "this test's PostgreSQL server");
  }

  /** Where PostgreSQL's server binaries are installed, if they are. */
  public static Optional<Path> binaries() {
    final Path base = Path.of("/usr/lib/postgresql");
    if (!Files.isDirectory(base)) {
      return Optional.empty();
    }
    try (Stream<Path> versions = Files.list(base)) {
      return versions.map(v -> v.resolve("bin"))
          .filter(b -> Files.isExecutable(b.resolve("postgres"))
              && Files.isExecutable(b.resolve("initdb")))
          .max(Comparator.comparing(Path::toString));
    } catch (final IOException e) {
      return Optional.empty();
    }
  }

  /** Creates a cluster (initdb) in a new temporary directory; call {@link #start}. */
  public PostgresServer() {
    this.bin = binaries().orElseThrow(
        () -> new IllegalStateException("no PostgreSQL under /usr/lib/postgresql"));
    this.root = "root".equals(System.getProperty("user.name"));
    this.port = S3ProxyServer.freePort();
    try {
      this.dir = Files.createTempDirectory("relay-pg-");
      final Path pwfile = dir.resolve("pw");
      Files.writeString(pwfile, PASSWORD + "\n");
      if (root) {
        run(List.of("chown", "-R", OS_USER, dir.toString()));
      }
      run(asServerUser(List.of(bin.resolve("initdb").toString(), "-D",
          dir.resolve("data").toString(), "-U", USER, "--auth=scram-sha-256",
          "--pwfile=" + pwfile, "-E", "UTF8", "--locale=C", "--no-sync")));
    } catch (final IOException e) {
      throw new UncheckedIOException("cannot create a PostgreSQL cluster", e);
    }
  }

  /** Starts the server and waits until it accepts connections. */
  public synchronized PostgresServer start() {
    if (process != null && process.isAlive()) {
      return this;
    }
    try {
      process = new ProcessBuilder(asServerUser(List.of(bin.resolve("postgres").toString(),
          "-D", dir.resolve("data").toString(), "-p", Integer.toString(port),
          "-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories=",
          "-c", "fsync=off", "-c", "max_connections=200")))
          .redirectErrorStream(true)
          .redirectOutput(ProcessBuilder.Redirect.appendTo(dir.resolve("server.log").toFile()))
          .start();
    } catch (final IOException e) {
      throw new UncheckedIOException("cannot start PostgreSQL", e);
    }
    S3ProxyServer.waitForPort(port, process, Duration.ofSeconds(60),
        "PostgreSQL (log: " + dir.resolve("server.log") + ")");
    return this;
  }

  /** Fast shutdown (SIGINT): clients are disconnected, the data stays. */
  public synchronized void stop() {
    if (process == null) {
      return;
    }
    try {
      new ProcessBuilder("kill", "-INT", Long.toString(process.pid())).start().waitFor();
      if (!process.waitFor(30, TimeUnit.SECONDS)) {
        process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
      }
    } catch (final IOException e) {
      process.destroyForcibly();
    } catch (final InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    process = null;
  }

  /** {@code jdbc:postgresql://127.0.0.1:<port>/postgres}. */
  public String jdbcUrl() {
    return "jdbc:postgresql://127.0.0.1:" + port + "/postgres";
  }

  @Override
  public void close() {
    stop();
    try (Stream<Path> files = Files.walk(dir)) {
      files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (final IOException e) {
      // A leftover temporary directory is harmless.
    }
  }

  private List<String> asServerUser(final List<String> command) {
    if (!root) {
      return command;
    }
    final List<String> wrapped = new ArrayList<>(List.of("setpriv", "--reuid=" + OS_USER,
        "--regid=" + OS_USER, "--clear-groups", "--"));
    wrapped.addAll(command);
    return wrapped;
  }

  private void run(final List<String> command) throws IOException {
    final Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    final String output = new String(p.getInputStream().readAllBytes());
    try {
      if (!p.waitFor(120, TimeUnit.SECONDS) || p.exitValue() != 0) {
        throw new IllegalStateException(String.join(" ", command) + " failed: " + output);
      }
    } catch (final InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }
}
