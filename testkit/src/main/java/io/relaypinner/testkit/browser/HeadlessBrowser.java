package io.relaypinner.testkit.browser;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.relaypinner.testkit.JsPeer;
import io.relaypinner.testkit.NodeJs;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Headless Chromium for end-to-end tests, driven by {@code interop/js/browser/driver.mjs}
 * (playwright-core). The browser is the one the build found (the binary of the npm package
 * {@code @sparticuz/chromium}, else a system Chromium, else Debian's {@code chromium} installed
 * by the build when it runs as root; see {@code interop/js/browser/build.mjs}); when there is
 * none, {@link Builder#start()} fails with the reason, so a browser test never passes without a
 * browser.
 *
 * <p>The driver serves the pages bundled from {@code interop/js/browser/pages} on
 * {@link #httpOrigin()} and, with {@link Builder#httpsCertificate}, on {@link #httpsOrigin()}.
 * Certificates given to {@link Builder#trust} (and the https one) are accepted by the browser
 * through Chromium's {@code --ignore-certificate-errors-spki-list} (their public keys' SHA-256):
 * that is how a page reaches a relay's {@code /tls/ws} port with a test certificate. Every
 * {@link #open page} runs in its own Chromium with a new, empty profile, and is screenshotted
 * into the screenshot folder when it closes.
 */
public final class HeadlessBrowser implements AutoCloseable {
  /** The npm project under {@code interop/js} with the driver, the pages and the browser. */
  public static final String PROJECT = "browser";

  static final ObjectMapper JSON = new ObjectMapper();
  private static final Duration READY = Duration.ofSeconds(60);

  private final JsPeer driver;
  private final JsonNode ready;
  private final Map<String, BrowserPage> pages = new ConcurrentHashMap<>();
  private final BlockingQueue<JsonNode> general = new LinkedBlockingQueue<>();
  private final AtomicLong requests = new AtomicLong();
  private final Thread dispatcher;

  private HeadlessBrowser(final JsPeer driver) {
    this.driver = driver;
    final JsonNode first;
    try {
      first = driver.nextJson(READY);
    } catch (final RuntimeException e) {
      driver.close();
      throw e;
    }
    if (!"ready".equals(first.path("event").asText())) {
      driver.close();
      throw new IllegalStateException("headless Chromium is not available: "
          + first.path("message").asText(first.toString()));
    }
    this.ready = first;
    this.dispatcher = new Thread(this::dispatch, "browser-driver");
    dispatcher.setDaemon(true);
    dispatcher.start();
  }

  public static Builder builder() {
    return new Builder();
  }

  /** {@code http://127.0.0.1:<port>}, serving the bundled pages. */
  public URI httpOrigin() {
    return URI.create(ready.get("http").asText());
  }

  /** {@code https://127.0.0.1:<port>}, when started with a certificate. */
  public Optional<URI> httpsOrigin() {
    return ready.path("https").isTextual()
        ? Optional.of(URI.create(ready.get("https").asText())) : Optional.empty();
  }

  /** Which Chromium runs, e.g. {@code "153.0.8010.0 (npm @sparticuz/chromium 153.0.0)"}. */
  public String browserVersion() {
    final JsonNode browser = ready.get("browser");
    return browser.path("version").asText() + " (" + browser.path("source").asText() + ")";
  }

  /**
   * Opens {@code pathAndQuery} (e.g. {@code "/orbitdb.html?role=reader"}) on the http or https
   * origin in a new browser with a fresh profile, and waits until the page has loaded.
   */
  public BrowserPage open(final String id, final boolean https, final String pathAndQuery) {
    if (https && httpsOrigin().isEmpty()) {
      throw new IllegalStateException("the browser was started without an https certificate");
    }
    return open(id, pathAndQuery, https ? "https" : "http");
  }

  /** Opens any URL (e.g. a page the relay serves) in a new browser with a fresh profile. */
  public BrowserPage open(final String id, final URI url) {
    return open(id, url.toString(), "http");
  }

  private BrowserPage open(final String id, final String url, final String scheme) {
    final BrowserPage page = new BrowserPage(this, id);
    if (pages.putIfAbsent(id, page) != null) {
      throw new IllegalArgumentException("page " + id + " is already open");
    }
    final ObjectNode command = JSON.createObjectNode().put("cmd", "open").put("page", id)
        .put("url", url).put("scheme", scheme);
    send(command);
    page.awaitEvent("opened", Duration.ofSeconds(90));
    return page;
  }

  long nextRequest() {
    return requests.incrementAndGet();
  }

  void send(final ObjectNode command) {
    driver.send(command.toString());
  }

  void forget(final String id) {
    pages.remove(id);
  }

  /** What the driver wrote to standard error so far (playwright's and Chromium's complaints). */
  public String driverStderr() {
    return driver.stderr();
  }

  private void dispatch() {
    while (true) {
      final JsonNode event;
      try {
        event = driver.nextJson(Duration.ofDays(1));
      } catch (final IllegalStateException ended) {
        final JsonNode gone = JSON.createObjectNode().put("event", "driver-ended")
            .put("message", ended.getMessage());
        pages.values().forEach(p -> p.deliver(gone));
        general.add(gone);
        return;
      }
      final BrowserPage page = pages.get(event.path("page").asText(""));
      if (page != null) {
        page.deliver(event);
      } else {
        general.add(event);
      }
    }
  }

  /** Events that belong to no open page (driver errors), drained. */
  public List<JsonNode> otherEvents() {
    final List<JsonNode> out = new ArrayList<>();
    general.drainTo(out);
    return out;
  }

  /** Closes every page (each screenshotted), the page servers and the driver. */
  @Override
  public void close() {
    // Pages first, each waiting for its screenshot, so the driver has nothing left to do when
    // its stdin closes (JsPeer gives it a few seconds before killing it).
    for (final BrowserPage page : List.copyOf(pages.values())) {
      try {
        page.close();
      } catch (final RuntimeException e) {
        // Still close the rest and the driver; the page's own failure was reported by the test.
      }
    }
    driver.close();
    try {
      dispatcher.join(TimeUnit.SECONDS.toMillis(30));
    } catch (final InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** Options of a {@link HeadlessBrowser}. */
  public static final class Builder {
    private Path screenshots = Path.of("target", "browser-screenshots");
    private Path certificatePem;
    private Path keyPem;
    private final List<Path> trusted = new ArrayList<>();

    private Builder() {}

    /**
     * Where each page's screenshot goes ({@code <id>.png}); default
     * {@code target/browser-screenshots}.
     */
    public Builder screenshots(final Path dir) {
      this.screenshots = dir;
      return this;
    }

    /**
     * Serves the pages on https too, with this certificate and key (PEM, PKCS#8 key); the
     * browser trusts this certificate.
     */
    public Builder httpsCertificate(final Path certificate, final Path key) {
      this.certificatePem = certificate;
      this.keyPem = key;
      return this;
    }

    /**
     * A certificate (PEM) the browser accepts, e.g. the relay's test certificate for
     * {@code /tls/ws}.
     */
    public Builder trust(final Path certificate) {
      trusted.add(certificate);
      return this;
    }

    /** Starts the driver and waits for its page servers. */
    public HeadlessBrowser start() {
      final List<String> args = new ArrayList<>(List.of(
          "--screenshots", screenshots.toAbsolutePath().toString()));
      if (certificatePem != null) {
        args.addAll(List.of("--cert", certificatePem.toAbsolutePath().toString(),
            "--key", keyPem.toAbsolutePath().toString()));
      }
      if (!trusted.isEmpty()) {
        args.add("--trust");
        args.add(String.join(",", trusted.stream()
            .map(p -> p.toAbsolutePath().toString()).toList()));
      }
      return new HeadlessBrowser(NodeJs.start(PROJECT, "driver.mjs", args.toArray(String[]::new)));
    }
  }
}
