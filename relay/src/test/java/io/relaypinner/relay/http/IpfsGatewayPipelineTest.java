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
import io.netty.util.concurrent.Ticker;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.relaypinner.common.budget.LimitListener;
import io.relaypinner.common.budget.Resource;
import io.relaypinner.common.budget.Scope;
import io.relaypinner.ipfs.blockstore.Blocks;
import io.relaypinner.ipfs.blockstore.Blockstore;
import io.relaypinner.ipfs.blockstore.MemoryBlockstore;
import io.relaypinner.ipfs.datastore.Datastore;
import io.relaypinner.ipfs.datastore.MemoryDatastore;
import io.relaypinner.ipfs.pin.CodecLinkResolver;
import io.relaypinner.ipfs.pin.DagWalker;
import io.relaypinner.ipfs.pin.PinStore;
import io.relaypinner.ipfs.unixfs.UnixFsImporter;
import io.relaypinner.ipfs.unixfs.UnixFsReader;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.multiformats.Multihash;
import io.relaypinner.relay.config.GatewayConfig;
import io.relaypinner.relay.config.GatewayMode;
import io.relaypinner.relay.config.RelayConfig;
import io.relaypinner.relay.gateway.CachingNetworkContent;
import io.relaypinner.relay.gateway.CarPlanner;
import io.relaypinner.relay.gateway.GatewayFallback;
import io.relaypinner.relay.gateway.GatewayMetrics;
import io.relaypinner.relay.gateway.IpfsGatewayRoute;
import io.relaypinner.relay.gateway.NetworkContent;
import io.relaypinner.relay.storage.GatewayCache;
import io.relaypinner.relay.storage.GcPolicy;
import io.relaypinner.relay.storage.StorageGc;
import io.relaypinner.relay.storage.StorageQuota;
import io.relaypinner.relay.testing.RawHttpResponse;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
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

  /**
   * Issue 36: a response streaming a cached (unpinned) DAG. Other requests' admissions evict its
   * blocks and GC runs while the body is half sent: GC deleted the evicted blocks and the body
   * was cut short. The response holds its DAG ({@code GatewayFallback.holdDag}) until the body
   * ends, so GC keeps it; the hold is given back once sent.
   */
  @Test
  void cachedDag_shouldStreamWholly_whenEvictedAndCollectedMidBody() throws Exception {
    streamWhileEvicting("");
  }

  /** As above, for a CAR of the cached DAG. */
  @Test
  void cachedDagsCar_shouldStreamWholly_whenEvictedAndCollectedMidBody() throws Exception {
    streamWhileEvicting("?format=car");
  }

  private void streamWhileEvicting(final String query) throws Exception {
    final ArrayDeque<Runnable> tasks = new ArrayDeque<>();
    final Executor storage = tasks::add;
    final MemoryBlockstore store = new MemoryBlockstore();
    final UnixFsImporter importer = new UnixFsImporter(store,
        new UnixFsImporter.Options(64 * 1024, 174));
    final java.util.Random random = new java.util.Random(36);
    final byte[] content = new byte[1 << 20];
    random.nextBytes(content);
    final Cid cached = importer.importBytes(content);
    final byte[] other = new byte[3 << 19];
    random.nextBytes(other);
    final Cid evicting = importer.importBytes(other);
    final PinStore pins = new PinStore(new MemoryDatastore(), store,
        CodecLinkResolver.standard());
    final GatewayCache cache = new GatewayCache(3 << 19);
    final StorageGc gc = new StorageGc(pins, cache, new StorageQuota(0, () -> 0L, () -> { }),
        java.time.Clock.systemUTC(), java.time.Duration.ofHours(1), GcPolicy.ALWAYS);
    // Peers hold everything already: each fetch finds its DAG here, and the cache admits it.
    final NetworkContent peers = new NetworkContent() {
      @Override
      public boolean hasPeers() {
        return true;
      }

      @Override
      public CompletableFuture<?> block(final Cid cid, final java.time.Duration timeout) {
        return CompletableFuture.completedFuture(null);
      }

      @Override
      public CompletableFuture<?> dag(final Cid root, final java.time.Duration timeout) {
        return CompletableFuture.completedFuture(null);
      }
    };
    final CachingNetworkContent network = new CachingNetworkContent(peers, store,
        CodecLinkResolver.standard(), gc, storage, 100_000);
    final GatewayFallback fallback = new GatewayFallback(new GatewayConfig(
        GatewayMode.PINNED_FIRST, java.time.Duration.ofSeconds(10)), Optional.of(network),
        new UnixFsReader(store), storage, Ticker.systemTicker());
    final IpfsGatewayRoute route = new IpfsGatewayRoute(pins, new UnixFsReader(store), storage,
        responses, new GatewayMetrics(registry), cid -> Optional.empty(), fallback, store,
        CarPlanner.Limits.DEFAULT);
    final Set<Multihash> dag = new DagWalker(store, CodecLinkResolver.standard(), 1_000)
        .walk(List.of(cached)).reached();
    channel = new EmbeddedChannel(new HttpServerInitializer(RelayConfig.DEFAULT.http(),
        new CorsPolicy(RelayConfig.DEFAULT.cors()), Router.builder()
            .getPrefix(IpfsGatewayRoute.PREFIX, route).build(), responses,
        new HttpMetrics(registry)));
    channel.writeInbound(Unpooled.copiedBuffer("GET /ipfs/" + cached + query
        + " HTTP/1.1\r\nHost: a\r\n\r\n", StandardCharsets.ISO_8859_1));
    final ByteArrayOutputStream out = new ByteArrayOutputStream();

    // A quarter of the body sent: another request's DAG evicts this one, and GC runs.
    pump(tasks, out, content.length / 4);
    assertThat(out.size()).isLessThan(content.length / 2);
    assertThat(dag).allMatch(cache::holds);
    assertThat(cache.heldDags()).containsExactly(cached);
    // Admitted as the fallback admits a fetched DAG (here directly: running the storage queue
    // would let the body run on, its writer resuming inline on the embedded loop).
    final Map<Multihash, Integer> sizes = new HashMap<>();
    for (final Multihash block : new DagWalker(store, CodecLinkResolver.standard(), 1_000)
        .walk(List.of(evicting)).reached()) {
      sizes.put(block, store.get(Blocks.rawCid(block)).orElseThrow().length);
    }
    assertThat(cache.admit(sizes)).isTrue();
    assertThat(dag).noneMatch(cache::holds);
    assertThat(gc.runOnce()).isEqualTo(StorageGc.Outcome.DONE);
    assertThat(dag).allMatch(mh -> store.has(Blocks.rawCid(mh)));

    pump(tasks, out, Long.MAX_VALUE);
    final String text = out.toString(StandardCharsets.ISO_8859_1);
    final int bodyStart = text.indexOf("\r\n\r\n") + 4;
    assertThat(text).startsWith("HTTP/1.1 200 ");
    final long length = Long.parseLong(text.substring(0, bodyStart).lines()
        .filter(line -> line.toLowerCase(java.util.Locale.ROOT).startsWith("content-length:"))
        .findFirst().orElseThrow().substring("content-length:".length()).trim());
    assertThat(out.size() - bodyStart).isEqualTo(length);
    if (query.isEmpty()) {
      assertThat(java.util.Arrays.copyOfRange(out.toByteArray(), bodyStart, out.size()))
          .isEqualTo(content);
    }
    // Sent: the hold is given back, and the evicted blocks are ordinary unpinned ones again.
    assertThat(cache.heldDags()).isEmpty();
  }

  /**
   * Runs queued storage tasks and the channel's, one at a time, until {@code out} holds
   * {@code until} bytes or nothing is left to run.
   */
  private void pump(final ArrayDeque<Runnable> tasks, final ByteArrayOutputStream out,
      final long until) {
    while (out.size() < until) {
      channel.runPendingTasks();
      for (ByteBuf buf = channel.readOutbound(); buf != null; buf = channel.readOutbound()) {
        final byte[] bytes = new byte[buf.readableBytes()];
        buf.readBytes(bytes);
        buf.release();
        out.writeBytes(bytes);
      }
      final Runnable task = tasks.poll();
      if (task == null) {
        channel.runPendingTasks();
        if (tasks.isEmpty() && channel.outboundMessages().isEmpty()) {
          return;
        }
        continue;
      }
      task.run();
    }
  }
}
