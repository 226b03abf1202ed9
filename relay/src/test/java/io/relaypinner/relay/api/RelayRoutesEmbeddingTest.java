package io.relaypinner.relay.api;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.relaypinner.ipfs.datastore.MemoryDatastore;
import io.relaypinner.relay.config.RelayConfig;
import io.relaypinner.relay.http.HttpMetrics;
import io.relaypinner.relay.http.HttpResponses;
import io.relaypinner.relay.http.RelayHttpHandlers;
import io.relaypinner.relay.http.RouteHandler;
import io.relaypinner.relay.http.Router;
import io.relaypinner.relay.sync.SyncEngine;
import io.relaypinner.relay.sync.SyncHistory;
import io.relaypinner.relay.sync.SyncResult;
import io.relaypinner.relay.testing.RawHttpResponse;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The relay's route set mounted in an application's own pipeline through
 * {@link RelayHttpHandlers}, next to the application's own handler and route.
 */
class RelayRoutesEmbeddingTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Clock CLOCK =
      Clock.fixed(Instant.parse("2026-11-22T10:00:00Z"), ZoneOffset.UTC);

  private final HttpResponses responses = new HttpResponses(HttpResponses.newObjectMapper());
  private final SyncEngine engine = new SyncEngine(RelayConfig.DEFAULT.sync(),
      context -> SyncResult.empty(context.address()), new SyncHistory(new MemoryDatastore(), 10),
      new PrometheusRegistry(), CLOCK);
  private EmbeddedChannel channel;

  @AfterEach
  void tearDown() {
    if (channel != null) {
      channel.finishAndReleaseAll();
    }
    engine.close();
  }

  /** An application handler in front of the relay's: counts inbound reads. */
  private static final class Counting extends ChannelInboundHandlerAdapter {
    private final AtomicInteger reads;

    Counting(final AtomicInteger reads) {
      this.reads = reads;
    }

    @Override
    public void channelRead(final ChannelHandlerContext ctx, final Object msg) {
      reads.incrementAndGet();
      ctx.fireChannelRead(msg);
    }
  }

  @Test
  void initializer_shouldServeRelayAndOwnRoutes_whenMountedInForeignPipeline() throws IOException {
    final Router router = RelayRoutes.builder(responses, CLOCK)
        .pinning(engine, Optional.empty())
        .addTo(Router.builder())
        .get("/app/status", RouteHandler.sync(r -> HttpResponses.text(HttpResponseStatus.OK,
            "app")))
        .build();
    final ChannelInitializer<Channel> relayHttp = RelayHttpHandlers.initializer(router,
        RelayConfig.DEFAULT.http(), RelayConfig.DEFAULT.cors(), responses,
        new HttpMetrics(new PrometheusRegistry()));
    final AtomicInteger reads = new AtomicInteger();
    channel = new EmbeddedChannel(new ChannelInitializer<Channel>() {
      @Override
      protected void initChannel(final Channel ch) {
        ch.pipeline().addLast(new Counting(reads)).addLast(relayHttp);
      }
    });

    final RawHttpResponse stats = exchange("GET /pinning/stats HTTP/1.1\r\nHost: a\r\n\r\n");
    final RawHttpResponse app = exchange("GET /app/status HTTP/1.1\r\nHost: a\r\n\r\n");

    assertThat(stats.status()).isEqualTo(200);
    final JsonNode body = JSON.readTree(stats.body());
    assertThat(body.get("syncQueue").get("active").asInt()).isZero();
    assertThat(body.get("timestamp").asText()).isEqualTo("2026-11-22T10:00:00.000Z");
    assertThat(stats.header("access-control-allow-origin")).isEqualTo("*");
    assertThat(app.bodyText()).isEqualTo("app");
    assertThat(reads.get()).isEqualTo(2);
  }

  private RawHttpResponse exchange(final String request) throws IOException {
    channel.writeInbound(Unpooled.copiedBuffer(request, StandardCharsets.ISO_8859_1));
    channel.runPendingTasks();
    final ByteArrayOutputStream out = new ByteArrayOutputStream();
    for (ByteBuf buf = channel.readOutbound(); buf != null; buf = channel.readOutbound()) {
      final byte[] bytes = new byte[buf.readableBytes()];
      buf.readBytes(bytes);
      buf.release();
      out.writeBytes(bytes);
    }
    return RawHttpResponse.read(new ByteArrayInputStream(out.toByteArray()), false);
  }
}
