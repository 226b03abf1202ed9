package io.relaypinner.libp2p.transport.tcp;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelOption;
import io.relaypinner.libp2p.netty.EventLoops;
import io.relaypinner.libp2p.transport.SocketAddresses;
import io.relaypinner.multiformats.Multiaddr;
import java.net.Inet6Address;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * The libp2p TCP transport (libp2p/specs connections): listens on and dials
 * {@code /ip4|ip6/<addr>/tcp/<port>} on the node's shared event loops (native epoll when
 * available). What happens on a connection is the caller's {@link ChannelHandler} (the connection
 * upgrader), installed on every accepted or dialled channel.
 */
public final class TcpTransport {
  private final EventLoops loops;

  public TcpTransport(final EventLoops loops) {
    this.loops = loops;
  }

  /** True for addresses this transport dials: {@code /ip4|ip6/.../tcp/...} with nothing but
   * an optional {@code /p2p/<peer>} after it. */
  public static boolean canDial(final Multiaddr address) {
    final Multiaddr bare = address.withoutPeerId();
    return bare.components().size() == 2 && SocketAddresses.tcp(bare).isPresent();
  }

  /** A bound TCP listener. */
  public static final class Listener implements AutoCloseable {
    private final Channel channel;
    private final InetSocketAddress socket;
    private final Multiaddr bound;

    Listener(final Channel channel, final InetSocketAddress requested) {
      this.channel = channel;
      // A 0.0.0.0 bind is reported back as :: on a dual-stack socket: keep the family asked for,
      // with the port the kernel chose.
      this.socket = new InetSocketAddress(requested.getAddress(),
          ((InetSocketAddress) channel.localAddress()).getPort());
      this.bound = SocketAddresses.toMultiaddr(socket);
    }

    /** The bound address, with the real port when 0 was asked for. */
    public Multiaddr boundAddress() {
      return bound;
    }

    /** Addresses peers can dial: the bound one, or every interface address for a wildcard. */
    public List<Multiaddr> listenAddresses() {
      return SocketAddresses.expandWildcard(socket).stream()
          .map(SocketAddresses::toMultiaddr).toList();
    }

    public boolean isOpen() {
      return channel.isOpen();
    }

    @Override
    public void close() {
      channel.close().syncUninterruptibly();
    }
  }

  /**
   * Binds {@code address} ({@code /ip4|ip6/<host>/tcp/<port>}, port 0 for an ephemeral one).
   *
   * @param childHandler installed on every accepted connection
   */
  public CompletableFuture<Listener> listen(final Multiaddr address,
      final ChannelHandler childHandler) {
    final Optional<InetSocketAddress> socket = SocketAddresses.tcp(address);
    if (socket.isEmpty()) {
      return CompletableFuture.failedFuture(
          new IllegalArgumentException("not a TCP listen address: " + address));
    }
    final ServerBootstrap bootstrap = new ServerBootstrap()
        .group(loops.group())
        .channelFactory(() -> loops.newServerChannel(
            socket.get().getAddress() instanceof Inet6Address))
        .option(ChannelOption.SO_BACKLOG, 1024)
        .option(ChannelOption.SO_REUSEADDR, true)
        .childOption(ChannelOption.TCP_NODELAY, true)
        .childOption(ChannelOption.SO_KEEPALIVE, true)
        .childHandler(childHandler);
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
   * Connects to {@code address} ({@code /p2p/...} allowed and ignored here; the secure channel
   * checks the peer).
   *
   * @param handler installed on the channel before it connects
   * @param timeout connect timeout
   */
  public CompletableFuture<Channel> dial(final Multiaddr address, final ChannelHandler handler,
      final Duration timeout) {
    if (!canDial(address)) {
      return CompletableFuture.failedFuture(
          new IllegalArgumentException("TCP cannot dial " + address));
    }
    final Bootstrap bootstrap = new Bootstrap()
        .group(loops.group())
        .channel(loops.socketChannelType())
        .option(ChannelOption.TCP_NODELAY, true)
        .option(ChannelOption.SO_KEEPALIVE, true)
        .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) Math.min(Integer.MAX_VALUE,
            timeout.toMillis()))
        .handler(handler);
    final CompletableFuture<Channel> result = new CompletableFuture<>();
    bootstrap.connect(SocketAddresses.tcp(address).orElseThrow())
        .addListener((ChannelFuture connected) -> {
          if (connected.isSuccess()) {
            result.complete(connected.channel());
          } else {
            result.completeExceptionally(connected.cause());
          }
        });
    return result;
  }
}
