package io.relaypinner.libp2p.host;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.socket.ChannelInputShutdownEvent;
import io.relaypinner.multiformats.Uvarint;
import java.io.ByteArrayOutputStream;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Test helper: opens a stream for one protocol, writes raw bytes, and returns every byte the
 * remote sent until it ended the stream (FIN or close). For tests that speak a protocol byte by
 * byte, malformed input included.
 */
public final class RawExchange {
  private RawExchange() {}

  /** Writes {@code request} (nothing when empty) and waits up to 30 s for the whole answer. */
  public static byte[] exchange(final Connection connection, final String protocol,
      final byte[] request) throws Exception {
    final CompletableFuture<byte[]> answer = new CompletableFuture<>();
    final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    final Stream stream = connection.newStream(List.of(protocol), (channel, p) ->
        channel.pipeline().addLast(new ChannelInboundHandlerAdapter() {
          @Override
          public void channelRead(final ChannelHandlerContext ctx, final Object msg) {
            final ByteBuf buf = (ByteBuf) msg;
            final byte[] copy = new byte[buf.readableBytes()];
            buf.readBytes(copy);
            buf.release();
            bytes.writeBytes(copy);
          }

          @Override
          public void userEventTriggered(final ChannelHandlerContext ctx, final Object evt) {
            if (evt == ChannelInputShutdownEvent.INSTANCE) {
              answer.complete(bytes.toByteArray());
              ctx.close();
            }
          }

          @Override
          public void channelInactive(final ChannelHandlerContext ctx) {
            answer.complete(bytes.toByteArray());
          }

          @Override
          public void exceptionCaught(final ChannelHandlerContext ctx, final Throwable cause) {
            ctx.close();
          }
        })).get(5, TimeUnit.SECONDS);
    if (request.length > 0) {
      stream.channel().writeAndFlush(Unpooled.wrappedBuffer(request));
    }
    return answer.get(30, TimeUnit.SECONDS);
  }

  /** {@code message} with its unsigned varint length prefix. */
  public static byte[] framed(final byte[] message) {
    final ByteArrayOutputStream out = new ByteArrayOutputStream();
    out.writeBytes(Uvarint.encode(message.length));
    out.writeBytes(message);
    return out.toByteArray();
  }

  /** The first length-prefixed message of {@code framed}. */
  public static byte[] unframed(final byte[] framed) {
    final long length = Uvarint.decode(framed).value();
    final int prefix = Uvarint.size(length);
    return Arrays.copyOfRange(framed, prefix, prefix + (int) length);
  }
}
