package io.relaypinner.relay.http;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.handler.ssl.SslContext;
import io.netty.util.concurrent.ImmediateEventExecutor;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.relaypinner.relay.config.CorsConfig;
import io.relaypinner.relay.config.HttpConfig;
import io.relaypinner.libp2p.netty.EventLoops;
import java.io.UncheckedIOException;
import java.net.BindException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The plain HTTP listener of spec 1 (the "metrics server") on Netty: binds
 * {@code METRICS_HOST:METRICS_PORT} on the given event loops and serves the {@link Router}'s
 * routes through the pipeline of {@link HttpServerInitializer}; or, made by {@link #https}, the
 * same routes over TLS on {@code METRICS_HTTPS_PORT}. It does not own the loops. Applications
 * that embed the relay's routes in their own server use {@link RelayHttpHandlers} instead.
 */
public final class RelayHttpServer implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(RelayHttpServer.class);
  private static final int BACKLOG = 1024;
  private static final Duration CLOSE_TIMEOUT = Duration.ofSeconds(2);

  private final HttpConfig config;
  private final EventLoops loops;
  private final int port;
  private final String scheme;
  private final ChannelInitializer<Channel> initializer;
  private final ChannelInitializer<Channel> warmUpInitializer;
  private final HttpConnectionBudget budget;
  private final ChannelGroup channels =
      new DefaultChannelGroup("relay-http", ImmediateEventExecutor.INSTANCE);
  private volatile Channel serverChannel;

  public RelayHttpServer(final HttpConfig config, final CorsConfig cors, final Router router,
      final HttpResponses responses, final HttpMetrics metrics, final EventLoops loops) {
    this(config, cors, router, responses, metrics, loops, HttpConnectionBudget.UNLIMITED);
  }

  /** As above, each accepted connection admitted by {@code budget} (or closed at accept). */
  public RelayHttpServer(final HttpConfig config, final CorsConfig cors, final Router router,
      final HttpResponses responses, final HttpMetrics metrics, final EventLoops loops,
      final HttpConnectionBudget budget) {
    this(config, config.port(), null, cors, router, responses, metrics, loops, budget);
  }

  /**
   * The same routes over HTTPS on {@code METRICS_HOST:port} (spec 1, 2.2): each connection uses
   * the TLS context current when it is accepted, and is closed when there is none.
   */
  public static RelayHttpServer https(final HttpConfig config, final int port,
      final Supplier<Optional<SslContext>> tls, final CorsConfig cors, final Router router,
      final HttpResponses responses, final HttpMetrics metrics, final EventLoops loops) {
    return https(config, port, tls, cors, router, responses, metrics, loops,
        HttpConnectionBudget.UNLIMITED);
  }

  /**
   * The HTTPS listener, each accepted connection admitted by {@code budget} (shared with the
   * plain listener: the cap is for both together).
   */
  public static RelayHttpServer https(final HttpConfig config, final int port,
      final Supplier<Optional<SslContext>> tls, final CorsConfig cors, final Router router,
      final HttpResponses responses, final HttpMetrics metrics, final EventLoops loops,
      final HttpConnectionBudget budget) {
    return new RelayHttpServer(config, port, Objects.requireNonNull(tls, "tls"), cors, router,
        responses, metrics, loops, budget);
  }

  private RelayHttpServer(final HttpConfig config, final int port,
      final Supplier<Optional<SslContext>> tls, final CorsConfig cors, final Router router,
      final HttpResponses responses, final HttpMetrics metrics, final EventLoops loops,
      final HttpConnectionBudget budget) {
    this.budget = Objects.requireNonNull(budget, "budget");
    this.config = Objects.requireNonNull(config, "config");
    this.loops = Objects.requireNonNull(loops, "loops");
    this.port = port;
    this.scheme = tls == null ? "http" : "https";
    final ChannelInitializer<Channel> http = RelayHttpHandlers.initializer(
        router, config, cors, responses, metrics);
    this.initializer = tls == null ? http : RelayHttpHandlers.tlsInitializer(tls, http);
    // Same pipeline, but its requests are not counted in the node's metrics.
    this.warmUpInitializer = RelayHttpHandlers.initializer(router, config, cors, responses,
        new HttpMetrics(new PrometheusRegistry()));
  }

  /**
   * Sends {@code GET} and {@code HEAD} for {@code path} through an in-memory copy of the
   * pipeline, so that the classes and serializers of the first real request are loaded already.
   * Run it on a spare thread while the node starts: a cold JVM otherwise spends most of the time
   * of its first answer loading classes. Never touches the network; failures are only logged.
   */
  public void warmUp(final String path) {
    final EmbeddedChannel channel = new EmbeddedChannel(warmUpInitializer);
    try {
      channel.writeInbound(Unpooled.copiedBuffer("GET " + path + " HTTP/1.1\r\nHost: warm-up\r\n"
          + "Origin: http://warm-up\r\n\r\nHEAD " + path + " HTTP/1.1\r\nHost: warm-up\r\n\r\n",
          StandardCharsets.US_ASCII));
      channel.runPendingTasks();
    } catch (final RuntimeException e) {
      LOG.debug("HTTP warm-up of {} failed (harmless): {}", path, e.toString());
    } finally {
      channel.finishAndReleaseAll();
    }
  }

  /**
   * Binds and returns once the port accepts connections. Must not be called on an event loop.
   *
   * @return the bound address (with the real port when 0 was configured)
   * @throws UncheckedIOException when the address cannot be bound (in use, no permission)
   * @throws IllegalStateException when already started
   */
  public synchronized InetSocketAddress start() {
    if (serverChannel != null) {
      throw new IllegalStateException("HTTP listener already started");
    }
    final ServerBootstrap bootstrap = new ServerBootstrap()
        .group(loops.group())
        .channel(loops.serverChannelType())
        .option(ChannelOption.SO_BACKLOG, BACKLOG)
        .option(ChannelOption.SO_REUSEADDR, true)
        .childOption(ChannelOption.TCP_NODELAY, true)
        .childOption(ChannelOption.SO_KEEPALIVE, true)
        // A client that half-closes after its request still gets the answer (HttpDispatcher).
        .childOption(ChannelOption.ALLOW_HALF_CLOSURE, true)
        .childHandler(new ChannelInitializer<Channel>() {
          @Override
          protected void initChannel(final Channel channel) {
            // Before anything is read (or a TLS handshake is started): beyond the caps the
            // connection costs an accept and a close.
            if (!budget.admit(channel)) {
              return;
            }
            channels.add(channel);
            channel.pipeline().addLast(initializer);
          }
        });
    final ChannelFuture bind = bootstrap.bind(config.host(), port);
    try {
      bind.sync();
    } catch (final InterruptedException e) {
      Thread.currentThread().interrupt();
      bind.channel().close();
      throw new IllegalStateException("interrupted while binding the HTTP listener", e);
    } catch (final Exception e) {
      // Netty rethrows the bind failure (a checked IOException) undeclared.
      final BindException bindException = new BindException(
          "cannot bind the " + scheme.toUpperCase(Locale.ROOT) + " listener to " + config.host()
              + ":" + port + ": "
              + e.getMessage());
      bindException.initCause(e);
      throw new UncheckedIOException(bindException);
    }
    serverChannel = bind.channel();
    final InetSocketAddress address = (InetSocketAddress) serverChannel.localAddress();
    LOG.info("{} listener started on {}://{}:{} ({})", scheme.toUpperCase(Locale.ROOT), scheme,
        hostForUrl(config.host()), address.getPort(), loops.transport());
    return address;
  }

  /** The bound port, or -1 before {@link #start()} and after {@link #close()}. */
  public int port() {
    final Channel channel = serverChannel;
    return channel == null ? -1 : ((InetSocketAddress) channel.localAddress()).getPort();
  }

  /** Stops accepting, closes open connections and waits a bounded time for both. */
  @Override
  public synchronized void close() {
    final Channel channel = serverChannel;
    if (channel == null) {
      return;
    }
    final int boundPort = port();
    serverChannel = null;
    // A shutdown deadline: real time on purpose, whatever time the node's handlers run on.
    final long deadline = System.nanoTime() + CLOSE_TIMEOUT.toNanos();
    channel.close().awaitUninterruptibly(CLOSE_TIMEOUT.toMillis());
    channels.close().awaitUninterruptibly(
        Math.max(0, (deadline - System.nanoTime()) / 1_000_000));
    LOG.info("{} listener stopped on port {}", scheme.toUpperCase(Locale.ROOT), boundPort);
  }

  private static String hostForUrl(final String host) {
    return host.indexOf(':') >= 0 ? "[" + host + "]" : host;
  }
}
