package io.relaypinner.libp2p.pubsub;

import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.util.ReferenceCountUtil;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The end of our own gossipsub stream to a peer (write-only, libp2p/specs
 * pubsub/gossipsub-v1.0.md): discards anything the remote writes on it, and reports writability
 * changes and the stream's end so the controller can drain its queue or reopen the stream.
 */
final class OutboundStreamHandler extends ChannelInboundHandlerAdapter {
  private static final Logger LOG = LoggerFactory.getLogger(OutboundStreamHandler.class);

  private final Consumer<Channel> writable;
  private final Consumer<Channel> closed;

  OutboundStreamHandler(final Consumer<Channel> writable, final Consumer<Channel> closed) {
    this.writable = writable;
    this.closed = closed;
  }

  @Override
  public void channelRead(final ChannelHandlerContext ctx, final Object msg) {
    // The spec makes this direction write-only: whatever the remote sends is ignored.
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
    LOG.debug("closing our gossipsub stream {}: {}", ctx.channel(), cause.toString());
    ctx.close();
  }
}
