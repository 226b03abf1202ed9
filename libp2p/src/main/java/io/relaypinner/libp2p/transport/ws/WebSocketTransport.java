package io.relaypinner.libp2p.transport.ws;

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

/**
 * The libp2p WebSocket transport (libp2p/specs websockets): {@code /ip4|ip6/<host>/tcp/<port>/ws}.
 * A connection is an HTTP/1.1 upgrade to WebSocket, then binary frames carry the libp2p byte
 * stream that the connection upgrader secures and multiplexes, exactly as over TCP.
 */
public final class WebSocketTransport {
  /** HTTP request or response head of the WebSocket handshake. */
  private static final int MAX_HANDSHAKE_BYTES = 8 * 1024;
  /**
   * Largest (reassembled) frame: a Noise message is at most 65,537 bytes with its length prefix,
   * and JS may batch several into one frame.
   */
  private static final int MAX_FRAME_BYTES = 1024 * 1024;

  private final EventLoops loops;
  private final Duration handshakeTimeout;

  public WebSocketTransport(final EventLoops loops, final Duration handshakeTimeout) {
    this.loops = loops;
    this.handshakeTimeout = handshakeTimeout;
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

  /** True for {@code /ip4|ip6/<host>/tcp/<port>/ws}, optionally followed by {@code /p2p/<id>}. */
  public static boolean handles(final Multiaddr address) {
    final List<MultiaddrComponent> parts = address.withoutPeerId().components();
    return parts.size() == 3 && parts.get(2).protocol() == MultiaddrProtocol.WS
        && SocketAddresses.tcp(address).isPresent();
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
          .map(a -> SocketAddresses.toMultiaddr(a).with(MultiaddrComponent.of(MultiaddrProtocol.WS))).toList();
    }

    @Override
    public void close() {
      channel.close().syncUninterruptibly();
    }
  }

  /**
   * Binds {@code address}; {@code onConnection} is called on the event loop for every connection
   * whose WebSocket handshake completed, with the pipeline ready to carry bytes.
   */
  public CompletableFuture<Listener> listen(final Multiaddr address,
      final Consumer<Channel> onConnection) {
    final Optional<InetSocketAddress> socket = SocketAddresses.tcp(address);
    if (!handles(address) || socket.isEmpty()) {
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
    if (!handles(address) || socket.isEmpty()) {
      return CompletableFuture.failedFuture(
          new IllegalArgumentException("WebSocket cannot dial " + address));
    }
    final InetSocketAddress target = socket.get();
    final String host = target.getAddress() instanceof Inet6Address
        ? "[" + target.getAddress().getHostAddress().replaceFirst("%.*$", "") + "]"
        : target.getAddress().getHostAddress();
    final URI uri = URI.create("ws://" + host + ":" + target.getPort() + "/");
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
