package io.relaypinner.libp2p.netty;

import io.netty.channel.EventLoopGroup;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.ServerChannel;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollDatagramChannel;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.DatagramChannel;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioDatagramChannel;
import io.netty.channel.socket.SocketProtocolFamily;
import io.netty.channel.unix.IntegerUnixChannelOption;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.nio.channels.spi.SelectorProvider;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.TimeUnit;

/**
 * One Netty 4.2 event loop group and the channel classes that match its transport: native epoll
 * when available (Linux), NIO otherwise. The node creates one and shares it between its listeners
 * (HTTP and libp2p) so that all network I/O runs on the same few threads.
 *
 * @param group the loops; whoever created it shuts it down ({@link #shutdownGracefully})
 * @param serverChannelType the server socket channel class for {@code ServerBootstrap.channel}
 * @param socketChannelType the client socket channel class for {@code Bootstrap.channel}
 * @param transport {@code "epoll"} or {@code "nio"}, for logs
 */
public record EventLoops(
    EventLoopGroup group,
    Class<? extends ServerChannel> serverChannelType,
    Class<? extends SocketChannel> socketChannelType,
    String transport) {

  public EventLoops {
    Objects.requireNonNull(group, "group");
    Objects.requireNonNull(serverChannelType, "serverChannelType");
    Objects.requireNonNull(socketChannelType, "socketChannelType");
    Objects.requireNonNull(transport, "transport");
  }

  /**
   * Creates a group of {@code threads} loops named {@code <name>-<n>}, epoll when
   * {@code Epoll.isAvailable()}.
   */
  public static EventLoops create(final int threads, final String name) {
    return Epoll.isAvailable() ? epoll(threads, name) : nio(threads, name);
  }

  /** One loop per available processor: the loops never block, so more would only contend. */
  public static EventLoops create(final String name) {
    return create(Math.max(1, Runtime.getRuntime().availableProcessors()), name);
  }

  /** NIO loops, whatever the platform (tests of the fallback path). */
  public static EventLoops nio(final int threads, final String name) {
    return new EventLoops(group(threads, name, NioIoHandler.newFactory()),
        NioServerSocketChannel.class, NioSocketChannel.class, "nio");
  }

  private static EventLoops epoll(final int threads, final String name) {
    return new EventLoops(group(threads, name, EpollIoHandler.newFactory()),
        EpollServerSocketChannel.class, EpollSocketChannel.class, "epoll");
  }

  private static EventLoopGroup group(
      final int threads, final String name, final IoHandlerFactory factory) {
    if (threads < 1) {
      throw new IllegalArgumentException("threads must be >= 1: " + threads);
    }
    return new MultiThreadIoEventLoopGroup(threads, new DefaultThreadFactory(name), factory);
  }

  /** The datagram channel class of these loops (UDP: the QUIC transport). */
  public Class<? extends DatagramChannel> datagramChannelType() {
    return serverChannelType == EpollServerSocketChannel.class
        ? EpollDatagramChannel.class : NioDatagramChannel.class;
  }

  /** {@code setsockopt(IPPROTO_IPV6, IPV6_V6ONLY)} on Linux: 41 and 26. */
  private static final IntegerUnixChannelOption IPV6_V6ONLY =
      new IntegerUnixChannelOption("IPV6_V6ONLY", 41, 26);

  /**
   * A server socket of one address family. An IPv4 socket accepts IPv4 only; an IPv6 socket is
   * IPv6-only where the transport can say so (epoll), so {@code 0.0.0.0:P} and {@code [::]:P} can
   * both be bound, as js-libp2p does.
   */
  public ServerChannel newServerChannel(final boolean ipv6) {
    final SocketProtocolFamily family =
        ipv6 ? SocketProtocolFamily.INET6 : SocketProtocolFamily.INET;
    if (serverChannelType == EpollServerSocketChannel.class) {
      final EpollServerSocketChannel channel = new EpollServerSocketChannel(family);
      if (ipv6) {
        channel.config().setOption(IPV6_V6ONLY, 1);
      }
      return channel;
    }
    return new NioServerSocketChannel(SelectorProvider.provider(), family);
  }

  /**
   * Stops the loops: no quiet period (the listeners are closed first), waiting at most
   * {@code timeout}.
   *
   * @return true when the loops terminated in time
   */
  public boolean shutdownGracefully(final Duration timeout) {
    group.shutdownGracefully(0, timeout.toMillis(), TimeUnit.MILLISECONDS);
    try {
      return group.awaitTermination(timeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (final InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }
}
