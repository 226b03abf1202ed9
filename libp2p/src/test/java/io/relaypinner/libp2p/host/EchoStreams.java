package io.relaypinner.libp2p.host;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.socket.ChannelInputShutdownEvent;
import io.relaypinner.libp2p.netty.HalfClose;
import java.nio.channels.ClosedChannelException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * The test protocol {@code /relay-pinner/echo/1.0.0} (also answered by the JS peers in
 * interop/js/common/libp2p-peer.mjs): everything received is sent back, and the answer ends when
 * the request does. Both handlers respect backpressure.
 */
final class EchoStreams {
  static final String PROTOCOL = "/relay-pinner/echo/1.0.0";
  private static final int CHUNK = 64 * 1024;

  private EchoStreams() {}

  /** What came back on one echo stream. */
  record Echo(long bytes, String sha256) {}

  static String sha256(final byte[] data) {
    return HexFormat.of().formatHex(digest().digest(data));
  }

  private static MessageDigest digest() {
    try {
      return MessageDigest.getInstance("SHA-256");
    } catch (final NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  /** Registers the echo responder on {@code host}. */
  static void serve(final Host host) {
    host.protocols().register(PROTOCOL, (stream, protocol) ->
        stream.pipeline().addLast(new Server()));
  }

  /**
   * Opens {@code streams} echo streams on {@code connection} at once, each sending 1 MiB of random
   * bytes, and asserts that every stream gets exactly its own bytes back.
   */
  static void assertConcurrentEchoes(final Connection connection, final int streams)
      throws Exception {
    assertConcurrentEchoes(connection, streams, 1 << 20);
  }

  /** As above with {@code bytes} per stream. */
  static void assertConcurrentEchoes(final Connection connection, final int streams,
      final int bytes) throws Exception {
    final SecureRandom random = new SecureRandom();
    final List<byte[]> payloads = new ArrayList<>();
    final List<CompletableFuture<Echo>> echoes = new ArrayList<>();
    for (int i = 0; i < streams; i++) {
      final byte[] payload = new byte[bytes];
      random.nextBytes(payload);
      payloads.add(payload);
      echoes.add(roundTrip(connection, payload));
    }
    for (int i = 0; i < echoes.size(); i++) {
      final Echo echo = echoes.get(i).get(120, TimeUnit.SECONDS);
      assertThat(echo.bytes()).as("stream " + i).isEqualTo(payloads.get(i).length);
      assertThat(echo.sha256()).as("stream " + i).isEqualTo(sha256(payloads.get(i)));
    }
    assertThat(connection.isOpen()).isTrue();
  }

  /** Sends {@code data} on a new echo stream and completes with what came back. */
  static CompletableFuture<Echo> roundTrip(final Connection connection, final byte[] data) {
    final CompletableFuture<Echo> result = new CompletableFuture<>();
    connection.newStream(List.of(PROTOCOL), (stream, protocol) ->
        stream.pipeline().addLast(new Client(data, result))).whenComplete((s, error) -> {
          if (error != null) {
            result.completeExceptionally(error);
          }
        });
    return result;
  }

  private static final class Server extends ChannelInboundHandlerAdapter {
    @Override
    public void channelRead(final ChannelHandlerContext ctx, final Object msg) {
      ctx.write(msg);
      if (!ctx.channel().isWritable()) {
        // Pause before flushing: the flush may make the stream writable again at once, and that
        // event must find reading paused, or reading would never resume.
        ctx.channel().config().setAutoRead(false);
        ctx.flush();
        if (ctx.channel().isWritable()) {
          resume(ctx);
        }
      }
    }

    private static void resume(final ChannelHandlerContext ctx) {
      if (!ctx.channel().config().isAutoRead()) {
        ctx.channel().config().setAutoRead(true);
        ctx.read();
      }
    }

    @Override
    public void channelReadComplete(final ChannelHandlerContext ctx) {
      ctx.flush();
    }

    @Override
    public void channelWritabilityChanged(final ChannelHandlerContext ctx) {
      if (ctx.channel().isWritable()) {
        resume(ctx);
      }
    }

    @Override
    public void userEventTriggered(final ChannelHandlerContext ctx, final Object evt) {
      if (evt instanceof ChannelInputShutdownEvent) {
        ctx.writeAndFlush(Unpooled.EMPTY_BUFFER)
            .addListener(f -> HalfClose.shutdownOutput(ctx.channel()));
      }
      ctx.fireUserEventTriggered(evt);
    }

    @Override
    public void exceptionCaught(final ChannelHandlerContext ctx, final Throwable cause) {
      ctx.close();
    }
  }

  private static final class Client extends ChannelInboundHandlerAdapter {
    private final byte[] data;
    private final CompletableFuture<Echo> result;
    private final MessageDigest received = digest();
    private int offset;
    private long count;
    private boolean outputDone;

    Client(final byte[] data, final CompletableFuture<Echo> result) {
      this.data = data;
      this.result = result;
    }

    @Override
    public void handlerAdded(final ChannelHandlerContext ctx) {
      if (ctx.channel().isActive()) {
        writeMore(ctx);
      }
    }

    @Override
    public void channelActive(final ChannelHandlerContext ctx) {
      writeMore(ctx);
      ctx.fireChannelActive();
    }

    @Override
    public void channelWritabilityChanged(final ChannelHandlerContext ctx) {
      writeMore(ctx);
    }

    private void writeMore(final ChannelHandlerContext ctx) {
      while (offset < data.length && ctx.channel().isWritable()) {
        final int start = offset;
        final int length = Math.min(CHUNK, data.length - start);
        // Advance first: write() can fire channelWritabilityChanged, re-entering this method.
        offset += length;
        ctx.write(Unpooled.wrappedBuffer(data, start, length));
      }
      ctx.flush();
      if (offset == data.length && !outputDone) {
        outputDone = true;
        HalfClose.shutdownOutput(ctx.channel());
      }
    }

    @Override
    public void channelRead(final ChannelHandlerContext ctx, final Object msg) {
      final ByteBuf buf = (ByteBuf) msg;
      try {
        count += buf.readableBytes();
        received.update(buf.nioBuffer());
      } finally {
        buf.release();
      }
    }

    @Override
    public void userEventTriggered(final ChannelHandlerContext ctx, final Object evt) {
      if (evt instanceof ChannelInputShutdownEvent) {
        result.complete(new Echo(count, HexFormat.of().formatHex(received.digest())));
        ctx.close();
      }
      ctx.fireUserEventTriggered(evt);
    }

    @Override
    public void channelInactive(final ChannelHandlerContext ctx) {
      result.completeExceptionally(new ClosedChannelException());
      ctx.fireChannelInactive();
    }

    @Override
    public void exceptionCaught(final ChannelHandlerContext ctx, final Throwable cause) {
      result.completeExceptionally(cause);
      ctx.close();
    }
  }
}
