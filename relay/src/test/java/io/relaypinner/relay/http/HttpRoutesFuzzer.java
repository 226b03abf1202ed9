package io.relaypinner.relay.http;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.IThrowableProxy;
import ch.qos.logback.core.AppenderBase;
import com.code_intelligence.jazzer.api.BugDetectors;
import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.relaypinner.libp2p.crypto.KeyType;
import io.relaypinner.libp2p.crypto.Keys;
import io.relaypinner.libp2p.crypto.PrivateKey;
import io.relaypinner.relay.RelayNode;
import io.relaypinner.relay.config.RelayConfig;
import io.relaypinner.relay.identity.NodeIdentity;
import io.relaypinner.relay.testing.RawHttpResponse;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.slf4j.LoggerFactory;

/**
 * Jazzer: the relay's HTTP routes as a client drives them. One {@link RelayNode} per JVM (loopback,
 * a throwaway data directory, every route of the running relay: health, multiaddrs, metrics,
 * pinning (has-entry too), dashboard, {@code /ipfs/}, {@code /routing/v1/}, {@code /pins}, export and import)
 * gets, per input, one request on a fresh connection: either built from parts the fuzzer picks
 * (method, a known route plus a fuzzed rest of the path, query, headers that routes read, a body)
 * or raw bytes. Findings:
 * <ul>
 *   <li>a 5xx other than the documented ones (spec 4: 500 {@code sync_failed}, 503, 504), and
 *       any {@code internal_error} (a route threw: the dispatcher's catch-all);</li>
 *   <li>a well-formed request left without an answer, or an answer that is not HTTP/1.1;</li>
 *   <li>any ERROR logged by the relay while it served the input (an exception escaping a
 *       handler, or a stack trace for a client's fault).</li>
 * </ul>
 */
class HttpRoutesFuzzer {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String TOKEN = "fuzz-token-0123456789";
  private static final String[] METHODS = {"GET", "HEAD", "POST", "DELETE", "OPTIONS", "PUT"};
  private static final String[] ROUTES = {
      "/health", "/multiaddrs", "/metrics", "/pinning/stats", "/pinning/databases",
      "/pinning/sync", "/pinning/has-entry", "/dashboard", "/dashboard/status", "/ipfs/",
      "/ipfs/bafkreihdwdcefgh4dqkjv67uzcmw7ojee6xedzdetojuzjevtenxquvyku",
      "/ipfs/bafybeigdyrzt5sfp7udm7hu76uh7y26nf3efuylqabf3oclgtqy55fbzdi/",
      "/routing/v1/providers/", "/routing/v1/peers/", "/pins", "/pins/",
      "/pinning/export", "/pinning/import", "/", ""};
  private static final String[] CONTENT_TYPES = {
      "application/json", "application/vnd.ipld.car", "text/plain", "multipart/form-data"};
  private static final String[] ACCEPTS = {
      "application/vnd.ipld.raw", "application/vnd.ipld.car", "application/json",
      "application/x-tar", "*/*"};
  /** The documented 5xx statuses (spec 4); a 500 only with its documented code. */
  private static final Set<Integer> DOCUMENTED_5XX = Set.of(500, 503, 504);
  private static final Set<String> DOCUMENTED_500_CODES = Set.of("sync_failed");
  private static final Duration ANSWER_TIMEOUT = Duration.ofSeconds(30);

  private static final Relay RELAY = new Relay();

  /** The relay under test and the ERROR lines it logs. */
  private static final class Relay {
    final RelayNode node;
    final int port;
    final ErrorLog errors = new ErrorLog();

    Relay() {
      try {
        final Path dir = Files.createTempDirectory("http-routes-fuzzer");
        final PrivateKey key = Keys.generate(KeyType.ED25519, new SecureRandom());
        final NodeIdentity identity = new NodeIdentity(key, key.publicKey().peerId(),
            NodeIdentity.servingZone(key.publicKey().peerId(), "libp2p.direct"),
            NodeIdentity.Source.ENVIRONMENT);
        node = new RelayNode(RelayConfig.builder().dataDir(dir).metricsHost("127.0.0.1")
            .metricsPort(0).listenIpv4("127.0.0.1").tcpPort(0).wsPort(0)
            .quicPort(0).ipv6Disabled(true)
            .bootstrapDisabled(true).autoTlsDisabled(true)
            .pinningServiceTokens(List.of(TOKEN))
            // Bounded waits: a sync or a network fetch of a fuzzed CID gives up quickly.
            .pinningSyncTimeout(Duration.ofSeconds(1)).ipfsFallbackTimeout(Duration.ofMillis(300))
            .build(), identity, new PrometheusRegistry(), Clock.systemUTC());
        node.start();
        port = node.http().port().orElseThrow();
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
          node.close();
          deleteTree(dir);
        }));
        errors.setContext(((ch.qos.logback.classic.Logger) LoggerFactory.getLogger(
            org.slf4j.Logger.ROOT_LOGGER_NAME)).getLoggerContext());
        errors.start();
        ((ch.qos.logback.classic.Logger) LoggerFactory.getLogger(
            org.slf4j.Logger.ROOT_LOGGER_NAME)).addAppender(errors);
      } catch (final IOException e) {
        throw new IllegalStateException(e);
      }
    }
  }

  private static void deleteTree(final Path dir) {
    try (var paths = Files.walk(dir)) {
      paths.sorted(java.util.Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
    } catch (final IOException e) {
      // a temporary directory: left behind at worst
    }
  }

  private static boolean isLoopback(final String host) {
    return host.equals("localhost") || host.startsWith("127.") || host.equals("::1")
        || host.equals("0:0:0:0:0:0:0:1");
  }

  /** Collects the ERROR events logged anywhere. */
  private static final class ErrorLog extends AppenderBase<ILoggingEvent> {
    private final List<String> events = new ArrayList<>();

    @Override
    protected synchronized void append(final ILoggingEvent event) {
      if (event.getLevel().isGreaterOrEqual(Level.ERROR)) {
        final IThrowableProxy thrown = event.getThrowableProxy();
        events.add(event.getLoggerName() + ": " + event.getFormattedMessage()
            + (thrown == null ? "" : " (" + thrown.getClassName() + ": " + thrown.getMessage()
                + ")"));
      }
    }

    synchronized List<String> drain() {
      final List<String> out = List.copyOf(events);
      events.clear();
      return out;
    }
  }

  /** What was sent, for the checks. */
  private record Request(byte[] bytes, boolean wellFormed, boolean head) {}

  @FuzzTest
  void route(final FuzzedDataProvider data) throws Exception {
    // Loopback only (Jazzer resets this per fuzz test): a connection anywhere else, the relay
    // fetching from a host an input named, is a finding of its SSRF detector.
    BugDetectors.allowNetworkConnections((host, port) -> isLoopback(host));
    final Request request = data.consumeBoolean() ? raw(data) : built(data);
    final byte[] answer = exchange(request.bytes());
    check(request, answer);
    final List<String> errors = RELAY.errors.drain();
    if (!errors.isEmpty()) {
      throw new AssertionError("the relay logged an ERROR for " + describe(request) + ": "
          + errors);
    }
  }

  private static Request built(final FuzzedDataProvider data) {
    final boolean fuzzedMethod = data.consumeInt(0, 15) == 0;
    final String method = fuzzedMethod ? token(data.consumeString(12))
        : data.pickValue(METHODS);
    final StringBuilder target = new StringBuilder(data.pickValue(ROUTES));
    target.append(visible(data.consumeString(200)));
    if (data.consumeBoolean()) {
      target.append('?').append(visible(data.consumeString(200)));
    }
    final StringBuilder head = new StringBuilder();
    head.append(method.isEmpty() ? "GET" : method).append(' ')
        .append(target.length() == 0 || target.charAt(0) != '/' ? "/" + target : target)
        .append(" HTTP/1.1\r\nHost: 127.0.0.1\r\n");
    if (data.consumeBoolean()) {
      head.append("Content-Type: ").append(data.consumeBoolean()
          ? data.pickValue(CONTENT_TYPES) : visible(data.consumeString(60))).append("\r\n");
    }
    if (data.consumeBoolean()) {
      head.append("Authorization: ").append(data.consumeBoolean()
          ? "Bearer " + TOKEN : visible(data.consumeString(60))).append("\r\n");
    }
    if (data.consumeBoolean()) {
      head.append("Accept: ").append(data.consumeBoolean()
          ? data.pickValue(ACCEPTS) : visible(data.consumeString(60))).append("\r\n");
    }
    if (data.consumeBoolean()) {
      head.append("Range: ").append(data.consumeBoolean()
          ? "bytes=" + data.consumeInt(-5, 100) + "-" + data.consumeInt(-5, 100)
          : visible(data.consumeString(60))).append("\r\n");
    }
    if (data.consumeBoolean()) {
      head.append("Origin: ").append(visible(data.consumeString(60))).append("\r\n");
    }
    final byte[] body = data.consumeRemainingAsBytes();
    if (body.length > 0 || method.equals("POST")) {
      head.append("Content-Length: ").append(body.length).append("\r\n");
    }
    head.append("Connection: close\r\n\r\n");
    final ByteArrayOutputStream out = new ByteArrayOutputStream();
    out.writeBytes(head.toString().getBytes(StandardCharsets.UTF_8));
    out.writeBytes(body);
    // Well formed unless the fuzzed method is not an HTTP token (then a 400 is still due).
    return new Request(out.toByteArray(), true, method.equals("HEAD"));
  }

  private static Request raw(final FuzzedDataProvider data) {
    return new Request(data.consumeRemainingAsBytes(), false, false);
  }

  /** Printable ASCII without spaces (so the request line stays three parts). */
  private static String visible(final String text) {
    final StringBuilder out = new StringBuilder(text.length());
    for (int i = 0; i < text.length(); i++) {
      final char c = text.charAt(i);
      out.append(c > ' ' && c < 0x7f ? c : '%');
    }
    return out.toString();
  }

  /** An HTTP method token: letters only. */
  private static String token(final String text) {
    final StringBuilder out = new StringBuilder();
    for (int i = 0; i < text.length(); i++) {
      final char c = text.charAt(i);
      if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z')) {
        out.append(c);
      }
    }
    return out.toString();
  }

  /** One connection: the request, our side shut, everything the relay answers until it closes. */
  private static byte[] exchange(final byte[] request) throws IOException {
    try (Socket socket = new Socket()) {
      socket.connect(new InetSocketAddress("127.0.0.1", RELAY.port), 5_000);
      socket.setSoTimeout((int) ANSWER_TIMEOUT.toMillis());
      final OutputStream out = socket.getOutputStream();
      try {
        out.write(request);
        out.flush();
        socket.shutdownOutput();
      } catch (final IOException e) {
        // The relay refused early (a 413 or 431) and closed: what it sent is still readable.
      }
      try {
        return socket.getInputStream().readAllBytes();
      } catch (final SocketTimeoutException e) {
        throw new AssertionError("no end of the answer within " + ANSWER_TIMEOUT, e);
      } catch (final IOException e) {
        // A reset after the answer (the relay closed while bytes were unread): keep what came.
        return new byte[0];
      }
    }
  }

  private static void check(final Request request, final byte[] answer) throws IOException {
    if (answer.length == 0) {
      if (request.wellFormed()) {
        throw new AssertionError("no answer to " + describe(request));
      }
      return;
    }
    final InputStream in = new ByteArrayInputStream(answer);
    final RawHttpResponse response;
    try {
      response = RawHttpResponse.read(in, request.head());
    } catch (final IOException | NumberFormatException e) {
      throw new AssertionError("unreadable answer to " + describe(request) + ": "
          + new String(answer, 0, Math.min(answer.length, 300), StandardCharsets.ISO_8859_1), e);
    }
    if (!response.statusLine().startsWith("HTTP/1.1 ")
        && !response.statusLine().startsWith("HTTP/1.0 ")) {
      throw new AssertionError("status line " + response.statusLine());
    }
    final int status = response.status();
    if (status < 500) {
      return;
    }
    String code = "";
    if (response.body().length > 0) {
      try {
        final JsonNode body = JSON.readTree(response.body());
        code = body.path("code").asText("");
      } catch (final IOException e) {
        code = "(not JSON)";
      }
    }
    if (!DOCUMENTED_5XX.contains(status) || code.equals(ErrorCodes.INTERNAL_ERROR)
        || (status == 500 && !DOCUMENTED_500_CODES.contains(code))) {
      throw new AssertionError(status + " " + code + " for " + describe(request) + ": "
          + response.bodyText());
    }
  }

  private static String describe(final Request request) {
    final byte[] bytes = request.bytes();
    return "request " + new String(bytes, 0, Math.min(bytes.length, 400),
        StandardCharsets.ISO_8859_1).replace("\r\n", "\\r\\n");
  }
}
