package io.relaypinner.libp2p.mux.yamux;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.ChannelInputShutdownEvent;
import io.netty.channel.socket.DuplexChannel;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.util.concurrent.Future;
import java.net.InetSocketAddress;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Two real yamux sessions over TCP on 127.0.0.1, each on its own event loop. */
class YamuxLoopbackTest {
  private static final int STREAMS = 100;
  private static final int BYTES_PER_STREAM = 1 << 20;
  private static final long TIMEOUT_SECONDS = 60;

  private final EventLoopGroup group =
      new MultiThreadIoEventLoopGroup(2, NioIoHandler.newFactory());
  private final List<Channel> channels = new ArrayList<>();

  @AfterEach
  void shutdown() throws InterruptedException {
    for (final Channel ch : channels) {
      ch.close().await(TIMEOUT_SECONDS, TimeUnit.SECONDS);
    }
    group.shutdownGracefully(0, 5, TimeUnit.SECONDS).await(TIMEOUT_SECONDS, TimeUnit.SECONDS);
  }

  /** Counts the streams a session forgets. */
  private static final class Counting implements YamuxSessionListener {
    final CountDownLatch closed;
    final CountDownLatch allOpened;
    final AtomicInteger opened = new AtomicInteger();

    Counting(final int expected) {
      this.closed = new CountDownLatch(expected);
      this.allOpened = new CountDownLatch(expected);
    }

    @Override
    public void streamOpened(final YamuxStreamChannel stream) {
      opened.incrementAndGet();
      allOpened.countDown();
    }

    @Override
    public void streamClosed(final YamuxStreamChannel stream) {
      closed.countDown();
    }
  }

  /** Echoes everything back; stops reading while its own output is backed up; FIN after FIN. */
  private static final class Echo extends ChannelInboundHandlerAdapter {
    @Override
    public void channelRead(final ChannelHandlerContext ctx, final Object msg) {
      ctx.write(msg);
      if (!ctx.channel().isWritable()) {
        ctx.flush();
        // The flush may have made the stream writable again (the event fires inside it).
        if (!ctx.channel().isWritable()) {
          ctx.channel().config().setAutoRead(false);
        }
      }
    }

    @Override
    public void channelReadComplete(final ChannelHandlerContext ctx) {
      ctx.flush();
    }

    @Override
    public void channelWritabilityChanged(final ChannelHandlerContext ctx) {
      if (ctx.channel().isWritable()) {
        ctx.channel().config().setAutoRead(true);
      }
    }

    @Override
    public void userEventTriggered(final ChannelHandlerContext ctx, final Object evt) {
      if (evt == ChannelInputShutdownEvent.INSTANCE) {
        ((DuplexChannel) ctx.channel()).shutdownOutput();
      }
    }
  }

  /** Writes its data respecting writability, then FIN; digests what comes back until FIN. */
  private static final class Sender extends ChannelInboundHandlerAdapter {
    private final byte[] data;
    private final Random chunks;
    private final MessageDigest received = sha256();
    private final CompletableFuture<byte[]> done;
    private int offset;
    private long receivedBytes;

    Sender(final byte[] data, final long seed, final CompletableFuture<byte[]> done) {
      this.data = data;
      this.chunks = new Random(seed);
      this.done = done;
    }

    @Override
    public void channelActive(final ChannelHandlerContext ctx) {
      pump(ctx);
      ctx.fireChannelActive();
    }

    @Override
    public void channelWritabilityChanged(final ChannelHandlerContext ctx) {
      if (ctx.channel().isWritable()) {
        pump(ctx);
      }
    }

    private void pump(final ChannelHandlerContext ctx) {
      if (offset == data.length) {
        return;
      }
      while (offset < data.length && ctx.channel().isWritable()) {
        // Chunks up to 100 000 bytes: some exceed the 64 KiB frame cap and must be split.
        final int n = Math.min(1 + chunks.nextInt(100_000), data.length - offset);
        ctx.write(Unpooled.wrappedBuffer(data, offset, n));
        offset += n;
      }
      ctx.flush();
      if (offset == data.length) {
        ((DuplexChannel) ctx.channel()).shutdownOutput();
      }
    }

    @Override
    public void channelRead(final ChannelHandlerContext ctx, final Object msg) {
      final ByteBuf buf = (ByteBuf) msg;
      try {
        receivedBytes += buf.readableBytes();
        received.update(buf.nioBuffer());
      } finally {
        buf.release();
      }
    }

    @Override
    public void userEventTriggered(final ChannelHandlerContext ctx, final Object evt) {
      if (evt == ChannelInputShutdownEvent.INSTANCE) {
        if (receivedBytes == data.length) {
          done.complete(received.digest());
        } else {
          done.completeExceptionally(
              new AssertionError("received " + receivedBytes + " of " + data.length));
        }
      }
    }

    @Override
    public void channelInactive(final ChannelHandlerContext ctx) {
      done.completeExceptionally(new AssertionError("stream closed before its FIN"));
    }

    @Override
    public void exceptionCaught(final ChannelHandlerContext ctx, final Throwable cause) {
      done.completeExceptionally(cause);
    }
  }

  private static MessageDigest sha256() {
    try {
      return MessageDigest.getInstance("SHA-256");
    } catch (final NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  private ChannelInitializer<Channel> echoStreams() {
    return new ChannelInitializer<>() {
      @Override
      protected void initChannel(final Channel ch) {
        ch.pipeline().addLast(new Echo());
      }
    };
  }

  /** Starts a listener session and a dialer session connected to it over TCP. */
  private YamuxHandler connect(
      final YamuxSessionListener serverListener,
      final YamuxSessionListener clientListener,
      final AtomicReference<YamuxHandler> serverSession)
      throws InterruptedException {
    final Channel server =
        new ServerBootstrap()
            .group(group)
            .channel(NioServerSocketChannel.class)
            .childHandler(
                new ChannelInitializer<SocketChannel>() {
                  @Override
                  protected void initChannel(final SocketChannel ch) {
                    final YamuxHandler yamux =
                        YamuxHandler.forListener(
                            YamuxConfig.DEFAULT, echoStreams(), serverListener);
                    serverSession.set(yamux);
                    ch.pipeline().addLast(yamux);
                  }
                })
            .bind(new InetSocketAddress("127.0.0.1", 0))
            .sync()
            .channel();
    channels.add(server);
    final YamuxHandler clientSession =
        YamuxHandler.forDialer(YamuxConfig.DEFAULT, echoStreams(), clientListener);
    final Channel client =
        new Bootstrap()
            .group(group)
            .channel(NioSocketChannel.class)
            .handler(clientSession)
            .connect(server.localAddress())
            .sync()
            .channel();
    channels.add(client);
    return clientSession;
  }

  @Test
  void hundredConcurrentStreams_shouldEchoOneMebibyteEach_andAllCloseAfterwards() throws Exception {
    final Counting serverListener = new Counting(STREAMS);
    final Counting clientListener = new Counting(STREAMS);
    final AtomicReference<YamuxHandler> serverSession = new AtomicReference<>();
    final YamuxHandler client = connect(serverListener, clientListener, serverSession);

    final List<byte[]> expected = new ArrayList<>();
    final List<CompletableFuture<byte[]>> echoes = new ArrayList<>();
    final List<Future<YamuxStreamChannel>> opened = new ArrayList<>();
    for (int i = 0; i < STREAMS; i++) {
      final byte[] data = new byte[BYTES_PER_STREAM];
      new Random(i).nextBytes(data);
      expected.add(sha256().digest(data));
      final CompletableFuture<byte[]> echo = new CompletableFuture<>();
      echoes.add(echo);
      final long seed = i;
      // Called from the test thread: newStream hops onto the connection's event loop.
      opened.add(
          client.newStream(
              new ChannelInitializer<Channel>() {
                @Override
                protected void initChannel(final Channel ch) {
                  ch.pipeline().addLast(new Sender(data, seed, echo));
                }
              }));
    }

    for (int i = 0; i < STREAMS; i++) {
      assertThat(echoes.get(i).get(TIMEOUT_SECONDS, TimeUnit.SECONDS))
          .as("echo digest of stream %d", i)
          .isEqualTo(expected.get(i));
    }
    final List<Integer> ids = new ArrayList<>();
    for (final Future<YamuxStreamChannel> f : opened) {
      final YamuxStreamChannel stream = f.get(TIMEOUT_SECONDS, TimeUnit.SECONDS);
      ids.add(stream.streamId());
      assertThat(stream.closeFuture().await(TIMEOUT_SECONDS, TimeUnit.SECONDS)).isTrue();
      assertThat(stream.termination()).contains(YamuxStreamTermination.CLOSED);
    }
    assertThat(ids).allMatch(id -> id % 2 == 1).doesNotHaveDuplicates();
    assertThat(clientListener.closed.await(TIMEOUT_SECONDS, TimeUnit.SECONDS)).isTrue();
    assertThat(serverListener.closed.await(TIMEOUT_SECONDS, TimeUnit.SECONDS)).isTrue();

    final YamuxStats clientStats = client.stats();
    assertThat(clientStats.activeOutboundStreams()).isZero();
    assertThat(clientStats.outboundStreamsOpened()).isEqualTo(STREAMS);
    final YamuxStats serverStats = serverSession.get().stats();
    assertThat(serverStats.activeInboundStreams()).isZero();
    assertThat(serverStats.inboundStreamsOpened()).isEqualTo(STREAMS);
    assertThat(serverStats.inboundStreamsRejected()).isZero();
    assertThat(serverStats.streamsResetByRemote()).isZero();
    assertThat(serverListener.opened).hasValue(STREAMS);
    // Keep-alive is on by default: the first ping has been answered both ways by now.
    assertThat(client.ping().get(TIMEOUT_SECONDS, TimeUnit.SECONDS)).isPositive();
    assertThat(serverSession.get().ping().get(TIMEOUT_SECONDS, TimeUnit.SECONDS)).isPositive();
  }

  @Test
  void closingTheConnection_shouldCloseEveryStreamOnBothSides() throws Exception {
    final int streams = 10;
    final Counting serverListener = new Counting(streams);
    final Counting clientListener = new Counting(streams);
    final AtomicReference<YamuxHandler> serverSession = new AtomicReference<>();
    final YamuxHandler client = connect(serverListener, clientListener, serverSession);
    final List<YamuxStreamChannel> opened = new ArrayList<>();
    for (int i = 0; i < streams; i++) {
      final YamuxStreamChannel stream =
          client.newStream(echoStreams()).get(TIMEOUT_SECONDS, TimeUnit.SECONDS);
      stream.writeAndFlush(Unpooled.wrappedBuffer(new byte[] {(byte) i}));
      opened.add(stream);
    }
    // Closing a socket with unread input sends a TCP RST, which may discard what the server has
    // not read yet: let the server see every stream first.
    assertThat(serverListener.allOpened.await(TIMEOUT_SECONDS, TimeUnit.SECONDS)).isTrue();
    opened.get(0).parent().close().sync();

    assertThat(clientListener.closed.await(TIMEOUT_SECONDS, TimeUnit.SECONDS)).isTrue();
    assertThat(serverListener.closed.await(TIMEOUT_SECONDS, TimeUnit.SECONDS)).isTrue();
    for (final YamuxStreamChannel stream : opened) {
      assertThat(stream.closeFuture().await(TIMEOUT_SECONDS, TimeUnit.SECONDS)).isTrue();
      assertThat(stream.termination()).contains(YamuxStreamTermination.SESSION_CLOSED);
    }
    assertThat(serverSession.get().stats().activeInboundStreams()).isZero();
  }
}
