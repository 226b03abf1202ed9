package io.relaypinner.testkit.browser;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * One page open in its own headless Chromium (fresh profile). What the page reports with
 * {@code relayTestReport(obj)} is read with {@link #nextReport}; its console and uncaught errors
 * are kept ({@link #console()}, {@link #errors()}) and appended to every failure message.
 * {@link #close()} saves a screenshot first.
 */
public final class BrowserPage implements AutoCloseable {
  private final HeadlessBrowser browser;
  private final String id;
  private final BlockingQueue<JsonNode> events = new LinkedBlockingQueue<>();
  private final List<String> console = Collections.synchronizedList(new ArrayList<>());
  private final List<String> errors = Collections.synchronizedList(new ArrayList<>());
  private volatile boolean closed;
  private volatile Path screenshot;

  BrowserPage(final HeadlessBrowser browser, final String id) {
    this.browser = browser;
    this.id = id;
  }

  public String id() {
    return id;
  }

  void deliver(final JsonNode event) {
    switch (event.path("event").asText()) {
      case "console" -> {
        final String line = event.path("type").asText() + ": " + event.path("text").asText();
        console.add(line);
        if (event.path("type").asText().equals("error")) {
          errors.add("console " + line);
        }
      }
      case "pageerror" -> errors.add("uncaught " + event.path("message").asText());
      default -> events.add(event);
    }
  }

  /**
   * Waits for the next report whose {@code event} field is {@code event}, skipping other reports.
   *
   * @throws IllegalStateException when the page reports {@code {event: "error"}}, the driver
   *     fails a command of this page, or nothing comes in time (with the page's console)
   */
  public JsonNode nextReport(final String event, final Duration timeout) {
    final long deadline = System.nanoTime() + timeout.toNanos();
    while (true) {
      final JsonNode next = poll(deadline, "a report '" + event + "'");
      if (next.path("event").asText().equals("report")) {
        final JsonNode data = next.path("data");
        if (data.path("event").asText().equals(event)) {
          return data;
        }
        if (data.path("event").asText().equals("error")) {
          throw failure("page reported an error: " + data.path("message").asText());
        }
      }
    }
  }

  JsonNode awaitEvent(final String event, final Duration timeout) {
    final long deadline = System.nanoTime() + timeout.toNanos();
    while (true) {
      final JsonNode next = poll(deadline, "'" + event + "'");
      if (next.path("event").asText().equals(event)) {
        return next;
      }
    }
  }

  private JsonNode poll(final long deadline, final String what) {
    try {
      final long left = deadline - System.nanoTime();
      final JsonNode next = left <= 0 ? null : events.poll(left, TimeUnit.NANOSECONDS);
      if (next == null) {
        throw failure("no " + what + " in time");
      }
      switch (next.path("event").asText()) {
        case "error" -> throw failure("driver: " + next.path("message").asText());
        case "driver-ended" -> {
          events.add(next);
          throw failure("the browser driver ended: " + next.path("message").asText());
        }
        default -> {
          return next;
        }
      }
    } catch (final InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted waiting for page " + id, e);
    }
  }

  private IllegalStateException failure(final String message) {
    final List<String> lines;
    synchronized (console) {
      lines = List.copyOf(console.subList(Math.max(0, console.size() - 40), console.size()));
    }
    return new IllegalStateException("page " + id + ": " + message + "\nerrors: " + errors()
        + "\nlast console lines:\n  " + String.join("\n  ", lines));
  }

  /**
   * Evaluates {@code expression} in the page (a promise is awaited) and returns its JSON value.
   */
  public JsonNode eval(final String expression, final Duration timeout) {
    final long req = browser.nextRequest();
    browser.send(command("eval").put("req", req).put("expression", expression));
    return awaitAnswer(req, timeout);
  }

  /**
   * Adds a CDP virtual WebAuthn authenticator to the page (ctap2, internal, resident keys, user
   * verified; {@code options} override fields of {@code WebAuthn.VirtualAuthenticatorOptions}).
   * Returns its authenticator id.
   */
  public String addVirtualAuthenticator(final ObjectNode options, final Duration timeout) {
    final long req = browser.nextRequest();
    browser.send(command("webauthn").put("req", req).set("options",
        options == null ? HeadlessBrowser.JSON.createObjectNode() : options));
    return awaitAnswer(req, timeout).path("authenticatorId").asText();
  }

  private JsonNode awaitAnswer(final long req, final Duration timeout) {
    final long deadline = System.nanoTime() + timeout.toNanos();
    final List<JsonNode> skipped = new ArrayList<>();
    try {
      while (true) {
        final JsonNode next;
        try {
          next = events.poll(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (final InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new IllegalStateException("interrupted waiting for page " + id, e);
        }
        if (next == null) {
          throw failure("no answer to request " + req + " in time");
        }
        if (next.path("req").asLong(-1) == req) {
          if (next.path("event").asText().equals("error")) {
            throw failure("request " + req + " failed: " + next.path("message").asText());
          }
          return next.path("value");
        }
        if (next.path("event").asText().equals("driver-ended")) {
          skipped.add(next);
          throw failure("the browser driver ended: " + next.path("message").asText());
        }
        skipped.add(next);
      }
    } finally {
      // Reports that arrived meanwhile stay for nextReport, in order.
      final List<JsonNode> rest = new ArrayList<>();
      events.drainTo(rest);
      events.addAll(skipped);
      events.addAll(rest);
    }
  }

  private ObjectNode command(final String name) {
    return HeadlessBrowser.JSON.createObjectNode().put("cmd", name).put("page", id);
  }

  /** Every console line so far, as {@code type: text}. */
  public List<String> console() {
    synchronized (console) {
      return List.copyOf(console);
    }
  }

  /** Console errors and uncaught exceptions so far. */
  public List<String> errors() {
    synchronized (errors) {
      return List.copyOf(errors);
    }
  }

  /** The screenshot taken when the page closed. */
  public Optional<Path> screenshot() {
    return Optional.ofNullable(screenshot);
  }

  /** Screenshots the page into the browser's screenshot folder and closes its browser. */
  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    try {
      browser.send(command("close"));
      final JsonNode done = awaitEvent("closed", Duration.ofSeconds(60));
      if (done.path("screenshot").isTextual()) {
        screenshot = Path.of(done.path("screenshot").asText());
      }
    } finally {
      browser.forget(id);
    }
  }
}
