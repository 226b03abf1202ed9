package io.relaypinner.testkit;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * A running JavaScript peer (a Node script under {@code interop/js}) that prints one JSON object
 * per line on standard output. Closing it closes the script's standard input (the scripts exit on
 * that), then kills it if it has not exited within a few seconds.
 */
public final class JsPeer implements AutoCloseable {
  private static final String EOF = "\u0000eof";

  private static final ObjectMapper JSON = new ObjectMapper();

  private final String name;
  private final Process process;
  private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();
  private final StringBuffer stderr = new StringBuffer();

  JsPeer(final String name, final Process process) {
    this.name = name;
    this.process = process;
    pump(process.getInputStream(), "stdout", line -> lines.add(line), () -> lines.add(EOF));
    pump(process.getErrorStream(), "stderr", line -> stderr.append(line).append('\n'), () -> { });
  }

  private void pump(final InputStream in, final String stream,
      final Consumer<String> sink, final Runnable atEnd) {
    final Thread thread = new Thread(() -> {
      try (BufferedReader reader = new BufferedReader(
          new InputStreamReader(in, StandardCharsets.UTF_8))) {
        String line;
        while ((line = reader.readLine()) != null) {
          sink.accept(line);
        }
      } catch (final IOException e) {
        stderr.append("[testkit: ").append(stream).append(" read failed: ").append(e)
            .append("]\n");
      } finally {
        atEnd.run();
      }
    }, "node-" + stream + "-" + name);
    thread.setDaemon(true);
    thread.start();
  }

  /**
   * The next line the script printed, waiting at most {@code timeout}.
   *
   * @throws IllegalStateException when no line came in time or the script ended (with its stderr)
   */
  public String nextLine(final Duration timeout) {
    try {
      final String line = lines.poll(timeout.toMillis(), TimeUnit.MILLISECONDS);
      if (line == null) {
        throw new IllegalStateException(
            "node " + name + " printed nothing within " + timeout + "; stderr:\n" + stderr);
      }
      if (line.equals(EOF)) {
        lines.add(EOF);
        throw new IllegalStateException("node " + name + " ended; stderr:\n" + stderr);
      }
      return line;
    } catch (final InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted waiting for node " + name, e);
    }
  }

  /** The next line, parsed as JSON. */
  public JsonNode nextJson(final Duration timeout) {
    final String line = nextLine(timeout);
    try {
      return JSON.readTree(line);
    } catch (final JsonProcessingException e) {
      throw new IllegalStateException("node " + name + " printed a line that is not JSON: " + line
          + "; stderr:\n" + stderr, e);
    }
  }

  /**
   * Skips lines until one whose {@code event} field is {@code event}, waiting at most
   * {@code timeout} for each line.
   */
  public JsonNode nextEvent(final String event, final Duration timeout) {
    while (true) {
      final JsonNode node = nextJson(timeout);
      if (event.equals(node.path("event").asText())) {
        return node;
      }
    }
  }

  /** Writes one line to the script's standard input (for scripts that take commands). */
  public void send(final String line) {
    try {
      final var in = process.getOutputStream();
      in.write((line + "\n").getBytes(StandardCharsets.UTF_8));
      in.flush();
    } catch (final IOException e) {
      throw new UncheckedIOException("node " + name + ": cannot write to stdin", e);
    }
  }

  /** What the script wrote to standard error so far. */
  public String stderr() {
    return stderr.toString();
  }

  public boolean isAlive() {
    return process.isAlive();
  }

  @Override
  public void close() {
    try {
      process.getOutputStream().close();
    } catch (final IOException e) {
      throw new UncheckedIOException(e);
    } finally {
      try {
        if (!process.waitFor(Duration.ofSeconds(5).toMillis(), TimeUnit.MILLISECONDS)) {
          process.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
        }
      } catch (final InterruptedException e) {
        Thread.currentThread().interrupt();
        process.destroyForcibly();
      }
    }
  }
}
