package io.relaypinner.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * An S3 server for tests: s3proxy (its fat jar, {@code org.gaul:s3proxy} classifier
 * {@code jar-with-dependencies}, copied by the build to the path in system property
 * {@value #PROPERTY}) as a child process on loopback, keeping objects in a directory. It speaks
 * SigV4 with the credentials {@link #ACCESS_KEY} / {@link #SECRET_KEY}. {@link #stop} and
 * {@link #start} again on the same port and directory simulate an outage.
 */
public final class S3ProxyServer implements AutoCloseable {
  public static final String PROPERTY = "relaypinner.s3proxy.jar";
  public static final String ACCESS_KEY = "relay-test-access";
  public static final String SECRET_KEY = "relay-test-secret";
  public static final String REGION = "us-east-1";

  private final Path jar;
  private final Path dir;
  private final int port;
  private Process process;

  /**
   * Prepares a server keeping its data in {@code dir}, with {@code buckets} created, on a free
   * loopback port; call {@link #start}.
   */
  public S3ProxyServer(final Path dir, final String... buckets) {
    final String configured = System.getProperty(PROPERTY);
    if (configured == null || !Files.isRegularFile(Path.of(configured))) {
      throw new IllegalStateException("s3proxy jar not found (system property " + PROPERTY
          + " = " + configured + "): the stores module's build copies it");
    }
    this.jar = Path.of(configured);
    this.dir = dir.toAbsolutePath();
    this.port = freePort();
    try {
      Files.createDirectories(this.dir.resolve("data"));
      for (final String bucket : buckets) {
        Files.createDirectories(this.dir.resolve("data").resolve(bucket));
      }
      Files.writeString(this.dir.resolve("s3proxy.conf"), String.join("\n",
          "s3proxy.endpoint=http://127.0.0.1:" + port,
          "s3proxy.authorization=aws-v2-or-v4",
          "s3proxy.identity=" + ACCESS_KEY,
          "s3proxy.credential=" + SECRET_KEY,
          "jclouds.provider=filesystem",
          "jclouds.filesystem.basedir=" + this.dir.resolve("data"),
          ""));
    } catch (final IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Starts the process and waits until it accepts connections. */
  public synchronized S3ProxyServer start() {
    if (process != null && process.isAlive()) {
      return this;
    }
    final Path java = Path.of(System.getProperty("java.home"), "bin", "java");
    try {
      process = new ProcessBuilder(List.of(java.toString(), "-Xmx256m", "-jar", jar.toString(),
          "--properties", dir.resolve("s3proxy.conf").toString()))
          .redirectErrorStream(true)
          .redirectOutput(dir.resolve("s3proxy.log").toFile())
          .start();
    } catch (final IOException e) {
      throw new UncheckedIOException("cannot start s3proxy", e);
    }
    waitForPort(port, process, Duration.ofSeconds(60), "s3proxy (log: "
        + dir.resolve("s3proxy.log") + ")");
    return this;
  }

  /** Stops the process (the data stays for a later {@link #start}). */
  public synchronized void stop() {
    if (process == null) {
      return;
    }
    process.destroy();
    try {
      if (!process.waitFor(10, TimeUnit.SECONDS)) {
        process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
      }
    } catch (final InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    process = null;
  }

  /** {@code http://127.0.0.1:<port>}. */
  public URI endpoint() {
    return URI.create("http://127.0.0.1:" + port);
  }

  /** The directory holding a bucket's objects (s3proxy's filesystem layout). */
  public Path bucketDir(final String bucket) {
    return dir.resolve("data").resolve(bucket);
  }

  @Override
  public void close() {
    stop();
  }

  static int freePort() {
    try (ServerSocket socket = new ServerSocket(0, 1,
        java.net.InetAddress.getLoopbackAddress())) {
      return socket.getLocalPort();
    } catch (final IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  static void waitForPort(final int port, final Process process, final Duration timeout,
      final String what) {
    final Instant deadline = Instant.now().plus(timeout);
    while (Instant.now().isBefore(deadline)) {
      if (!process.isAlive()) {
        throw new IllegalStateException(what + " exited with " + process.exitValue());
      }
      try (Socket socket = new Socket()) {
        socket.connect(new InetSocketAddress("127.0.0.1", port), 200);
        return;
      } catch (final IOException e) {
        try {
          process.waitFor(100, TimeUnit.MILLISECONDS);
        } catch (final InterruptedException interrupted) {
          Thread.currentThread().interrupt();
          throw new IllegalStateException(interrupted);
        }
      }
    }
    process.destroyForcibly();
    throw new IllegalStateException(what + " did not listen on port " + port + " within "
        + timeout);
  }
}
