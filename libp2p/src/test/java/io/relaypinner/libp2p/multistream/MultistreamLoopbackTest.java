package io.relaypinner.libp2p.multistream;

import static io.relaypinner.libp2p.multistream.MultistreamTestSupport.HEADS_ID;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.relaypinner.libp2p.core.NoSuchProtocolException;
import java.io.ByteArrayOutputStream;
import java.net.InetAddress;
import java.nio.channels.ClosedChannelException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Initiator and responder over a real TCP connection on 127.0.0.1, port 0. */
class MultistreamLoopbackTest {
  private static final long WAIT_SECONDS = 10;

  private EventLoopGroup group;
  private Channel server;
  private Channel client;

  @BeforeEach
  void startGroup() {
    group = new MultiThreadIoEventLoopGroup(2, NioIoHandler.newFactory());
  }

  @AfterEach
  void stopGroup() {
    if (client != null) {
      client.close().syncUninterruptibly();
    }
    if (server != null) {
      server.close().syncUninterruptibly();
    }
    group.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
  }

  private void listen(final Consumer<Channel> init) throws InterruptedException {
    server = new ServerBootstrap()
        .group(group)
        .channel(NioServerSocketChannel.class)
        .childHandler(new ChannelInitializer<SocketChannel>() {
          @Override
          protected void initChannel(final SocketChannel ch) {
            init.accept(ch);
          }
        })
        .bind(InetAddress.getLoopbackAddress(), 0)
        .sync()
        .channel();
  }

  private void dial(final MultistreamInitiator initiator) throws InterruptedException {
    client = new Bootstrap()
        .group(group)
        .channel(NioSocketChannel.class)
        .handler(initiator)
        .connect(server.localAddress())
        .sync()
        .channel();
  }

  @Test
  void negotiate_shouldSelectNoiseThenDynamicHeadsIdAndExchangeBytes_overTcp() throws Exception {
    final CompletableFuture<String> serverConnection = new CompletableFuture<>();
    final CompletableFuture<String> serverStream = new CompletableFuture<>();
    // Like the relay: mss(/noise) on the raw connection, then mss again for the application
    // protocol, whose ids are dynamic.
    listen(ch -> {
      final MultistreamResponder connection = new MultistreamResponder(
          ProtocolMatcher.exact("/noise"),
          (c, protocol) -> {
            final MultistreamResponder stream = new MultistreamResponder(
                ProtocolMatcher.matching(id -> id.startsWith("/orbitdb/heads/orbitdb/zdpu")),
                (c2, heads) -> c2.pipeline().addLast(new Echo()));
            forward(stream.result(), serverStream);
            c.pipeline().addLast(stream);
          });
      forward(connection.result(), serverConnection);
      ch.pipeline().addLast(connection);
    });

    final String greeting = "{\"hash\":\"zdpu...\",\"next\":[]} sent before any answer";
    final Reply reply = new Reply(greeting);
    final CompletableFuture<String> clientStream = new CompletableFuture<>();
    final MultistreamInitiator initiator = new MultistreamInitiator(
        List.of("/tls/1.0.0", "/noise"),
        (c, protocol) -> {
          // Lazy, as js opens streams: the application writes right behind the proposal.
          final MultistreamInitiator heads = MultistreamInitiator.lazy(HEADS_ID);
          forward(heads.result(), clientStream);
          c.pipeline().addLast(heads, reply);
        });
    dial(initiator);

    assertThat(initiator.result().get(WAIT_SECONDS, TimeUnit.SECONDS)).isEqualTo("/noise");
    assertThat(serverConnection.get(WAIT_SECONDS, TimeUnit.SECONDS)).isEqualTo("/noise");
    assertThat(serverStream.get(WAIT_SECONDS, TimeUnit.SECONDS)).isEqualTo(HEADS_ID);
    assertThat(clientStream.get(WAIT_SECONDS, TimeUnit.SECONDS)).isEqualTo(HEADS_ID);
    assertThat(reply.received.get(WAIT_SECONDS, TimeUnit.SECONDS)).isEqualTo(greeting);
    assertThat(client.pipeline().get(MultistreamInitiator.class)).isNull();
  }

  @Test
  void negotiate_shouldFailBothSides_whenNoCommonProtocol() throws Exception {
    final CompletableFuture<String> serverConnection = new CompletableFuture<>();
    listen(ch -> {
      final MultistreamResponder connection =
          new MultistreamResponder(ProtocolMatcher.exact("/noise"), ProtocolInstaller.NONE);
      forward(connection.result(), serverConnection);
      ch.pipeline().addLast(connection);
    });
    final MultistreamInitiator initiator =
        new MultistreamInitiator(List.of("/tls/1.0.0"), ProtocolInstaller.NONE);
    dial(initiator);

    assertThatThrownBy(() -> initiator.result().get(WAIT_SECONDS, TimeUnit.SECONDS))
        .isInstanceOf(ExecutionException.class)
        .hasCauseInstanceOf(NoSuchProtocolException.class);
    assertThatThrownBy(() -> serverConnection.get(WAIT_SECONDS, TimeUnit.SECONDS))
        .hasCauseInstanceOf(ClosedChannelException.class);
    assertThat(client.closeFuture().await(WAIT_SECONDS, TimeUnit.SECONDS)).isTrue();
  }

  private static void forward(
      final CompletableFuture<String> from, final CompletableFuture<String> to) {
    from.whenComplete((value, error) -> {
      if (error != null) {
        to.completeExceptionally(error);
      } else {
        to.complete(value);
      }
    });
  }

  /** Writes every byte it reads back. */
  private static final class Echo extends ChannelInboundHandlerAdapter {
    @Override
    public void channelRead(final ChannelHandlerContext ctx, final Object msg) {
      ctx.writeAndFlush(msg);
    }
  }

  /** Sends a greeting as soon as it is added and completes when it has read it back. */
  private static final class Reply extends ChannelInboundHandlerAdapter {
    final CompletableFuture<String> received = new CompletableFuture<>();
    private final byte[] greeting;
    private final ByteArrayOutputStream seen = new ByteArrayOutputStream();

    Reply(final String greeting) {
      this.greeting = greeting.getBytes(StandardCharsets.UTF_8);
    }

    @Override
    public void handlerAdded(final ChannelHandlerContext ctx) {
      ctx.writeAndFlush(Unpooled.wrappedBuffer(greeting));
    }

    @Override
    public void channelRead(final ChannelHandlerContext ctx, final Object msg) {
      final ByteBuf buf = (ByteBuf) msg;
      try {
        seen.writeBytes(ByteBufUtil.getBytes(buf));
      } finally {
        buf.release();
      }
      if (seen.size() >= greeting.length) {
        received.complete(seen.toString(StandardCharsets.UTF_8));
      }
    }
  }
}
