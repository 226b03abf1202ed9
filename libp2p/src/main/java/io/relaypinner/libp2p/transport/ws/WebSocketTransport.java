package io.relaypinner.libp2p.transport.ws;

import static io.relaypinner.common.Failures.rootCause;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.handler.codec.http.HttpClientCodec;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.websocketx.WebSocketClientProtocolConfig;
import io.netty.handler.codec.http.websocketx.WebSocketClientProtocolHandler;
import io.netty.handler.codec.http.websocketx.WebSocketFrameAggregator;
import io.netty.handler.codec.http.websocketx.WebSocketServerProtocolConfig;
import io.netty.handler.codec.http.websocketx.WebSocketServerProtocolHandler;
import io.netty.handler.ssl.OptionalSslHandler;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslHandler;
import io.relaypinner.libp2p.netty.EventLoops;
import io.relaypinner.libp2p.transport.SocketAddresses;
import io.relaypinner.multiformats.Multiaddr;
import io.relaypinner.multiformats.MultiaddrComponent;
import io.relaypinner.multiformats.MultiaddrProtocol;
import java.net.Inet6Address;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.channels.ClosedChannelException;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import java.util.function.Predicate;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLParameters;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The libp2p WebSocket transport (libp2p/specs websockets): {@code /ip4|ip6/<host>/tcp/<port>/ws}.
 * A connection is an HTTP/1.1 upgrade to WebSocket, then binary frames carry the libp2p byte
 * stream that the connection upgrader secures and multiplexes, exactly as over TCP.
 *
 * <p><b>TLS on the same port.</b> A listener with a {@link ServerTlsSource} asks it for a
 * certificate on every accepted connection; with one, it looks at the connection's first bytes:
 * a TLS record (a ClientHello: {@code 0x16 0x03 ..}) gets a TLS server handler in front of the
 * HTTP/WebSocket pipeline ({@code /tls/ws}, what js-libp2p calls {@code /wss}), anything else
 * stays plain WebSocket, as js-libp2p serves both on one port. Dials of
 * {@code .../tls/ws}, {@code .../tls/sni/<host>/ws} and {@code .../wss} use TLS with the caller's
 * client context and check the server's name (the SNI host, else the IP address).
 */
public final class WebSocketTransport {
  private static final Logger LOG = LoggerFactory.getLogger(WebSocketTransport.class);
  /** HTTP request or response head of the WebSocket handshake. */
  private static final int MAX_HANDSHAKE_BYTES = 8 * 1024;
  /**
   * Largest (reassembled) frame: a Noise message is at most 65,537 bytes with its length prefix,
   * and JS may batch several into one frame.
   */
  private static final int MAX_FRAME_BYTES = 1024 * 1024;

  private final EventLoops loops;
  private final Duration handshakeTimeout;
  private final Optional<SslContext> clientTls;
  private volatile SslContext defaultClientTls;

  /** A transport whose {@code /tls/ws} dials trust the JDK's default certificate authorities. */
  public WebSocketTransport(final EventLoops loops, final Duration handshakeTimeout) {
    this(loops, handshakeTimeout, Optional.empty());
  }

  /**
   * @param handshakeTimeout limit for the TLS and WebSocket handshakes of one connection
   * @param clientTls the client context for {@code /tls/ws} dials; empty = the JDK's default trust
   */
  public WebSocketTransport(final EventLoops loops, final Duration handshakeTimeout,
      final Optional<SslContext> clientTls) {
    this.loops = loops;
    this.handshakeTimeout = handshakeTimeout;
    this.clientTls = clientTls;
  }

  private SslContext clientContext() throws SSLException {
    if (clientTls.isPresent()) {
      return clientTls.get();
    }
    SslContext context = defaultClientTls;
    if (context == null) {
      context = SslContextBuilder.forClient().build();
      defaultClientTls = context;
    }
    return context;
  }

  /**
   * Looks at a connection's first bytes: a TLS record puts a TLS server handler in its place,
   * anything else removes it (plain WebSocket). Waits for 5 bytes (a TLS record header).
   */
  private static final class TlsDetector extends OptionalSslHandler {
    private final long handshakeTimeoutMillis;

    TlsDetector(final SslContext context, final long handshakeTimeoutMillis) {
      super(context);
      this.handshakeTimeoutMillis = handshakeTimeoutMillis;
    }

    @Override
    protected String newSslHandlerName() {
      return "tls";
    }

    @Override
    protected SslHandler newSslHandler(final ChannelHandlerContext ctx,
        final SslContext context) {
      final SslHandler handler = super.newSslHandler(ctx, context);
      handler.setHandshakeTimeoutMillis(handshakeTimeoutMillis);
      return handler;
    }
  }

  /**
   * The pipeline of both sides: HTTP for the upgrade handshake (bounded), the WebSocket protocol
   * handler, frame reassembly (bounded), binary frames to bytes, and {@code ready}, which hears
   * the handshake's outcome and then removes itself.
   */
  private static void install(final Channel channel, final ChannelHandler httpCodec,
      final ChannelHandler protocol, final ChannelHandler ready) {
    channel.pipeline()
        .addLast("http", httpCodec)
        .addLast("http-aggregator", new HttpObjectAggregator(MAX_HANDSHAKE_BYTES))
        .addLast("websocket", protocol)
        .addLast("ws-aggregator", new WebSocketFrameAggregator(MAX_FRAME_BYTES))
        .addLast("ws-frames", new WebSocketFrames())
        .addLast("ws-ready", ready);
  }

  /** The TLS part of a WebSocket address: whether TLS is used, and the SNI host if named. */
  private record Security(boolean tls, Optional<String> sni) {}

  private static final Multiaddr PLAIN_SUFFIX = Multiaddr.parse("/ws");
  private static final Multiaddr TLS_SUFFIX = Multiaddr.parse("/tls/ws");

  /**
   * True for {@code /ip4|ip6/<host>/tcp/<port>} followed by {@code /ws}, {@code /tls/ws},
   * {@code /tls/sni/<name>/ws} or {@code /wss}, optionally followed by {@code /p2p/<id>}.
   */
  public static boolean handles(final Multiaddr address) {
    return SocketAddresses.tcp(address).isPresent() && security(address).isPresent();
  }

  private static Optional<Security> security(final Multiaddr address) {
    final List<MultiaddrComponent> parts = address.withoutPeerId().components();
    if (parts.size() < 3) {
      return Optional.empty();
    }
    final List<MultiaddrProtocol> rest = parts.subList(2, parts.size()).stream()
        .map(MultiaddrComponent::protocol).toList();
    if (rest.equals(List.of(MultiaddrProtocol.WS))) {
      return Optional.of(new Security(false, Optional.empty()));
    }
    if (rest.equals(List.of(MultiaddrProtocol.WSS))
        || rest.equals(List.of(MultiaddrProtocol.TLS, MultiaddrProtocol.WS))) {
      return Optional.of(new Security(true, Optional.empty()));
    }
    if (rest.equals(List.of(MultiaddrProtocol.TLS, MultiaddrProtocol.SNI, MultiaddrProtocol.WS))) {
      return Optional.of(new Security(true, Optional.of(parts.get(3).valueText())));
    }
    return Optional.empty();
  }

  /**
   * What a WebSocket connection's multiaddrs end in: {@code /tls/ws} when TLS runs on the channel,
   * else {@code /ws}.
   */
  public static Multiaddr transportSuffix(final Channel channel) {
    return channel.pipeline().get(SslHandler.class) != null ? TLS_SUFFIX : PLAIN_SUFFIX;
  }

  /** A bound WebSocket listener. */
  public static final class Listener implements AutoCloseable {
    private final Channel channel;
    private final InetSocketAddress socket;

    Listener(final Channel channel, final InetSocketAddress requested) {
      this.channel = channel;
      this.socket = new InetSocketAddress(requested.getAddress(),
          ((InetSocketAddress) channel.localAddress()).getPort());
    }

    /** The bound address with the real port, ending in {@code /ws}. */
    public Multiaddr boundAddress() {
      return SocketAddresses.toMultiaddr(socket).with(MultiaddrComponent.of(MultiaddrProtocol.WS));
    }

    /** Addresses peers can dial (wildcards expanded), each ending in {@code /ws}. */
    public List<Multiaddr> listenAddresses() {
      return SocketAddresses.expandWildcard(socket).stream()
          .map(a -> SocketAddresses.toMultiaddr(a)
              .with(MultiaddrComponent.of(MultiaddrProtocol.WS)))
          .toList();
    }

    @Override
    public void close() {
      channel.close().syncUninterruptibly();
    }
  }

  /**
   * Binds {@code address} for plain WebSocket only; see
   * {@link #listen(Multiaddr, ServerTlsSource, Predicate, Consumer)}.
   */
  public CompletableFuture<Listener> listen(final Multiaddr address,
      final Consumer<Channel> onConnection) {
    return listen(address, ServerTlsSource.NONE, channel -> true, onConnection);
  }

  /**
   * Binds {@code address} ({@code /ip4|ip6/<host>/tcp/<port>/ws}).
   *
   * @param tls asked once per accepted connection; with a certificate the connection may use TLS
   * @param admit called on the event loop for every accepted connection before anything is read;
   *     false drops it (the predicate closes it)
   * @param onConnection called on the event loop for every connection whose WebSocket handshake
   *     completed, with the pipeline ready to carry bytes
   */
  public CompletableFuture<Listener> listen(final Multiaddr address, final ServerTlsSource tls,
      final Predicate<Channel> admit, final Consumer<Channel> onConnection) {
    final Optional<InetSocketAddress> socket = SocketAddresses.tcp(address);
    // TLS is detected per connection: a listener is always bound on a plain /ws address.
    if (socket.isEmpty() || !security(address).map(s -> !s.tls()).orElse(false)) {
      return CompletableFuture.failedFuture(
          new IllegalArgumentException("not a WebSocket listen address: " + address));
    }
    final WebSocketServerProtocolConfig config = WebSocketServerProtocolConfig.newBuilder()
        .websocketPath("/")
        .checkStartsWith(true)
        .maxFramePayloadLength(MAX_FRAME_BYTES)
        .handshakeTimeoutMillis(handshakeTimeout.toMillis())
        .allowExtensions(false)
        .build();
    final ServerBootstrap bootstrap = new ServerBootstrap()
        .group(loops.group())
        .channelFactory(() -> loops.newServerChannel(
            socket.get().getAddress() instanceof Inet6Address))
        .option(ChannelOption.SO_BACKLOG, 1024)
        .option(ChannelOption.SO_REUSEADDR, true)
        .childOption(ChannelOption.TCP_NODELAY, true)
        .childHandler(new ChannelInitializer<Channel>() {
          @Override
          protected void initChannel(final Channel ch) {
            if (!admit.test(ch)) {
              return;
            }
            final Optional<SslContext> context = tls.current();
            if (context.isPresent()) {
              ch.pipeline().addLast("tls-detect",
                  new TlsDetector(context.get(), handshakeTimeout.toMillis()));
            }
            install(ch, new HttpServerCodec(4096, MAX_HANDSHAKE_BYTES, 8192),
                new WebSocketServerProtocolHandler(config), new ChannelInboundHandlerAdapter() {
                  @Override
                  public void userEventTriggered(final ChannelHandlerContext ctx,
                      final Object evt) {
                    if (evt instanceof WebSocketServerProtocolHandler.HandshakeComplete) {
                      ctx.pipeline().remove(this);
                      onConnection.accept(ctx.channel());
                    }
                    ctx.fireUserEventTriggered(evt);
                  }

                  @Override
                  public void exceptionCaught(final ChannelHandlerContext ctx,
                      final Throwable cause) {
                    // Before the WebSocket handshake: bad TLS or HTTP, the remote's fault.
                    LOG.debug("WebSocket connection {} failed before its upgrade: {}",
                        ctx.channel().remoteAddress(), rootCause(cause).toString());
                    ctx.close();
                  }
                });
          }
        });
    final CompletableFuture<Listener> result = new CompletableFuture<>();
    bootstrap.bind(socket.get()).addListener((ChannelFuture bound) -> {
      if (bound.isSuccess()) {
        result.complete(new Listener(bound.channel(), socket.get()));
      } else {
        result.completeExceptionally(bound.cause());
      }
    });
    return result;
  }

  /**
   * Connects and performs the WebSocket handshake; completes with the channel ready to carry
   * bytes (the caller then starts the libp2p upgrade on it).
   */
  public CompletableFuture<Channel> dial(final Multiaddr address, final Duration timeout) {
    final Optional<InetSocketAddress> socket = SocketAddresses.tcp(address);
    final Optional<Security> security = security(address);
    if (socket.isEmpty() || security.isEmpty()) {
      return CompletableFuture.failedFuture(
          new IllegalArgumentException("WebSocket cannot dial " + address));
    }
    final InetSocketAddress target = socket.get();
    final String ip = target.getAddress().getHostAddress().replaceFirst("%.*$", "");
    final String host = target.getAddress() instanceof Inet6Address ? "[" + ip + "]" : ip;
    final boolean tls = security.get().tls();
    final SslContext tlsContext;
    try {
      tlsContext = tls ? clientContext() : null;
    } catch (final SSLException e) {
      return CompletableFuture.failedFuture(e);
    }
    final String serverName = security.get().sni().orElse(ip);
    final URI uri = URI.create((tls ? "wss://" : "ws://")
        + security.get().sni().orElse(host) + ":" + target.getPort() + "/");
    final WebSocketClientProtocolConfig config = WebSocketClientProtocolConfig.newBuilder()
        .webSocketUri(uri)
        .maxFramePayloadLength(MAX_FRAME_BYTES)
        .handshakeTimeoutMillis(timeout.toMillis())
        .allowExtensions(false)
        .build();
    final CompletableFuture<Channel> result = new CompletableFuture<>();
    final Bootstrap bootstrap = new Bootstrap()
        .group(loops.group())
        .channel(loops.socketChannelType())
        .option(ChannelOption.TCP_NODELAY, true)
        .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) Math.min(Integer.MAX_VALUE,
            timeout.toMillis()))
        .handler(new ChannelInitializer<Channel>() {
          @Override
          protected void initChannel(final Channel ch) {
            if (tlsContext != null) {
              final SslHandler ssl = tlsContext.newHandler(ch.alloc(), serverName,
                  target.getPort());
              final SSLParameters parameters = ssl.engine().getSSLParameters();
              parameters.setEndpointIdentificationAlgorithm("HTTPS");
              ssl.engine().setSSLParameters(parameters);
              ssl.setHandshakeTimeoutMillis(timeout.toMillis());
              ch.pipeline().addLast("tls", ssl);
            }
            install(ch, new HttpClientCodec(4096, MAX_HANDSHAKE_BYTES, 8192),
                new WebSocketClientProtocolHandler(config), new ChannelInboundHandlerAdapter() {
                  @Override
                  public void userEventTriggered(final ChannelHandlerContext ctx,
                      final Object evt) {
                    if (evt == WebSocketClientProtocolHandler.ClientHandshakeStateEvent
                        .HANDSHAKE_COMPLETE) {
                      ctx.pipeline().remove(this);
                      result.complete(ctx.channel());
                    } else if (evt == WebSocketClientProtocolHandler.ClientHandshakeStateEvent
                        .HANDSHAKE_TIMEOUT) {
                      result.completeExceptionally(new TimeoutException(
                          "WebSocket handshake with " + address + " timed out"));
                    }
                    ctx.fireUserEventTriggered(evt);
                  }

                  @Override
                  public void channelInactive(final ChannelHandlerContext ctx) {
                    result.completeExceptionally(new ClosedChannelException());
                    ctx.fireChannelInactive();
                  }

                  @Override
                  public void exceptionCaught(final ChannelHandlerContext ctx,
                      final Throwable cause) {
                    result.completeExceptionally(rootCause(cause));
                    ctx.close();
                  }
                });
          }
        });
    bootstrap.connect(target).addListener((ChannelFuture connected) -> {
      if (!connected.isSuccess()) {
        result.completeExceptionally(connected.cause());
      }
    });
    return result;
  }
}
