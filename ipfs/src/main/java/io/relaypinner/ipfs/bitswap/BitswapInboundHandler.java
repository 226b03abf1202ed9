package io.relaypinner.ipfs.bitswap;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.socket.ChannelInputShutdownEvent;
import io.netty.handler.codec.DecoderException;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.util.ReferenceCountUtil;
import io.relaypinner.common.Failures;
import io.relaypinner.libp2p.core.ProtocolViolationException;
import io.relaypinner.libp2p.mux.yamux.YamuxStreamChannel;
import java.util.function.Consumer;
import java.util.function.ObjIntConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads the messages of a peer's bitswap stream to us, after an {@code UvarintFrameDecoder} that
 * enforces the message size limit. The stream is read-only for us (Helia never reads answers on
 * it; ours go on our own stream). A message that breaks a limit or does not decode closes the
 * stream (RST) and is reported to {@code rejected} with a reason; the remote's FIN or a silence
 * longer than the idle timeout closes it too.
 */
final class BitswapInboundHandler extends ChannelInboundHandlerAdapter {
  private static final Logger LOG = LoggerFactory.getLogger(BitswapInboundHandler.class);

  private final BitswapFrameCodec codec;
  private final ObjIntConsumer<BitswapFrameCodec.Decoded> sink;
  private final Consumer<BitswapReject> rejected;

  BitswapInboundHandler(final BitswapFrameCodec codec,
      final ObjIntConsumer<BitswapFrameCodec.Decoded> sink, final Consumer<BitswapReject> rejected) {
    this.codec = codec;
    this.sink = sink;
    this.rejected = rejected;
  }

  @Override
  public void channelRead(final ChannelHandlerContext ctx, final Object msg) {
    if (!(msg instanceof ByteBuf frame)) {
      ReferenceCountUtil.release(msg);
      fail(ctx, BitswapReject.MALFORMED,
          new ProtocolViolationException("bitswap: unexpected message"));
      return;
    }
    final BitswapFrameCodec.Decoded decoded;
    final int size = frame.readableBytes();
    try {
      decoded = codec.decode(frame.nioBuffer());
    } catch (final ProtocolViolationException e) {
      fail(ctx, BitswapReject.of(e), e);
      return;
    } finally {
      frame.release();
    }
    sink.accept(decoded, size);
  }

  @Override
  public void userEventTriggered(final ChannelHandlerContext ctx, final Object evt) {
    if (evt instanceof ChannelInputShutdownEvent) {
      ctx.close();
    } else if (evt instanceof IdleStateEvent) {
      LOG.debug("closing idle bitswap stream {}", ctx.channel());
      ctx.close();
    }
    ctx.fireUserEventTriggered(evt);
  }

  @Override
  public void exceptionCaught(final ChannelHandlerContext ctx, final Throwable cause) {
    final Throwable root = cause instanceof DecoderException && cause.getCause() != null
        ? cause.getCause() : cause;
    if (root instanceof ProtocolViolationException) {
      fail(ctx, BitswapReject.of(root), root);
    } else {
      if (Failures.isFatal(cause)) {
        // Not the remote's doing: a JVM error or our bug must be seen.
        LOG.error("bitswap stream {} failed", ctx.channel(), cause);
      } else {
        LOG.debug("closing bitswap stream {} from the remote: {}", ctx.channel(),
            root.toString());
      }
      ctx.close();
    }
  }

  private void fail(final ChannelHandlerContext ctx, final BitswapReject reason,
      final Throwable cause) {
    rejected.accept(reason);
    LOG.debug("closing bitswap stream {} from the remote ({}): {}", ctx.channel(), reason,
        cause.getMessage());
    // RST, not FIN: the peer learns at once, and whatever else it sent is discarded unread.
    if (ctx.channel() instanceof YamuxStreamChannel stream) {
      stream.reset();
    } else {
      ctx.close();
    }
  }
}
