package io.relaypinner.relay.http;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.relaypinner.common.budget.LimitListener;
import io.relaypinner.common.budget.Resource;
import io.relaypinner.common.budget.Scope;
import io.relaypinner.ipfs.blockstore.Blockstore;
import io.relaypinner.ipfs.blockstore.MemoryBlockstore;
import io.relaypinner.ipfs.datastore.Datastore;
import io.relaypinner.ipfs.datastore.MemoryDatastore;
import io.relaypinner.ipfs.pin.CodecLinkResolver;
import io.relaypinner.ipfs.pin.PinStore;
import io.relaypinner.ipfs.unixfs.UnixFsImporter;
import io.relaypinner.ipfs.unixfs.UnixFsReader;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.relay.config.RelayConfig;
import io.relaypinner.relay.gateway.CarPlanner;
import io.relaypinner.relay.gateway.GatewayFallback;
import io.relaypinner.relay.gateway.GatewayMetrics;
import io.relaypinner.relay.gateway.IpfsGatewayRoute;
import io.relaypinner.relay.testing.RawHttpResponse;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * The {@code /ipfs/} answers of spec 4.6 that a running node cannot be pushed into cleanly: a
 * full storage executor (503), a failing pin check (500) and an {@link OutOfMemoryError} while a
 * CAR is planned (500), on an {@link EmbeddedChannel}.
 */
class IpfsGatewayPipelineTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Executor INLINE = Runnable::run;
  private static final Executor FULL = task -> {
    throw new RejectedExecutionException("queue full");
  };

  private final PrometheusRegistry registry = new PrometheusRegistry();
  private final HttpResponses responses = new HttpResponses(HttpResponses.newObjectMapper());
  private final MemoryBlockstore blocks = new MemoryBlockstore();
  private final Cid file = new UnixFsImporter(blocks, UnixFsImporter.Options.HELIA)
      .importBytes("hello".getBytes(StandardCharsets.UTF_8));
  private EmbeddedChannel channel;

  @AfterEach
  void tearDown() {
    if (channel != null) {
      channel.finishAndReleaseAll();
    }
  }

  private RawHttpResponse get(final Datastore datastore, final Executor storage)
      throws IOException {
    final PinStore pins = new PinStore(datastore, blocks, CodecLinkResolver.standard());
    return get(new IpfsGatewayRoute(pins, new UnixFsReader(blocks), storage, responses,
        new GatewayMetrics(registry)), "/ipfs/" + file);
  }

  private RawHttpResponse get(final RouteHandler route, final String target) throws IOException {
    final Router router = Router.builder().getPrefix(IpfsGatewayRoute.PREFIX, route).build();
    channel = new EmbeddedChannel(new HttpServerInitializer(RelayConfig.DEFAULT.http(),
        new CorsPolicy(RelayConfig.DEFAULT.cors()), router, responses,
        new HttpMetrics(registry)));
    channel.writeInbound(Unpooled.copiedBuffer(
        "GET " + target + " HTTP/1.1\r\nHost: a\r\n\r\n", StandardCharsets.ISO_8859_1));
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

  private static void assertError(final RawHttpResponse response, final int status,
      final String code) throws IOException {
    assertThat(response.status()).isEqualTo(status);
    final JsonNode body = JSON.readTree(response.body());
    assertThat(body.get("ok").asBoolean(true)).isFalse();
    assertThat(body.get("code").asText()).isEqualTo(code);
    assertThat(body.get("error").isTextual()).isTrue();
    assertThat(response.header("access-control-allow-origin")).isEqualTo("*");
  }

  @Test
  void get_shouldAnswer503_whenTheStorageExecutorIsFull() throws IOException {
    assertError(get(new MemoryDatastore(), FULL), 503, ErrorCodes.IPFS_UNAVAILABLE);
  }

  @Test
  void get_shouldAnswer500_whenThePinCheckFails() throws IOException {
    final Datastore failing = new Datastore() {
      @Override
      public Optional<byte[]> get(final String key) {
        throw new IllegalStateException("datastore closed");
      }

      @Override
      public void put(final String key, final byte[] value) {
        throw new IllegalStateException("datastore closed");
      }

      @Override
      public boolean delete(final String key) {
        throw new IllegalStateException("datastore closed");
      }

      @Override
      public List<Entry> scan(final String prefix) {
        throw new IllegalStateException("datastore closed");
      }

      @Override
      public void close() {
        // Nothing is open.
      }
    };

    assertError(get(failing, INLINE), 500, ErrorCodes.INTERNAL_ERROR);
  }

  @Test
  void get_shouldAnswer404_whenNotPinned() throws IOException {
    assertError(get(new MemoryDatastore(), INLINE), 404, ErrorCodes.CONTENT_NOT_FOUND);
  }

  @Test
  void car_shouldAnswer500AndLogAtError_whenPlanningRunsOutOfMemory_notA404()
      throws IOException {
    // The CAR planner reads every block; a heap exhausted there was answered 404 "content
    // cannot be served: Java heap space" and not logged.
    final Blockstore exhausted = (Blockstore) Proxy.newProxyInstance(
        Blockstore.class.getClassLoader(), new Class<?>[] {Blockstore.class},
        (proxy, method, args) -> {
          if (method.getName().equals("get")) {
            throw new OutOfMemoryError("Java heap space");
          }
          try {
            return method.invoke(blocks, args);
          } catch (final InvocationTargetException e) {
            throw e.getCause();
          }
        });
    final PinStore pins = new PinStore(new MemoryDatastore(), blocks,
        CodecLinkResolver.standard());
    final IpfsGatewayRoute route = new IpfsGatewayRoute(pins, new UnixFsReader(blocks), INLINE,
        responses, new GatewayMetrics(registry), cid -> Optional.empty(), GatewayFallback.off(),
        exhausted, CarPlanner.Limits.DEFAULT);
    final ListAppender<ILoggingEvent> logs = new ListAppender<>();
    final Logger logger = (Logger) LoggerFactory.getLogger(HttpDispatcher.class);
    logs.start();
    logger.addAppender(logs);
    try {
      assertError(get(route, "/ipfs/" + file + "?format=car"), 500, ErrorCodes.INTERNAL_ERROR);
    } finally {
      logger.detachAppender(logs);
    }

    assertThat(logs.list).anySatisfy(event -> {
      assertThat(event.getLevel()).isEqualTo(Level.ERROR);
      assertThat(event.getThrowableProxy().getClassName())
          .isEqualTo(OutOfMemoryError.class.getName());
    });
  }

  /**
   * A CAR's plan is held from the gateway memory until the CAR is sent, and given back whether
   * it was sent ({@code GET}) or never opened ({@code HEAD}): many slow readers of large DAGs
   * cannot hold plans beyond the budget, and nothing leaks from it.
   */
  @Test
  void car_shouldGiveItsPlansMemoryBack_onceSent_andWhenNeverOpened() throws IOException {
    final Scope memory = Scope.root("gateway",
        io.relaypinner.common.budget.Limits.NONE.with(Resource.MEMORY, 1 << 20),
        LimitListener.NONE);
    final PinStore pins = new PinStore(new MemoryDatastore(), blocks,
        CodecLinkResolver.standard());
    final IpfsGatewayRoute route = new IpfsGatewayRoute(pins, new UnixFsReader(blocks), INLINE,
        responses, new GatewayMetrics(registry), cid -> Optional.empty(), GatewayFallback.off(),
        blocks, CarPlanner.Limits.DEFAULT, memory);

    final RawHttpResponse car = get(route, "/ipfs/" + file + "?format=car");
    assertThat(car.status()).isEqualTo(200);
    assertThat(memory.used(Resource.MEMORY)).isZero();
    channel.finishAndReleaseAll();

    final Router router = Router.builder().getPrefix(IpfsGatewayRoute.PREFIX, route).build();
    channel = new EmbeddedChannel(new HttpServerInitializer(RelayConfig.DEFAULT.http(),
        new CorsPolicy(RelayConfig.DEFAULT.cors()), router, responses,
        new HttpMetrics(new PrometheusRegistry())));
    channel.writeInbound(Unpooled.copiedBuffer("HEAD /ipfs/" + file
        + "?format=car HTTP/1.1\r\nHost: a\r\n\r\n", StandardCharsets.ISO_8859_1));
    channel.runPendingTasks();
    assertThat(memory.used(Resource.MEMORY)).isZero();
  }

  @Test
  void releasingBody_shouldReleaseOnce_whenTheOpenedInputCloses_orWhenDiscarded()
      throws Exception {
    final java.util.concurrent.atomic.AtomicInteger released =
        new java.util.concurrent.atomic.AtomicInteger();
    final StreamedResponse.Body opened = StreamedResponse.Body.releasing(
        (resume, fileRegions) -> new io.netty.handler.stream.ChunkedStream(
            new ByteArrayInputStream(new byte[3])), released::incrementAndGet);
    final io.netty.handler.stream.ChunkedInput<?> input = opened.open(() -> { }, false);
    assertThat(released).hasValue(0);
    input.close();
    input.close();
    assertThat(released).hasValue(1);

    final StreamedResponse.Body discarded = StreamedResponse.Body.releasing(
        (resume, fileRegions) -> {
          throw new AssertionError("never opened");
        }, released::incrementAndGet);
    discarded.discard();
    discarded.discard();
    assertThat(released).hasValue(2);
  }
}
