package io.relaypinner.relay.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.relaypinner.libp2p.netty.EventLoops;
import io.relaypinner.relay.config.HttpConfig;
import io.relaypinner.relay.config.RelayConfig;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Issue 36: an answer sent early, while a {@code Connection: close} request's body is still
 * arriving (a route's 403 or 503 before it reads the body), must reach the client. Closing at
 * once, with the body's bytes unread, made the kernel reset the connection, and a client that
 * sends its whole body before reading lost the answer. Performed with a raw socket that sends a
 * 1 MiB body slowly (16 KiB every 10 ms) and only then reads: the status line must be there.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class HttpLingerIT {
  private static final int BODY = 1 << 20;
  private static final int PIECE = 16 * 1024;

  private final EventLoops loops = EventLoops.create(1, "linger-it");
  private final HttpResponses responses = new HttpResponses(HttpResponses.newObjectMapper());
  private RelayHttpServer server;

  @BeforeAll
  void start() {
    final Router router = Router.builder()
        .streamed(HttpMethod.POST, "/denied", request -> CompletableFuture.completedFuture(
            responses.error(HttpResponseStatus.FORBIDDEN, "forbidden", "not for you")),
            8L << 20, "too_large")
        .streamed(HttpMethod.POST, "/busy", request -> CompletableFuture.completedFuture(
            responses.error(HttpResponseStatus.SERVICE_UNAVAILABLE, "busy", "come back later")),
            8L << 20, "too_large")
        .build();
    final HttpConfig config = new HttpConfig("127.0.0.1", 0, false, Optional.empty(),
        HttpConfig.DEFAULT_IDLE_TIMEOUT, HttpConfig.DEFAULT_MAX_INITIAL_LINE_LENGTH,
        HttpConfig.DEFAULT_MAX_HEADER_SIZE, HttpConfig.DEFAULT_MAX_BODY_SIZE);
    server = new RelayHttpServer(config, RelayConfig.DEFAULT.cors(), router, responses,
        new HttpMetrics(new PrometheusRegistry()), loops);
    server.start();
  }

  @AfterAll
  void stop() {
    if (server != null) {
      server.close();
    }
    loops.shutdownGracefully(Duration.ofSeconds(2));
  }

  @ParameterizedTest
  @CsvSource({"/denied, 403", "/busy, 503"})
  void earlyAnswer_shouldReachAClientStillSendingItsBody_thenTheServerHalfCloses(
      final String path, final int status) throws Exception {
    try (Socket socket = new Socket()) {
      socket.connect(new InetSocketAddress("127.0.0.1", server.port()), 5_000);
      socket.setSoTimeout(10_000);
      final OutputStream out = socket.getOutputStream();
      out.write(("POST " + path + " HTTP/1.1\r\nHost: relay\r\nConnection: close\r\n"
          + "Content-Type: application/octet-stream\r\nContent-Length: " + BODY + "\r\n\r\n")
          .getBytes(StandardCharsets.US_ASCII));
      out.flush();
      final byte[] piece = new byte[PIECE];
      for (int sent = 0; sent < BODY; sent += PIECE) {
        out.write(piece);
        out.flush();
        Thread.sleep(10);
      }
      final InputStream in = socket.getInputStream();
      final String statusLine = new String(in.readNBytes(12), StandardCharsets.US_ASCII);
      assertThat(statusLine).isEqualTo("HTTP/1.1 " + status);
      // The rest of the answer, then the server's half-close (end of stream, no reset).
      final String rest = new String(in.readAllBytes(), StandardCharsets.US_ASCII);
      assertThat(rest).containsIgnoringCase("connection: close");
    } catch (final IOException e) {
      throw new AssertionError("the early answer was lost: " + e, e);
    }
  }
}
