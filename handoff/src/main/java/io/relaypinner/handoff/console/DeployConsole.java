package io.relaypinner.handoff.console;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsServer;
import io.relaypinner.handoff.deploy.HandoffMode;
import io.relaypinner.handoff.deploy.LocalHostProvider;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Clock;
import java.util.Base64;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import javax.net.ssl.SSLContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The deploy console (docs/operators.md): one page from which an operator deploys relays with the
 * local provider by push or pull and watches the progress the CLI prints, lists them and erases
 * them. Served over HTTP, or HTTPS with a certificate; the page's origin is what the deployment
 * sees, so from an {@code https://} page a push is refused before any host is created (spec
 * 3.2.5) and a pull works (3.3.1).
 *
 * <p>Routes: {@code GET /} the page (strict CSP: only its own inline script and style);
 * {@code POST /api/deploy} {@code {"handoff": "push"|"pull"|null}} starts a deployment (202
 * {@code {id}}, 409 while one runs); {@code GET /api/deploy/<id>} its progress and result;
 * {@code GET /api/deployments} the local guests; {@code POST /api/erase} {@code {"id": ...}}.
 * A POST must carry an {@code Origin} equal to the console's own (the page's), else 403: another
 * site cannot drive it. Every request must name the console by the address it listens on or a
 * loopback name in {@code Host}, else 421: a site whose DNS name was rebound to this address
 * cannot read or drive it either. Bodies are limited to {@link #MAX_BODY} bytes.
 */
public final class DeployConsole implements AutoCloseable {
  static final int MAX_BODY = 4096;
  private static final Logger LOG = LoggerFactory.getLogger(DeployConsole.class);
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Pattern JOB = Pattern.compile("/api/deploy/(d[0-9]{1,9})");

  private final LocalHostProvider provider;
  private final Optional<SSLContext> tls;
  private final ConsoleJobs jobs;
  private final ExecutorService deploys;
  private final ExecutorService requests;
  private final byte[] page;
  private final String csp;
  private HttpServer server;
  private volatile Set<String> hosts = Set.of();

  /**
   * @param tls serve HTTPS with this context, or plain HTTP when empty
   */
  public DeployConsole(final ConsoleDeployer deployer, final LocalHostProvider provider,
      final Optional<SSLContext> tls, final Clock clock) {
    this.provider = Objects.requireNonNull(provider, "provider");
    this.tls = Objects.requireNonNull(tls, "tls");
    this.deploys = Executors.newSingleThreadExecutor(r -> daemon(r, "deploy-console-deploy"));
    this.requests = Executors.newFixedThreadPool(4, r -> daemon(r, "deploy-console-http"));
    this.jobs = new ConsoleJobs(Objects.requireNonNull(deployer, "deployer"), deploys,
        Objects.requireNonNull(clock, "clock"));
    final String html = load("console.html");
    this.page = html.getBytes(StandardCharsets.UTF_8);
    this.csp = "default-src 'none'; script-src " + hashes(html, "script") + "; style-src "
        + hashes(html, "style") + "; connect-src 'self'; img-src 'self' data:; base-uri 'none';"
        + " form-action 'none'; frame-ancestors 'none'";
  }

  private static Thread daemon(final Runnable r, final String name) {
    final Thread thread = new Thread(r, name);
    thread.setDaemon(true);
    return thread;
  }

  /** Binds and serves; returns the bound address. */
  public synchronized InetSocketAddress start(final String host, final int port)
      throws IOException {
    final InetSocketAddress address = new InetSocketAddress(host, port);
    if (tls.isPresent()) {
      final HttpsServer https = HttpsServer.create(address, 64);
      https.setHttpsConfigurator(new HttpsConfigurator(tls.get()));
      server = https;
    } else {
      server = HttpServer.create(address, 64);
    }
    server.createContext("/", this::handle);
    server.setExecutor(requests);
    server.start();
    final int bound = server.getAddress().getPort();
    final String given = host.contains(":") && !host.startsWith("[") ? "[" + host + "]" : host;
    hosts = Stream.of(given + ":" + bound, "localhost:" + bound, "127.0.0.1:" + bound,
        "[::1]:" + bound).map(h -> h.toLowerCase(Locale.ROOT))
        .collect(Collectors.toUnmodifiableSet());
    LOG.info("deploy console listening on {}://{}:{}", scheme(), host,
        server.getAddress().getPort());
    return server.getAddress();
  }

  /** {@code http} or {@code https}. */
  public String scheme() {
    return tls.isPresent() ? "https" : "http";
  }

  private void handle(final HttpExchange exchange) throws IOException {
    try (exchange) {
      final String method = exchange.getRequestMethod().toUpperCase(Locale.ROOT);
      final String path = exchange.getRequestURI().getPath();
      exchange.getResponseHeaders().set("X-Content-Type-Options", "nosniff");
      exchange.getResponseHeaders().set("Referrer-Policy", "no-referrer");
      exchange.getResponseHeaders().set("Cache-Control", "no-store");
      final String hostHeader = exchange.getRequestHeaders().getFirst("Host");
      if (hostHeader == null || !hosts.contains(hostHeader.toLowerCase(Locale.ROOT))) {
        json(exchange, 421, error("misdirected_request", "open the console by the address it "
            + "listens on or by localhost"));
        return;
      }
      if (method.equals("GET") && path.equals("/")) {
        exchange.getResponseHeaders().set("Content-Security-Policy", csp);
        exchange.getResponseHeaders().set("X-Frame-Options", "DENY");
        send(exchange, 200, "text/html; charset=utf-8", page);
        return;
      }
      if (method.equals("GET") && path.equals("/api/deployments")) {
        json(exchange, 200, deployments());
        return;
      }
      final Matcher job = JOB.matcher(path);
      if (method.equals("GET") && job.matches()) {
        final Optional<ObjectNode> found = jobs.json(job.group(1));
        if (found.isPresent()) {
          json(exchange, 200, found.get());
        } else {
          json(exchange, 404, error("not_found", "no deployment " + job.group(1)));
        }
        return;
      }
      if (method.equals("POST") && (path.equals("/api/deploy") || path.equals("/api/erase"))) {
        final Optional<URI> origin = sameOrigin(exchange);
        if (origin.isEmpty()) {
          json(exchange, 403, error("forbidden_origin",
              "requests must come from this console's own page"));
          return;
        }
        final JsonNode body;
        try {
          body = JSON.readTree(readBody(exchange.getRequestBody()));
        } catch (final IOException e) {
          json(exchange, 400, error("bad_request", "the body must be a JSON object of at most "
              + MAX_BODY + " bytes"));
          return;
        }
        if (path.equals("/api/deploy")) {
          deploy(exchange, body, origin.get());
        } else {
          erase(exchange, body);
        }
        return;
      }
      json(exchange, 404, error("not_found", method + " " + path));
    } catch (final RuntimeException e) {
      LOG.warn("deploy console: {} {} failed: {}", exchange.getRequestMethod(),
          exchange.getRequestURI().getPath(), e.toString());
    }
  }

  private void deploy(final HttpExchange exchange, final JsonNode body, final URI origin)
      throws IOException {
    final String handoff = body.path("handoff").asText("");
    final Optional<HandoffMode> mode;
    switch (handoff) {
      case "", "auto" -> mode = Optional.empty();
      case "push" -> mode = Optional.of(HandoffMode.PUSH);
      case "pull" -> mode = Optional.of(HandoffMode.PULL);
      default -> {
        json(exchange, 400, error("bad_request", "handoff is push, pull or auto"));
        return;
      }
    }
    final Optional<String> id = jobs.start(mode, origin);
    if (id.isEmpty()) {
      json(exchange, 409, error("busy", "a deployment is already running"));
      return;
    }
    LOG.info("deploy console: deployment {} started (handoff {}, origin {})", id.get(),
        mode.map(HandoffMode::wireName).orElse("auto"), origin);
    json(exchange, 202, JSON.createObjectNode().put("id", id.get()));
  }

  private void erase(final HttpExchange exchange, final JsonNode body) throws IOException {
    final String id = body.path("id").asText("");
    final List<String> erased;
    try {
      erased = provider.eraseMatching(id);
    } catch (final IllegalArgumentException e) {
      json(exchange, 400, error("bad_request", "id: " + e.getMessage()));
      return;
    } catch (final RuntimeException e) {
      json(exchange, 500, error("erase_failed", e.getMessage()));
      return;
    }
    if (erased.isEmpty()) {
      json(exchange, 404, error("not_found", "no local deployment " + id));
      return;
    }
    LOG.info("deploy console: erased {}", erased);
    final ObjectNode out = JSON.createObjectNode();
    final ArrayNode list = out.putArray("erased");
    erased.forEach(list::add);
    json(exchange, 200, out);
  }

  private ArrayNode deployments() {
    final ArrayNode array = JSON.createArrayNode();
    for (final LocalHostProvider.LocalInstance i : provider.list()) {
      array.add(i.json().deepCopy().put("running", i.alive()));
    }
    return array;
  }

  /** The request's Origin when it is this console's own ({@code scheme://Host}), else empty. */
  private Optional<URI> sameOrigin(final HttpExchange exchange) {
    final String origin = exchange.getRequestHeaders().getFirst("Origin");
    final String host = exchange.getRequestHeaders().getFirst("Host");
    if (origin == null || host == null || !origin.equals(scheme() + "://" + host)) {
      return Optional.empty();
    }
    try {
      return Optional.of(URI.create(origin));
    } catch (final IllegalArgumentException e) {
      return Optional.empty();
    }
  }

  private static byte[] readBody(final InputStream in) throws IOException {
    final byte[] bytes = in.readNBytes(MAX_BODY + 1);
    if (bytes.length > MAX_BODY) {
      throw new IOException("body too large");
    }
    return bytes;
  }

  private static ObjectNode error(final String code, final String message) {
    return JSON.createObjectNode().put("ok", false).put("code", code).put("error", message);
  }

  private static void json(final HttpExchange exchange, final int status, final JsonNode body)
      throws IOException {
    send(exchange, status, "application/json; charset=utf-8", JSON.writeValueAsBytes(body));
  }

  private static void send(final HttpExchange exchange, final int status, final String type,
      final byte[] body) throws IOException {
    exchange.getResponseHeaders().set("Content-Type", type);
    exchange.sendResponseHeaders(status, body.length);
    try (OutputStream out = exchange.getResponseBody()) {
      out.write(body);
    }
  }

  /** The CSP source list allowing every inline {@code <tag>} element of {@code html}. */
  static String hashes(final String html, final String tag) {
    final Matcher m = Pattern.compile("<" + tag + ">(.*?)</" + tag + ">", Pattern.DOTALL)
        .matcher(html);
    final StringBuilder out = new StringBuilder();
    while (m.find()) {
      if (!out.isEmpty()) {
        out.append(' ');
      }
      try {
        out.append("'sha256-").append(Base64.getEncoder().encodeToString(MessageDigest
            .getInstance("SHA-256").digest(m.group(1).getBytes(StandardCharsets.UTF_8))))
            .append('\'');
      } catch (final NoSuchAlgorithmException e) {
        throw new IllegalStateException(e);
      }
    }
    return out.isEmpty() ? "'none'" : out.toString();
  }

  private static String load(final String name) {
    try (InputStream in = DeployConsole.class.getResourceAsStream(name)) {
      if (in == null) {
        throw new IllegalStateException("missing resource " + name);
      }
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (final IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  @Override
  public synchronized void close() {
    if (server != null) {
      server.stop(0);
      server = null;
    }
    requests.shutdownNow();
    deploys.shutdownNow();
  }
}
