package io.relaypinner.handoff.guest;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.TooLongFrameException;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpDecoderConfig;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpMessage;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.QueryStringDecoder;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.handler.timeout.IdleStateHandler;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.netty.util.concurrent.GlobalEventExecutor;
import io.relaypinner.common.Failures;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The guest setup endpoint of the push handoff (spec 3.1, 4.8; notes/handoff.md 2.2): plain HTTP,
 * unauthenticated by design, open only until the guest is configured.
 *
 * <pre>
 *   GET  / | /health   200 {status, ready, env_file, metadata_ready, peer_id, ...}
 *   GET  /metadata     200 {status: "ready", metadata: {...}} (does not close the server)
 *   POST /configure    200 {status: "configured", ...}, then the listener closes
 *                      400 bad input (nothing written), 409 already configured, 413 too large,
 *                      500 the relay did not start (nothing stays written)
 *   OPTIONS *          204 (CORS preflight)
 *   other paths        404 {status: "not-found"}; other methods 405
 * </pre>
 *
 * Every response carries the CORS headers the public images send ({@code *}, methods
 * {@code GET, POST, OPTIONS}, header {@code content-type}); errors are
 * {@code {ok: false, status, code, error}}. Request lines and headers are bounded, bodies are
 * limited to {@link ConfigureRequest#MAX_BODY_SIZE} (else 413 and close), and idle connections are
 * closed. The listener also closes when a pull configures the guest.
 */
public final class SetupServer implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(SetupServer.class);
  /** Default guest port of the setup endpoint. */
  public static final int DEFAULT_PORT = 80;
  private static final int MAX_INITIAL_LINE = 4096;
  private static final int MAX_HEADER_SIZE = 8192;
  private static final Duration DEFAULT_IDLE_TIMEOUT = Duration.ofSeconds(30);
  /** How long an oversized request's connection stays open for the client to read the 413. */
  private static final Duration OVERSIZE_LINGER = Duration.ofSeconds(2);

  private final GuestAgent agent;
  private final String host;
  private final int requestedPort;
  private final Duration idleTimeout;
  private final ObjectMapper json = new ObjectMapper();
  private final CompletableFuture<Void> closed = new CompletableFuture<>();
  private final AtomicLong rejected = new AtomicLong();
  private EventLoopGroup group;
  private ChannelGroup channels;
  private Channel serverChannel;
  private volatile int port = -1;

  public SetupServer(final GuestAgent agent, final String host, final int port) {
    this(agent, host, port, DEFAULT_IDLE_TIMEOUT);
  }

  public SetupServer(final GuestAgent agent, final String host, final int port,
      final Duration idleTimeout) {
    this.agent = Objects.requireNonNull(agent, "agent");
    this.host = Objects.requireNonNull(host, "host");
    this.requestedPort = port;
    this.idleTimeout = idleTimeout;
  }

  /**
   * Binds the listener; returns once bound. It closes itself once the guest is configured.
   *
   * @throws UncheckedIOException when the port cannot be bound
   */
  public synchronized void start() {
    group = new MultiThreadIoEventLoopGroup(1, new DefaultThreadFactory("guest-setup", true),
        NioIoHandler.newFactory());
    channels = new DefaultChannelGroup("guest-setup", GlobalEventExecutor.INSTANCE);
    final ServerBootstrap bootstrap = new ServerBootstrap()
        .group(group)
        .channel(NioServerSocketChannel.class)
        .option(ChannelOption.SO_REUSEADDR, true)
        .childHandler(new ChannelInitializer<SocketChannel>() {
          @Override
          protected void initChannel(final SocketChannel ch) {
            channels.add(ch);
            final ChannelPipeline p = ch.pipeline();
            p.addLast("idle", new IdleStateHandler(0, 0, idleTimeout.toMillis(),
                TimeUnit.MILLISECONDS));
            p.addLast("codec", new HttpServerCodec(new HttpDecoderConfig()
                .setMaxInitialLineLength(MAX_INITIAL_LINE).setMaxHeaderSize(MAX_HEADER_SIZE)));
            p.addLast("aggregator", new LimitedAggregator(ConfigureRequest.MAX_BODY_SIZE));
            p.addLast("handler", new Handler());
          }
        });
    try {
      serverChannel = bootstrap.bind(new InetSocketAddress(host, requestedPort)).sync().channel();
    } catch (final InterruptedException e) {
      Thread.currentThread().interrupt();
      close();
      throw new IllegalStateException("interrupted while binding the setup server", e);
    } catch (final RuntimeException e) {
      close();
      throw new UncheckedIOException(new java.io.IOException("cannot listen on " + host + ":"
          + requestedPort + ": " + e.getMessage(), e));
    }
    port = ((InetSocketAddress) serverChannel.localAddress()).getPort();
    // A push closes its own connection after the 200; any other configuration closes it all.
    agent.onConfigured(configured -> {
      if (configured.source() == GuestAgent.Source.PUSH) {
        stopAccepting();
      } else {
        closeLater();
      }
    });
    LOG.info("guest setup server listening on http://{}:{} (peer {}, publisher {})", host, port,
        agent.state().relayPeerId(), agent.state().publisherKey().address());
  }

  /** Requests refused as malformed, oversized or invalid (400, 413, 431) since start. */
  public long rejectedCount() {
    return rejected.get();
  }

  /** The bound port, or -1. */
  public int port() {
    return port;
  }

  /** Completes once the listener is closed (configured, or {@link #close()}). */
  public CompletableFuture<Void> closedFuture() {
    return closed;
  }

  /** Closes the listener and open connections (bounded). */
  @Override
  public synchronized void close() {
    if (serverChannel != null) {
      serverChannel.close().awaitUninterruptibly(3, TimeUnit.SECONDS);
      serverChannel = null;
    }
    if (channels != null) {
      channels.close().awaitUninterruptibly(3, TimeUnit.SECONDS);
    }
    if (group != null) {
      group.shutdownGracefully(0, 2, TimeUnit.SECONDS).awaitUninterruptibly(5, TimeUnit.SECONDS);
      group = null;
    }
    port = -1;
    if (!closed.isDone()) {
      LOG.info("guest setup server closed");
    }
    closed.complete(null);
  }

  private synchronized void stopAccepting() {
    if (serverChannel != null) {
      serverChannel.close();
    }
  }

  /** Closes off the calling event loop (a handler must not wait for its own loop). */
  private void closeLater() {
    final Thread thread = new Thread(this::close, "guest-setup-close");
    thread.setDaemon(true);
    thread.start();
  }

  private FullHttpResponse response(final HttpResponseStatus status, final Object body) {
    final byte[] bytes;
    try {
      bytes = body == null ? new byte[0] : json.writeValueAsBytes(body);
    } catch (final JsonProcessingException e) {
      throw new IllegalStateException("cannot serialize a response", e);
    }
    final FullHttpResponse response = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status,
        Unpooled.wrappedBuffer(bytes));
    response.headers()
        .set(HttpHeaderNames.ACCESS_CONTROL_ALLOW_ORIGIN, "*")
        .set(HttpHeaderNames.ACCESS_CONTROL_ALLOW_METHODS, "GET, POST, OPTIONS")
        .set(HttpHeaderNames.ACCESS_CONTROL_ALLOW_HEADERS, "content-type")
        .set(HttpHeaderNames.CACHE_CONTROL, "no-store")
        .setInt(HttpHeaderNames.CONTENT_LENGTH, bytes.length);
    if (body != null) {
      response.headers().set(HttpHeaderNames.CONTENT_TYPE, HttpHeaderValues.APPLICATION_JSON);
    }
    return response;
  }

  private static Map<String, Object> error(final String status, final String code,
      final String message) {
    final Map<String, Object> body = new LinkedHashMap<>();
    body.put("ok", false);
    body.put("status", status);
    body.put("code", code);
    body.put("error", message);
    return body;
  }

  /** Oversized bodies get the JSON 413 and the connection closes. */
  private final class LimitedAggregator extends HttpObjectAggregator {
    LimitedAggregator(final int max) {
      super(max);
    }

    @Override
    protected Object newContinueResponse(final HttpMessage start, final int max,
        final ChannelPipeline pipeline) {
      if (HttpUtil.is100ContinueExpected(start) && HttpUtil.getContentLength(start, -1L) > max) {
        return null;
      }
      return super.newContinueResponse(start, max, pipeline);
    }

    @Override
    protected void handleOversizedMessage(final ChannelHandlerContext ctx,
        final HttpMessage oversized) {
      rejected.incrementAndGet();
      LOG.debug("oversized request from {}", ctx.channel().remoteAddress());
      final FullHttpResponse response = response(HttpResponseStatus.REQUEST_ENTITY_TOO_LARGE,
          error("bad-request", "payload_too_large", "the body is larger than "
              + ConfigureRequest.MAX_BODY_SIZE + " bytes"));
      response.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
      // Closing at once would reset a client still sending its body before it reads the 413;
      // the aggregator discards the rest meanwhile, and the connection closes shortly after.
      ctx.writeAndFlush(response).addListener(f -> ctx.executor().schedule(
          () -> ctx.close(), OVERSIZE_LINGER.toMillis(), TimeUnit.MILLISECONDS));
    }
  }

  private final class Handler extends SimpleChannelInboundHandler<FullHttpRequest> {
    @Override
    protected void channelRead0(final ChannelHandlerContext ctx, final FullHttpRequest request) {
      if (request.decoderResult().isFailure()) {
        rejected.incrementAndGet();
        final boolean tooLong = request.decoderResult().cause() instanceof TooLongFrameException;
        LOG.debug("bad request from {}: {}", ctx.channel().remoteAddress(),
            request.decoderResult().cause().toString());
        send(ctx, request, tooLong ? HttpResponseStatus.REQUEST_HEADER_FIELDS_TOO_LARGE
            : HttpResponseStatus.BAD_REQUEST, error("bad-request", "bad_request",
                tooLong ? "request line or headers too large" : "malformed request"), true);
        return;
      }
      final String path = new QueryStringDecoder(request.uri()).path();
      final HttpMethod method = request.method();
      if (HttpMethod.OPTIONS.equals(method)) {
        send(ctx, request, HttpResponseStatus.NO_CONTENT, null, false);
        return;
      }
      switch (path) {
        case "/", "/health" -> {
          if (isGet(method)) {
            send(ctx, request, HttpResponseStatus.OK, agent.health(), false);
          } else {
            methodNotAllowed(ctx, request, "GET");
          }
        }
        case "/metadata" -> {
          if (isGet(method)) {
            final Map<String, Object> body = new LinkedHashMap<>();
            body.put("status", "ready");
            body.put("metadata", agent.metadata());
            send(ctx, request, HttpResponseStatus.OK, body, false);
          } else {
            methodNotAllowed(ctx, request, "GET");
          }
        }
        case "/configure" -> {
          if (HttpMethod.POST.equals(method)) {
            configure(ctx, request);
          } else {
            methodNotAllowed(ctx, request, "POST");
          }
        }
        default -> {
          final Map<String, Object> body = new LinkedHashMap<>();
          body.put("ok", false);
          body.put("status", "not-found");
          body.put("code", "not_found");
          body.put("error", "Not found");
          send(ctx, request, HttpResponseStatus.NOT_FOUND, body, false);
        }
      }
    }

    private boolean isGet(final HttpMethod method) {
      return HttpMethod.GET.equals(method) || HttpMethod.HEAD.equals(method);
    }

    private void methodNotAllowed(final ChannelHandlerContext ctx, final FullHttpRequest request,
        final String allowed) {
      final FullHttpResponse response = response(HttpResponseStatus.METHOD_NOT_ALLOWED,
          error("bad-request", "method_not_allowed", request.method() + " is not allowed here; use "
              + allowed));
      response.headers().set(HttpHeaderNames.ALLOW, allowed + ", OPTIONS");
      write(ctx, request, response, false);
    }

    private void configure(final ChannelHandlerContext ctx, final FullHttpRequest request) {
      final ConfigureRequest parsed;
      try {
        parsed = ConfigureRequest.parse(ByteBufUtil.getBytes(request.content()));
      } catch (final ConfigureRejectedException e) {
        rejected.incrementAndGet();
        LOG.info("POST /configure from {} rejected: {}", ctx.channel().remoteAddress(),
            e.getMessage());
        send(ctx, request, HttpResponseStatus.BAD_REQUEST,
            error("bad-request", e.code(), e.getMessage()), false);
        return;
      }
      final boolean keepAlive = HttpUtil.isKeepAlive(request);
      final HttpVersion version = request.protocolVersion();
      agent.configure(parsed, GuestAgent.Source.PUSH).whenComplete((done, failure) ->
          ctx.executor().execute(() -> {
            final FullHttpResponse response;
            if (failure == null) {
              final Map<String, Object> body = new LinkedHashMap<>();
              body.put("ok", true);
              body.put("status", "configured");
              body.put("stdout", "Configured " + agent.state().envFile()
                  + (done.config().noStart() ? " (no_start: relay not started)" : ""));
              body.put("metadata_pending", false);
              body.put("relay_started", done.relay().isPresent());
              body.put("warnings", done.config().warnings());
              body.put("metadata", agent.metadata());
              response = response(HttpResponseStatus.OK, body);
              response.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
              response.setProtocolVersion(version);
              ctx.writeAndFlush(response).addListener(ChannelFutureListener.CLOSE)
                  .addListener(f -> closeLater());
              return;
            }
            final Throwable cause = Failures.unwrap(failure);
            if (cause instanceof ConfigureRejectedException rejected) {
              response = response(HttpResponseStatus.CONFLICT,
                  error("conflict", rejected.code(), rejected.getMessage()));
            } else {
              response = response(HttpResponseStatus.INTERNAL_SERVER_ERROR,
                  error("error", "relay_start_failed", "the relay did not start, nothing was "
                      + "kept; fix the cause and configure again: " + cause.getMessage()));
            }
            response.setProtocolVersion(version);
            if (keepAlive) {
              HttpUtil.setKeepAlive(response, true);
              ctx.writeAndFlush(response);
            } else {
              ctx.writeAndFlush(response).addListener(ChannelFutureListener.CLOSE);
            }
          }));
    }

    private void send(final ChannelHandlerContext ctx, final FullHttpRequest request,
        final HttpResponseStatus status, final Object body, final boolean close) {
      write(ctx, request, response(status, body), close);
    }

    private void write(final ChannelHandlerContext ctx, final HttpRequest request,
        final FullHttpResponse response, final boolean close) {
      response.setProtocolVersion(request.protocolVersion());
      if (HttpMethod.HEAD.equals(request.method())) {
        response.content().clear();
      }
      if (!close && HttpUtil.isKeepAlive(request)) {
        HttpUtil.setKeepAlive(response, true);
        ctx.writeAndFlush(response);
      } else {
        response.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
        ctx.writeAndFlush(response).addListener(ChannelFutureListener.CLOSE);
      }
    }

    @Override
    public void userEventTriggered(final ChannelHandlerContext ctx, final Object event)
        throws Exception {
      if (event instanceof IdleStateEvent) {
        ctx.close();
      } else {
        super.userEventTriggered(ctx, event);
      }
    }

    @Override
    public void exceptionCaught(final ChannelHandlerContext ctx, final Throwable cause) {
      LOG.debug("setup connection {} failed: {}", ctx.channel().remoteAddress(),
          cause.toString());
      ctx.close();
    }
  }
}
