package io.relaypinner.relay.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.channel.socket.ChannelInputShutdownEvent;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.timeout.IdleStateEvent;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.relaypinner.relay.config.RelayConfig;
import io.relaypinner.relay.testing.RawHttpResponse;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The connection pipeline, byte-exactly, on an {@link EmbeddedChannel}. */
class HttpPipelineTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  private final PrometheusRegistry registry = new PrometheusRegistry();
  private final HttpMetrics metrics = new HttpMetrics(registry);
  private final HttpResponses responses = new HttpResponses(HttpResponses.newObjectMapper());
  private final CompletableFuture<FullHttpResponse> slow = new CompletableFuture<>();
  private final Router router = Router.builder()
      .get("/health", RouteHandler.sync(r ->
          responses.json(HttpResponseStatus.OK, Map.of("status", "ok"))))
      .post("/echo", RouteHandler.sync(r -> HttpResponses.text(HttpResponseStatus.OK,
          r.content().toString(StandardCharsets.UTF_8) + "|" + r.queryParameter("q").orElse(""))))
      .get("/slow", r -> slow)
      .get("/boom", r -> {
        throw new IllegalStateException("route bug");
      })
      .getPrefix("/ipfs/", RouteHandler.sync(r -> HttpResponses.text(HttpResponseStatus.OK,
          r.path())))
      // A token-protected route with a body: checks the token first, as the real ones do.
      .post("/guarded", RouteHandler.sync(r -> "Bearer s3cret".equals(
          r.headers().get(HttpHeaderNames.AUTHORIZATION))
          ? HttpResponses.text(HttpResponseStatus.OK, r.content().toString(StandardCharsets.UTF_8))
          : HttpResponses.text(HttpResponseStatus.UNAUTHORIZED,
              "unauthorized, body of " + r.content().readableBytes())))
      .authorizedBody(HttpMethod.POST, "/guarded", "Bearer s3cret"::equals)
      .build();
  private EmbeddedChannel channel;

  @AfterEach
  void tearDown() {
    if (channel != null) {
      channel.finishAndReleaseAll();
    }
  }

  private EmbeddedChannel open(final RelayConfig config) {
    channel = new EmbeddedChannel(new HttpServerInitializer(config.http(),
        new CorsPolicy(config.cors()), router, responses, metrics));
    return channel;
  }

  private EmbeddedChannel open() {
    return open(RelayConfig.DEFAULT);
  }

  private static void send(final EmbeddedChannel ch, final String text) {
    ch.writeInbound(Unpooled.copiedBuffer(text, StandardCharsets.ISO_8859_1));
    ch.runPendingTasks();
  }

  private static InputStream output(final EmbeddedChannel ch) {
    final ByteArrayOutputStream out = new ByteArrayOutputStream();
    for (ByteBuf buf = ch.readOutbound(); buf != null; buf = ch.readOutbound()) {
      final byte[] bytes = new byte[buf.readableBytes()];
      buf.readBytes(bytes);
      buf.release();
      out.writeBytes(bytes);
    }
    return new ByteArrayInputStream(out.toByteArray());
  }

  private static RawHttpResponse exchange(final EmbeddedChannel ch, final String request)
      throws IOException {
    send(ch, request);
    final InputStream in = output(ch);
    final RawHttpResponse response = RawHttpResponse.read(in, request.startsWith("HEAD "));
    assertThat(in.available()).as("bytes after the response").isZero();
    return response;
  }

  private static JsonNode json(final RawHttpResponse response) throws IOException {
    return JSON.readTree(response.body());
  }

  @Test
  void get_shouldAnswerJsonWithLengthAndCors_whenRouteIsKnown() throws IOException {
    final RawHttpResponse r = exchange(open(), "GET /health?x=1 HTTP/1.1\r\nHost: a\r\n\r\n");
    assertThat(r.status()).isEqualTo(200);
    assertThat(r.header("content-type")).isEqualTo("application/json; charset=utf-8");
    assertThat(r.header("content-length")).isEqualTo(Integer.toString(r.body().length));
    assertThat(r.bodyText()).isEqualTo("{\"status\":\"ok\"}");
    assertThat(r.header("access-control-allow-origin")).isEqualTo("*");
    assertThat(r.header("access-control-allow-methods")).isEqualTo("GET, POST, DELETE, OPTIONS, HEAD");
    assertThat(r.header("access-control-allow-headers")).isEqualTo("Content-Type, Authorization");
    assertThat(r.header("access-control-max-age")).isEqualTo("86400");
    assertThat(r.header("vary")).isNull();
    assertThat(r.header("connection")).isNull();
    assertThat(channel.isOpen()).isTrue();
  }

  @Test
  void head_shouldSendGetHeadersWithoutBody_whenGetRouteExists() throws IOException {
    final EmbeddedChannel ch = open();
    final RawHttpResponse get = exchange(ch, "GET /health HTTP/1.1\r\nHost: a\r\n\r\n");
    final RawHttpResponse head = exchange(ch, "HEAD /health HTTP/1.1\r\nHost: a\r\n\r\n");
    assertThat(head.statusLine()).isEqualTo(get.statusLine());
    assertThat(head.headers()).isEqualTo(get.headers());
    assertThat(head.header("content-length")).isEqualTo("15");
    assertThat(head.body()).isEmpty();
    // exchange() checked that no body bytes followed; the connection still serves requests.
    assertThat(exchange(ch, "GET /health HTTP/1.1\r\nHost: a\r\n\r\n").status()).isEqualTo(200);
  }

  @Test
  void unknownPath_shouldAnswer404PlainText_whenNoRouteMatches() throws IOException {
    final RawHttpResponse r = exchange(open(), "GET /nope HTTP/1.1\r\nHost: a\r\n\r\n");
    assertThat(r.status()).isEqualTo(404);
    assertThat(r.header("content-type")).isEqualTo("text/plain; charset=utf-8");
    assertThat(r.bodyText()).isEqualTo("Not found");
    assertThat(r.header("access-control-allow-origin")).isEqualTo("*");
    assertThat(channel.isOpen()).isTrue();
    assertThat(exchange(channel, "GET /health/ HTTP/1.1\r\nHost: a\r\n\r\n").status())
        .isEqualTo(404);
  }

  @Test
  void wrongMethod_shouldAnswer405JsonWithAllow_whenPathIsKnown() throws IOException {
    final RawHttpResponse r = exchange(open(),
        "POST /health HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\n\r\n{}");
    assertThat(r.status()).isEqualTo(405);
    assertThat(r.header("allow")).isEqualTo("GET, HEAD, OPTIONS");
    assertThat(r.header("content-type")).isEqualTo("application/json; charset=utf-8");
    final JsonNode body = json(r);
    assertThat(body.get("ok").asBoolean(true)).isFalse();
    assertThat(body.get("code").asText()).isEqualTo("method_not_allowed");
    assertThat(body.get("error").asText()).contains("POST", "/health");
    assertThat(r.header("access-control-allow-origin")).isEqualTo("*");
    assertThat(channel.isOpen()).isTrue();
  }

  @Test
  void options_shouldAnswer204WithCorsHeaders_whenPathIsKnownOrUnknown() throws IOException {
    final EmbeddedChannel ch = open();
    for (final String path : List.of("/health", "/does/not/exist", "*")) {
      final RawHttpResponse r = exchange(ch, "OPTIONS " + path + " HTTP/1.1\r\nHost: a\r\n\r\n");
      assertThat(r.status()).as(path).isEqualTo(204);
      assertThat(r.header("access-control-allow-methods")).isEqualTo("GET, POST, DELETE, OPTIONS, HEAD");
      assertThat(r.header("access-control-allow-headers"))
          .isEqualTo("Content-Type, Authorization");
      assertThat(r.header("access-control-max-age")).isEqualTo("86400");
      assertThat(r.header("content-length")).isNull();
      assertThat(r.body()).isEmpty();
    }
  }

  @Test
  void preflight_shouldAnswer204_whenBrowserAsksForPostWithContentType() throws IOException {
    final RawHttpResponse r = exchange(open(), "OPTIONS /pinning/sync HTTP/1.1\r\nHost: a\r\n"
        + "Origin: https://app.example\r\nAccess-Control-Request-Method: POST\r\n"
        + "Access-Control-Request-Headers: content-type\r\n\r\n");
    assertThat(r.status()).isEqualTo(204);
    assertThat(r.header("access-control-allow-origin")).isEqualTo("*");
    assertThat(r.header("access-control-allow-methods")).contains("POST");
    assertThat(r.header("access-control-allow-headers")).containsIgnoringCase("content-type");
  }

  @Test
  void cors_shouldEchoListedOriginWithVary_whenAllowlistConfigured() throws IOException {
    final EmbeddedChannel ch = open(RelayConfig.builder()
        .corsOrigins(List.of("https://app.example", "http://localhost:5173")).build());
    final RawHttpResponse listed = exchange(ch,
        "GET /health HTTP/1.1\r\nHost: a\r\nOrigin: http://localhost:5173\r\n\r\n");
    assertThat(listed.header("access-control-allow-origin")).isEqualTo("http://localhost:5173");
    assertThat(listed.headerValues("vary")).containsExactly("Origin");
    final RawHttpResponse unlisted = exchange(ch,
        "GET /nope HTTP/1.1\r\nHost: a\r\nOrigin: https://evil.example\r\n\r\n");
    assertThat(unlisted.status()).isEqualTo(404);
    assertThat(unlisted.header("access-control-allow-origin")).isNull();
    assertThat(unlisted.headerValues("vary")).containsExactly("Origin");
    final RawHttpResponse none = exchange(ch, "OPTIONS /health HTTP/1.1\r\nHost: a\r\n\r\n");
    assertThat(none.header("access-control-allow-origin")).isNull();
    assertThat(none.header("access-control-allow-methods")).isEqualTo("GET, POST, DELETE, OPTIONS, HEAD");
  }

  @Test
  void halfClose_shouldStillAnswerEveryRequest_thenClose() throws IOException {
    // HttpRoutesFuzzer: a client that shut its output after the request got no answer from an
    // asynchronous route (the connection closed on the client's FIN).
    final EmbeddedChannel ch = open();
    send(ch, "GET /slow HTTP/1.1\r\nHost: a\r\n\r\nGET /health HTTP/1.1\r\nHost: a\r\n\r\n");
    ch.pipeline().fireUserEventTriggered(ChannelInputShutdownEvent.INSTANCE);
    ch.runPendingTasks();
    assertThat(ch.isOpen()).as("open while an answer is due").isTrue();
    slow.complete(HttpResponses.text(HttpResponseStatus.OK, "slow"));
    ch.runPendingTasks();
    final InputStream in = output(ch);
    assertThat(RawHttpResponse.read(in, false).bodyText()).isEqualTo("slow");
    assertThat(RawHttpResponse.read(in, false).status()).isEqualTo(200);
    assertThat(ch.isOpen()).as("closed once everything is answered").isFalse();
  }

  @Test
  void badQueryEncoding_shouldAnswer400_notFailTheRoute() throws IOException {
    // HttpRoutesFuzzer: "?%%" threw from the route's parameter lookup (500 and a stack trace).
    final RawHttpResponse r = exchange(open(),
        "POST /echo?q=%%zz HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\n\r\nx");
    assertThat(r.status()).isEqualTo(400);
    assertThat(json(r).get("code").asText()).isEqualTo(ErrorCodes.BAD_REQUEST);
    assertThat(channel.isOpen()).isTrue();
    assertThat(exchange(channel, "POST /echo?q=%41 HTTP/1.1\r\nHost: a\r\nContent-Length: 1"
        + "\r\n\r\nx").bodyText()).isEqualTo("x|A");
  }

  @Test
  void halfClose_shouldClose_whenNothingIsDue() {
    final EmbeddedChannel ch = open();
    ch.pipeline().fireUserEventTriggered(ChannelInputShutdownEvent.INSTANCE);
    ch.runPendingTasks();
    assertThat(ch.isOpen()).isFalse();
  }

  @Test
  void cors_shouldPairOriginsWithResponses_whenRequestsArePipelined() throws IOException {
    final EmbeddedChannel ch = open(RelayConfig.builder()
        .corsOrigins(List.of("https://a.example", "https://b.example")).build());
    send(ch, "GET /slow HTTP/1.1\r\nHost: a\r\nOrigin: https://a.example\r\n\r\n"
        + "GET /health HTTP/1.1\r\nHost: a\r\n\r\n"
        + "GET /health HTTP/1.1\r\nHost: a\r\nOrigin: https://b.example\r\n\r\n");
    assertThat(output(ch).available()).as("nothing before the slow answer").isZero();
    slow.complete(HttpResponses.text(HttpResponseStatus.OK, "slow"));
    ch.runPendingTasks();
    final InputStream in = output(ch);
    final RawHttpResponse first = RawHttpResponse.read(in, false);
    final RawHttpResponse second = RawHttpResponse.read(in, false);
    final RawHttpResponse third = RawHttpResponse.read(in, false);
    assertThat(first.bodyText()).isEqualTo("slow");
    assertThat(first.header("access-control-allow-origin")).isEqualTo("https://a.example");
    assertThat(second.header("access-control-allow-origin")).isNull();
    assertThat(third.header("access-control-allow-origin")).isEqualTo("https://b.example");
  }

  @Test
  void oversizedHeaders_shouldAnswer431JsonAndClose_whenHeaderBlockExceedsLimit()
      throws IOException {
    final EmbeddedChannel ch = open(RelayConfig.builder().httpMaxHeaderSize(1024).build());
    final RawHttpResponse r = exchange(ch,
        "GET /health HTTP/1.1\r\nHost: a\r\nX-Big: " + "x".repeat(2000) + "\r\n\r\n");
    assertThat(r.status()).isEqualTo(431);
    assertThat(r.header("content-type")).isEqualTo("application/json; charset=utf-8");
    assertThat(r.header("connection")).isEqualTo("close");
    assertThat(r.header("access-control-allow-origin")).isEqualTo("*");
    final JsonNode body = json(r);
    assertThat(body.get("ok").asBoolean(true)).isFalse();
    assertThat(body.get("code").asText()).isEqualTo("headers_too_large");
    assertThat(body.get("error").asText()).contains("1024");
    assertThat(ch.isOpen()).isFalse();
  }

  @Test
  void oversizedRequestLine_shouldAnswer431_whenUriExceedsLimit() throws IOException {
    final EmbeddedChannel ch = open(RelayConfig.builder().httpMaxInitialLineLength(256).build());
    final RawHttpResponse r =
        exchange(ch, "GET /ipfs/" + "a".repeat(400) + " HTTP/1.1\r\nHost: a\r\n\r\n");
    assertThat(r.status()).isEqualTo(431);
    assertThat(json(r).get("code").asText()).isEqualTo("headers_too_large");
    assertThat(ch.isOpen()).isFalse();
  }

  @Test
  void oversizedBody_shouldAnswer413Json_whenContentLengthExceedsLimit() throws IOException {
    final EmbeddedChannel ch = open(RelayConfig.builder().httpMaxBodySize(100).build());
    final RawHttpResponse r = exchange(ch, "POST /echo HTTP/1.1\r\nHost: a\r\n"
        + "Content-Type: application/json\r\nContent-Length: 101\r\n\r\n" + "x".repeat(101));
    assertThat(r.status()).isEqualTo(413);
    assertThat(r.header("connection")).isEqualTo("close");
    assertThat(r.header("access-control-allow-origin")).isEqualTo("*");
    final JsonNode body = json(r);
    assertThat(body.get("ok").asBoolean(true)).isFalse();
    assertThat(body.get("code").asText()).isEqualTo("payload_too_large");
    assertThat(ch.isOpen()).isFalse();
  }

  @Test
  void oversizedBody_shouldAnswer413Json_whenChunkedBodyGrowsPastLimit() throws IOException {
    final EmbeddedChannel ch = open(RelayConfig.builder().httpMaxBodySize(100).build());
    final RawHttpResponse r = exchange(ch, "POST /echo HTTP/1.1\r\nHost: a\r\n"
        + "Transfer-Encoding: chunked\r\n\r\n" + "3c\r\n" + "y".repeat(60) + "\r\n"
        + "3c\r\n" + "y".repeat(60) + "\r\n0\r\n\r\n");
    assertThat(r.status()).isEqualTo(413);
    assertThat(json(r).get("code").asText()).isEqualTo("payload_too_large");
  }

  @Test
  void expectContinue_shouldAnswer413NotContinue_whenDeclaredBodyExceedsLimit()
      throws IOException {
    final EmbeddedChannel ch = open(RelayConfig.builder().httpMaxBodySize(100).build());
    final RawHttpResponse r = exchange(ch, "POST /echo HTTP/1.1\r\nHost: a\r\n"
        + "Expect: 100-continue\r\nContent-Length: 5000\r\n\r\n");
    assertThat(r.status()).isEqualTo(413);
    assertThat(json(r).get("code").asText()).isEqualTo("payload_too_large");
  }

  @Test
  void expectContinue_shouldSend100ThenAnswer_whenDeclaredBodyFits() throws IOException {
    final EmbeddedChannel ch = open();
    send(ch, "POST /echo HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\n"
        + "Content-Length: 5\r\n\r\n");
    final RawHttpResponse interim = RawHttpResponse.read(output(ch), false);
    assertThat(interim.status()).isEqualTo(100);
    assertThat(interim.header("access-control-allow-origin")).isNull();
    final RawHttpResponse r = exchange(ch, "hello");
    assertThat(r.status()).isEqualTo(200);
    assertThat(r.bodyText()).isEqualTo("hello|");
    assertThat(r.header("access-control-allow-origin")).isEqualTo("*");
  }

  @Test
  void body_shouldReachRoute_whenWithinLimit() throws IOException {
    final RawHttpResponse r = exchange(open(), "POST /echo?q=a%2Fb HTTP/1.1\r\nHost: a\r\n"
        + "Content-Length: 7\r\n\r\n{\"a\":1}");
    assertThat(r.status()).isEqualTo(200);
    assertThat(r.bodyText()).isEqualTo("{\"a\":1}|a/b");
  }

  @Test
  void malformedRequest_shouldAnswer400Json_whenHeaderLineIsInvalid() throws IOException {
    final RawHttpResponse r = exchange(open(),
        "GET /health HTTP/1.1\r\nHost: a\r\nContent-Length: abc\r\n\r\n");
    assertThat(r.status()).isEqualTo(400);
    assertThat(json(r).get("code").asText()).isEqualTo("bad_request");
    assertThat(channel.isOpen()).isFalse();
  }

  @Test
  void routeFailure_shouldAnswer500Json_whenHandlerThrows() throws IOException {
    final RawHttpResponse r = exchange(open(), "GET /boom HTTP/1.1\r\nHost: a\r\n\r\n");
    assertThat(r.status()).isEqualTo(500);
    final JsonNode body = json(r);
    assertThat(body.get("code").asText()).isEqualTo("internal_error");
    assertThat(body.get("error").asText()).doesNotContain("route bug");
    assertThat(channel.isOpen()).isTrue();
  }

  @Test
  void asyncRoute_shouldAnswer500_whenFutureFails() throws IOException {
    final EmbeddedChannel ch = open();
    send(ch, "GET /slow HTTP/1.1\r\nHost: a\r\n\r\n");
    slow.completeExceptionally(new IllegalStateException("background failure"));
    ch.runPendingTasks();
    assertThat(RawHttpResponse.read(output(ch), false).status()).isEqualTo(500);
  }

  @Test
  void prefixRoute_shouldServeSubpaths_whenRegisteredAsPrefix() throws IOException {
    final RawHttpResponse r =
        exchange(open(), "GET /ipfs/bafy/a/b.png HTTP/1.1\r\nHost: a\r\n\r\n");
    assertThat(r.bodyText()).isEqualTo("/ipfs/bafy/a/b.png");
    assertThat(exchange(channel, "POST /ipfs/x HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n")
        .header("allow")).isEqualTo("GET, HEAD, OPTIONS");
  }

  @Test
  void keepAlive_shouldCloseAfterResponse_whenClientAsksOrSpeaksHttp10() throws IOException {
    final EmbeddedChannel ch = open();
    final RawHttpResponse r =
        exchange(ch, "GET /health HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n");
    assertThat(r.header("connection")).isEqualTo("close");
    assertThat(ch.isOpen()).isFalse();

    final EmbeddedChannel http10 = new EmbeddedChannel(new HttpServerInitializer(
        RelayConfig.DEFAULT.http(), new CorsPolicy(RelayConfig.DEFAULT.cors()), router,
        responses, metrics));
    try {
      assertThat(exchange(http10, "GET /health HTTP/1.0\r\n\r\n").header("connection"))
          .isEqualTo("close");
      assertThat(http10.isOpen()).isFalse();
    } finally {
      http10.finishAndReleaseAll();
    }
  }

  @Test
  void keepAlive_shouldStayOpen_whenHttp10AsksForIt() throws IOException {
    final EmbeddedChannel ch = open();
    final RawHttpResponse r =
        exchange(ch, "GET /health HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
    assertThat(r.header("connection")).isEqualToIgnoringCase("keep-alive");
    assertThat(ch.isOpen()).isTrue();
  }

  @Test
  void idleEvent_shouldCloseOnlyWhenNoRequestIsInProgress() throws IOException {
    final EmbeddedChannel ch = open();
    send(ch, "GET /slow HTTP/1.1\r\nHost: a\r\n\r\n");
    ch.pipeline().fireUserEventTriggered(IdleStateEvent.ALL_IDLE_STATE_EVENT);
    assertThat(ch.isOpen()).as("a slow route is not an idle client").isTrue();
    slow.complete(HttpResponses.text(HttpResponseStatus.OK, "slow"));
    ch.runPendingTasks();
    assertThat(RawHttpResponse.read(output(ch), false).bodyText()).isEqualTo("slow");
    ch.pipeline().fireUserEventTriggered(IdleStateEvent.ALL_IDLE_STATE_EVENT);
    assertThat(ch.isOpen()).isFalse();
  }

  @Test
  void metrics_shouldCountRequestsAndErrors_byRouteAndReason() throws IOException {
    final EmbeddedChannel ch = open();
    exchange(ch, "GET /health HTTP/1.1\r\nHost: a\r\n\r\n");
    exchange(ch, "GET /nope HTTP/1.1\r\nHost: a\r\n\r\n");
    exchange(ch, "POST /health HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n");
    final ByteArrayOutputStream out = new ByteArrayOutputStream();
    PrometheusTextFormatWriter.create().write(out, registry.scrape());
    final String text = out.toString(StandardCharsets.UTF_8);
    assertThat(text)
        .contains("relay_http_requests_total{method=\"GET\",route=\"/health\","
            + "status_class=\"2xx\"} 1.0")
        .contains("relay_http_requests_total{method=\"GET\",route=\"unmatched\","
            + "status_class=\"4xx\"} 1.0")
        .contains("relay_http_request_errors_total{reason=\"not_found\"} 1.0")
        .contains("relay_http_request_errors_total{reason=\"method_not_allowed\"} 1.0")
        .contains("relay_http_request_errors_total{reason=\"payload_too_large\"} 0.0")
        .contains("relay_http_connections_active 1.0");
  }

  @Test
  void pipelining_shouldPauseReading_assoonAsOneRequestWaitsBehindTheOneServed() {
    final EmbeddedChannel ch = open();
    send(ch, "GET /slow HTTP/1.1\r\nHost: a\r\n\r\n");
    assertThat(ch.config().isAutoRead()).isTrue();
    send(ch, "POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\nabc");
    assertThat(ch.config().isAutoRead()).as("one aggregated request waits: no more read")
        .isFalse();
    assertThat(HttpDispatcher.MAX_QUEUED).isEqualTo(1);
    slow.complete(HttpResponses.text(HttpResponseStatus.OK, "slow"));
    ch.runPendingTasks();
    assertThat(ch.config().isAutoRead()).isTrue();
  }

  @Test
  void tokenProtectedRoute_shouldAnswer401WithoutAggregatingTheBody_andStayUsable()
      throws IOException {
    final EmbeddedChannel ch = open();
    final String body = "x".repeat(40_000);
    send(ch, "POST /guarded HTTP/1.1\r\nHost: a\r\nContent-Length: " + body.length()
        + "\r\n\r\n" + body.substring(0, 10_000));
    // Answered on the head, before the rest of the body arrived; the route saw no body.
    RawHttpResponse refused = RawHttpResponse.read(output(ch), false);
    assertThat(refused.status()).isEqualTo(401);
    assertThat(refused.bodyText()).isEqualTo("unauthorized, body of 0");
    // The rest of the body is read and dropped; the connection serves the next request.
    send(ch, body.substring(10_000));
    assertThat(exchange(ch, "POST /guarded HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer s3cret"
        + "\r\nContent-Length: 5\r\n\r\nhello").bodyText()).isEqualTo("hello");
    // Chunked, without a token: the same.
    refused = exchange(ch, "POST /guarded HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked"
        + "\r\n\r\n5\r\nhello\r\n0\r\n\r\n");
    assertThat(refused.status()).isEqualTo(401);
    assertThat(ch.isOpen()).isTrue();
  }

  @Test
  void tokenProtectedRoute_shouldCloseTheConnection_whenARefusedBodyGoesOnTooLong() {
    final EmbeddedChannel ch = open();
    send(ch, "POST /guarded HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n");
    final String chunk = "x".repeat(64 * 1024);
    for (long sent = 0; sent <= BodyAuthorizationHandler.MAX_DISCARDED && ch.isOpen();
        sent += chunk.length()) {
      send(ch, Integer.toHexString(chunk.length()) + "\r\n" + chunk + "\r\n");
    }
    assertThat(ch.isOpen()).isFalse();
  }

  @Test
  void pipelining_shouldAnswerInOrder_whenManyRequestsArriveAtOnce() throws IOException {
    final EmbeddedChannel ch = open();
    final StringBuilder requests = new StringBuilder("GET /slow HTTP/1.1\r\nHost: a\r\n\r\n");
    for (int i = 0; i < 40; i++) {
      requests.append("GET /ipfs/").append(i).append(" HTTP/1.1\r\nHost: a\r\n\r\n");
    }
    send(ch, requests.toString());
    assertThat(ch.config().isAutoRead()).as("reading paused while the queue is full").isFalse();
    slow.complete(HttpResponses.text(HttpResponseStatus.OK, "slow"));
    ch.runPendingTasks();
    final InputStream in = output(ch);
    final List<String> bodies = new ArrayList<>();
    for (int i = 0; i < 41; i++) {
      bodies.add(RawHttpResponse.read(in, false).bodyText());
    }
    assertThat(bodies.get(0)).isEqualTo("slow");
    for (int i = 0; i < 40; i++) {
      assertThat(bodies.get(i + 1)).isEqualTo("/ipfs/" + i);
    }
    assertThat(ch.config().isAutoRead()).isTrue();
  }
}
