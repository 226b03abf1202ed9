package io.relaypinner.ipfs.bitswap;

import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.util.ReferenceCountUtil;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The end of our own bitswap stream to a peer (write-only: Helia closes its read side): discards
 * whatever arrives, and reports writability and the stream's end to the controller.
 */
final class BitswapOutboundHandler extends ChannelInboundHandlerAdapter {
  private static final Logger LOG = LoggerFactory.getLogger(BitswapOutboundHandler.class);

  private final Consumer<Channel> writable;
  private final Consumer<Channel> closed;

  BitswapOutboundHandler(final Consumer<Channel> writable, final Consumer<Channel> closed) {
    this.writable = writable;
    this.closed = closed;
  }

  @Override
  public void channelRead(final ChannelHandlerContext ctx, final Object msg) {
    ReferenceCountUtil.release(msg);
  }

  @Override
  public void channelWritabilityChanged(final ChannelHandlerContext ctx) {
    if (ctx.channel().isWritable()) {
      writable.accept(ctx.channel());
    }
    ctx.fireChannelWritabilityChanged();
  }

  @Override
  public void channelInactive(final ChannelHandlerContext ctx) {
    closed.accept(ctx.channel());
    ctx.fireChannelInactive();
  }

  @Override
  public void exceptionCaught(final ChannelHandlerContext ctx, final Throwable cause) {
    LOG.debug("closing our bitswap stream {}: {}", ctx.channel(), cause.toString());
    ctx.close();
  }
}
