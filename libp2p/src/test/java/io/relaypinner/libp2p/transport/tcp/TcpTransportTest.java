package io.relaypinner.libp2p.transport.tcp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.relaypinner.libp2p.netty.EventLoops;
import io.relaypinner.multiformats.Multiaddr;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class TcpTransportTest {
  private final EventLoops loops = EventLoops.create(1, "tcp-test");
  private final TcpTransport transport = new TcpTransport(loops);

  @AfterEach
  void shutdown() {
    loops.shutdownGracefully(Duration.ofSeconds(2));
  }

  @Test
  void listenAndDial_shouldCarryBytes_andReportTheRealPort() throws Exception {
    final ChannelInitializer<Channel> echo = new ChannelInitializer<>() {
      @Override
      protected void initChannel(final Channel ch) {
        ch.pipeline().addLast(new ChannelInboundHandlerAdapter() {
          @Override
          public void channelRead(final ChannelHandlerContext ctx, final Object msg) {
            ctx.writeAndFlush(msg);
          }
        });
      }
    };
    try (TcpTransport.Listener listener = transport.listen(
        Multiaddr.parse("/ip4/127.0.0.1/tcp/0"), echo).get(5, TimeUnit.SECONDS)) {
      final Multiaddr bound = listener.boundAddress();
      assertThat(bound.toString()).startsWith("/ip4/127.0.0.1/tcp/").doesNotEndWith("/tcp/0");
      assertThat(listener.listenAddresses()).containsExactly(bound);

      final CompletableFuture<String> reply = new CompletableFuture<>();
      final Channel client = transport.dial(bound.encapsulate(
          "/p2p/12D3KooWDpJ7As7BWAwRMfu1VU2WCqNjvq387JEYKDBj4kx6nXTN"),
          new ChannelInboundHandlerAdapter() {
            @Override
            public void channelRead(final ChannelHandlerContext ctx, final Object msg) {
              final ByteBuf buf = (ByteBuf) msg;
              reply.complete(buf.toString(StandardCharsets.UTF_8));
              buf.release();
            }
          }, Duration.ofSeconds(5)).get(5, TimeUnit.SECONDS);
      client.writeAndFlush(Unpooled.copiedBuffer("ping", StandardCharsets.UTF_8));
      assertThat(reply.get(5, TimeUnit.SECONDS)).isEqualTo("ping");
      client.close().sync();
    }
  }

  @Test
  void listen_shouldExpandAWildcardToInterfaceAddresses() throws Exception {
    try (TcpTransport.Listener listener = transport.listen(
        Multiaddr.parse("/ip4/0.0.0.0/tcp/0"), new ChannelInboundHandlerAdapter())
        .get(5, TimeUnit.SECONDS)) {
      final int port = listener.boundAddress().components().get(1).port();
      assertThat(listener.listenAddresses()).contains(
          Multiaddr.parse("/ip4/127.0.0.1/tcp/" + port));
    }
  }

  @Test
  void listen_shouldBindIpv4AndIpv6WildcardsOnTheSamePort() throws Exception {
    try (TcpTransport.Listener v4 = transport.listen(Multiaddr.parse("/ip4/0.0.0.0/tcp/0"),
        new ChannelInboundHandlerAdapter()).get(5, TimeUnit.SECONDS)) {
      final int port = v4.boundAddress().components().get(1).port();
      try (TcpTransport.Listener v6 = transport.listen(Multiaddr.parse("/ip6/::/tcp/" + port),
          new ChannelInboundHandlerAdapter()).get(5, TimeUnit.SECONDS)) {
        assertThat(v6.boundAddress()).isEqualTo(Multiaddr.parse("/ip6/::/tcp/" + port));
        assertThat(v4.boundAddress()).isEqualTo(Multiaddr.parse("/ip4/0.0.0.0/tcp/" + port));
      }
    }
  }

  @Test
  void canDial_shouldAcceptOnlyPlainTcpAddresses() {
    assertThat(TcpTransport.canDial(Multiaddr.parse("/ip4/1.2.3.4/tcp/1"))).isTrue();
    assertThat(TcpTransport.canDial(Multiaddr.parse("/ip6/::1/tcp/1/p2p/"
        + "12D3KooWDpJ7As7BWAwRMfu1VU2WCqNjvq387JEYKDBj4kx6nXTN"))).isTrue();
    assertThat(TcpTransport.canDial(Multiaddr.parse("/ip4/1.2.3.4/tcp/1/ws"))).isFalse();
    assertThat(TcpTransport.canDial(Multiaddr.parse("/dns4/a.example/tcp/1"))).isFalse();
    assertThat(TcpTransport.canDial(Multiaddr.parse("/ip4/1.2.3.4/udp/1/quic-v1"))).isFalse();
  }

  @Test
  void dial_shouldFail_whenNothingListens() throws Exception {
    final int port;
    try (TcpTransport.Listener listener = transport.listen(
        Multiaddr.parse("/ip4/127.0.0.1/tcp/0"), new ChannelInboundHandlerAdapter())
        .get(5, TimeUnit.SECONDS)) {
      port = listener.boundAddress().components().get(1).port();
    }
    assertThatThrownBy(() -> transport.dial(Multiaddr.parse("/ip4/127.0.0.1/tcp/" + port),
        new ChannelInboundHandlerAdapter(), Duration.ofSeconds(2)).get(5, TimeUnit.SECONDS))
        .isInstanceOf(ExecutionException.class);
  }
}
