package io.relaypinner.libp2p.netty;

import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.util.ReferenceCountUtil;
import io.relaypinner.common.Failures;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The end of a stream we opened only to write on (gossipsub and bitswap send on their own
 * outbound stream, libp2p/specs pubsub/gossipsub-v1.0.md, ipfs/specs bitswap-protocol): discards
 * anything the remote writes on it, and reports writability changes and the stream's end so the
 * protocol's controller can drain its queue or reopen the stream. An exception closes the stream
 * (logged at DEBUG with {@code name}).
 */
public final class WriteOnlyStreamHandler extends ChannelInboundHandlerAdapter {
  private static final Logger LOG = LoggerFactory.getLogger(WriteOnlyStreamHandler.class);

  private final String name;
  private final Consumer<Channel> writable;
  private final Consumer<Channel> closed;

  /**
   * @param name the protocol, for the log line
   * @param writable called when the stream becomes writable again
   * @param closed called once the stream is inactive
   */
  public WriteOnlyStreamHandler(final String name, final Consumer<Channel> writable,
      final Consumer<Channel> closed) {
    this.name = name;
    this.writable = writable;
    this.closed = closed;
  }

  @Override
  public void channelRead(final ChannelHandlerContext ctx, final Object msg) {
    // This direction is write-only: whatever the remote sends is ignored.
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
    if (Failures.isFatal(cause)) {
      LOG.error("our {} stream {} failed", name, ctx.channel(), cause);
    } else {
      LOG.debug("closing our {} stream {}: {}", name, ctx.channel(), cause.toString());
    }
    ctx.close();
  }
}
