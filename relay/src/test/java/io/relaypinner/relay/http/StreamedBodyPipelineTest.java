package io.relaypinner.relay.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.relaypinner.relay.config.RelayConfig;
import io.relaypinner.relay.testing.RawHttpResponse;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A streamed route ({@link Router.Builder#streamed}) through the real connection pipeline on an
 * {@link EmbeddedChannel}: its body bypasses the 64 KiB aggregation limit and reaches the route
 * as it arrives; over the route's limit it is refused (declared: before the body, and the
 * connection closes; counted: when it passes, and the connection stays usable); a route that
 * answers without reading leaves the rest to be discarded.
 */
class StreamedBodyPipelineTest {
  private static final int LIMIT = 200_000;
  private static final Duration DEADLINE = Duration.ofSeconds(30);
  private static final ObjectMapper JSON = new ObjectMapper();

  private final HttpResponses responses = new HttpResponses(HttpResponses.newObjectMapper());
  private final ExecutorService readers = Executors.newCachedThreadPool();
  private final Router router = Router.builder()
      .get("/health", RouteHandler.sync(r ->
          responses.json(HttpResponseStatus.OK, Map.of("status", "ok"))))
      .streamed(HttpMethod.POST, "/upload", this::upload, LIMIT, "upload_too_large")
      .streamed(HttpMethod.POST, "/timed", this::upload, LIMIT, "upload_too_large", DEADLINE)
      .build();
  private EmbeddedChannel channel;

  private CompletableFuture<FullHttpResponse> upload(final RouteRequest request) {
    if (request.queryParameter("early").isPresent()) {
      return CompletableFuture.completedFuture(
          HttpResponses.text(HttpResponseStatus.OK, "early"));
    }
    final RequestBody body = request.body().orElseThrow();
    return CompletableFuture.supplyAsync(() -> {
      try {
        return HttpResponses.text(HttpResponseStatus.OK,
            Integer.toString(body.readAllBytes().length));
      } catch (final RequestBody.TooLargeException e) {
        return responses.error(HttpResponseStatus.REQUEST_ENTITY_TOO_LARGE, "upload_too_large",
            e.getMessage());
      } catch (final RequestBody.DeadlineException e) {
        return responses.error(HttpResponseStatus.REQUEST_TIMEOUT, "upload_timeout",
            e.getMessage());
      } catch (final IOException e) {
        return responses.error(HttpResponseStatus.BAD_REQUEST, "bad_upload", e.getMessage());
      }
    }, readers);
  }

  @AfterEach
  void tearDown() {
    if (channel != null) {
      channel.finishAndReleaseAll();
    }
    readers.shutdownNow();
  }

  private EmbeddedChannel open() {
    final PrometheusRegistry registry = new PrometheusRegistry();
    channel = new EmbeddedChannel(new HttpServerInitializer(RelayConfig.DEFAULT.http(),
        new CorsPolicy(RelayConfig.DEFAULT.cors()), router, responses,
        new HttpMetrics(registry)));
    return channel;
  }

  private static void send(final EmbeddedChannel ch, final String text) {
    ch.writeInbound(Unpooled.copiedBuffer(text, StandardCharsets.ISO_8859_1));
    ch.runPendingTasks();
  }

  /** The next response, once the route (on another thread) has answered. */
  private static RawHttpResponse response(final EmbeddedChannel ch) throws IOException {
    final ByteArrayOutputStream out = new ByteArrayOutputStream();
    await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(10)).until(() -> {
      ch.runPendingTasks();
      for (ByteBuf buf = ch.readOutbound(); buf != null; buf = ch.readOutbound()) {
        final byte[] bytes = new byte[buf.readableBytes()];
        buf.readBytes(bytes);
        buf.release();
        out.writeBytes(bytes);
      }
      return out.size() > 0;
    });
    return RawHttpResponse.read(new ByteArrayInputStream(out.toByteArray()), false);
  }

  private static String chunked(final int total) {
    final StringBuilder out = new StringBuilder();
    for (int sent = 0; sent < total; sent += 10_000) {
      final int n = Math.min(10_000, total - sent);
      out.append(Integer.toHexString(n)).append("\r\n").append("b".repeat(n)).append("\r\n");
    }
    return out.append("0\r\n\r\n").toString();
  }

  @Test
  void body_shouldReachTheRoute_whenLargerThanTheAggregationLimit() throws IOException {
    final EmbeddedChannel ch = open();
    send(ch, "POST /upload HTTP/1.1\r\nHost: a\r\nContent-Length: 150000\r\n\r\n"
        + "a".repeat(150_000));
    final RawHttpResponse r = response(ch);
    assertThat(r.status()).isEqualTo(200);
    assertThat(r.bodyText()).isEqualTo("150000");
    send(ch, "POST /upload HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n"
        + chunked(LIMIT));
    assertThat(response(ch).bodyText()).isEqualTo(Integer.toString(LIMIT));
    assertThat(ch.isOpen()).isTrue();
  }

  @Test
  void body_shouldBeRefusedWithTheRoutesCode_whenItPassesTheLimitWhileArriving()
      throws IOException {
    final EmbeddedChannel ch = open();
    send(ch, "POST /upload HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n"
        + chunked(LIMIT + 50_000));
    final RawHttpResponse r = response(ch);
    assertThat(r.status()).isEqualTo(413);
    assertThat(JSON.readTree(r.body()).get("code").asText()).isEqualTo("upload_too_large");
    // The rest was read and dropped: the connection serves the next request.
    send(ch, "GET /health HTTP/1.1\r\nHost: a\r\n\r\n");
    assertThat(response(ch).status()).isEqualTo(200);
  }

  @Test
  void body_shouldBeRefusedBeforeItIsRead_whenItsDeclaredLengthIsOverTheLimit()
      throws IOException {
    final EmbeddedChannel ch = open();
    send(ch, "POST /upload HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: "
        + (LIMIT + 1) + "\r\n\r\n");
    final RawHttpResponse r = response(ch);
    assertThat(r.status()).as("413, not 100 Continue").isEqualTo(413);
    assertThat(JSON.readTree(r.body()).get("code").asText()).isEqualTo("upload_too_large");
    assertThat(r.header("connection")).isEqualTo("close");
  }

  @Test
  void body_shouldBeCut_whenItHasNotArrivedByTheRoutesDeadline_thoughBytesKeepComing()
      throws IOException {
    final EmbeddedChannel ch = open();
    send(ch, "POST /timed HTTP/1.1\r\nHost: a\r\nContent-Length: 1000\r\n\r\n");
    // A byte well within the stall every time, never the whole body.
    for (int i = 0; i < 5; i++) {
      ch.advanceTimeBy(DEADLINE.toSeconds() / 6, java.util.concurrent.TimeUnit.SECONDS);
      ch.runScheduledPendingTasks();
      send(ch, "x");
    }
    ch.advanceTimeBy(DEADLINE.toSeconds() / 6 + 1, java.util.concurrent.TimeUnit.SECONDS);
    ch.runScheduledPendingTasks();
    final RawHttpResponse r = response(ch);
    assertThat(r.status()).isEqualTo(408);
    assertThat(JSON.readTree(r.body()).get("code").asText()).isEqualTo("upload_timeout");
  }

  @Test
  void body_shouldNotBeCut_whenItArrivedBeforeTheDeadline_andTheTimerIsCancelled()
      throws IOException {
    final EmbeddedChannel ch = open();
    send(ch, "POST /timed HTTP/1.1\r\nHost: a\r\nContent-Length: 1000\r\n\r\n"
        + "y".repeat(1000));
    assertThat(response(ch).bodyText()).isEqualTo("1000");
    ch.advanceTimeBy(DEADLINE.toSeconds() + 1, java.util.concurrent.TimeUnit.SECONDS);
    ch.runScheduledPendingTasks();
    send(ch, "GET /health HTTP/1.1\r\nHost: a\r\n\r\n");
    assertThat(response(ch).status()).isEqualTo(200);
  }

  @Test
  void rest_shouldBeDiscarded_whenTheRouteAnswersWithoutReading() throws IOException {
    final EmbeddedChannel ch = open();
    send(ch, "POST /upload?early=1 HTTP/1.1\r\nHost: a\r\nContent-Length: 100000\r\n\r\n"
        + "c".repeat(40_000));
    assertThat(response(ch).bodyText()).isEqualTo("early");
    send(ch, "c".repeat(60_000) + "GET /health HTTP/1.1\r\nHost: a\r\n\r\n");
    assertThat(response(ch).status()).isEqualTo(200);
  }

  @Test
  void connection_shouldReadAgain_whenAResumeReachesTheEventLoopBeforeTheLatePause()
      throws IOException {
    // The body tells the connection "pause" and "resume" outside its lock from two threads, so
    // they can arrive in either order. Each must apply the body's state when it runs.
    final EmbeddedChannel ch =
        new EmbeddedChannel(new io.netty.channel.ChannelInboundHandlerAdapter());
    final StreamedBodyHandler.ChannelFlow flow =
        new StreamedBodyHandler.ChannelFlow(ch.pipeline().firstContext());
    final RequestBody body = new RequestBody(10L << 20, Duration.ofSeconds(1), flow);
    flow.body = body;
    body.offer(Unpooled.wrappedBuffer(new byte[RequestBody.HIGH_WATER]));
    assertThat(body.paused()).isTrue();
    body.readNBytes(RequestBody.HIGH_WATER - RequestBody.LOW_WATER);
    assertThat(body.paused()).isFalse();
    // The reader's resume ran first; the event loop's pause arrives after it.
    flow.resume();
    ch.runPendingTasks();
    flow.pause();
    ch.runPendingTasks();
    assertThat(ch.config().isAutoRead()).as("reading, the buffer is drained").isTrue();
    // While the body is full, whichever runs last leaves the connection paused.
    body.offer(Unpooled.wrappedBuffer(new byte[RequestBody.HIGH_WATER]));
    flow.resume();
    ch.runPendingTasks();
    assertThat(ch.config().isAutoRead()).isFalse();
    body.close();
    ch.finishAndReleaseAll();
  }
}
