package io.relaypinner.libp2p.protocol.identify;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.socket.ChannelInputShutdownEvent;
import io.netty.util.ReferenceCountUtil;
import io.relaypinner.libp2p.core.InternalErrorException;
import io.relaypinner.libp2p.netty.ActivatedHandler;
import io.relaypinner.multiformats.Multiaddr;
import java.nio.channels.ClosedChannelException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Sends our one Identify message on a stream, then closes it: the identify responder and the
 * push initiator (libp2p/specs identify/README.md). The close (our FIN) follows the write at once
 * because js-libp2p 4.1.x keeps reading until FIN, up to its 5 s timeout. Anything the remote
 * sends is discarded.
 */
final class IdentifyWriteHandler extends ActivatedHandler {
  private static final Logger LOG = LoggerFactory.getLogger(IdentifyWriteHandler.class);

  private final IdentifyMessageFactory messages;
  private final Multiaddr observedAddr;
  private final Duration timeout;
  private final CompletableFuture<Void> sent;
  private final Deadline deadline = deadline(this::onTimeout);

  /**
   * @param observedAddr the connection's remote address, or null to leave the field out
   * @param sent completed when the message is written, or exceptionally when it could not be
   */
  IdentifyWriteHandler(
      final IdentifyMessageFactory messages,
      final Multiaddr observedAddr,
      final Duration timeout,
      final CompletableFuture<Void> sent) {
    this.messages = messages;
    this.observedAddr = observedAddr;
    this.timeout = timeout;
    this.sent = sent;
  }

  @Override
  protected void onActivated(final ChannelHandlerContext ctx) {
    // A remote that never reads (no window update) must not hold the stream.
    deadline.expireIn(timeout.toNanos());
    final ByteBuf frame;
    try {
      frame = IdentifyCodec.frame(ctx.alloc(), messages.build(observedAddr));
    } catch (final InternalErrorException e) {
      LOG.error("identify: cannot build our message", e);
      sent.completeExceptionally(e);
      ctx.close();
      return;
    }
    ctx.writeAndFlush(frame).addListener((ChannelFuture f) -> {
      deadline.cancel();
      if (f.isSuccess()) {
        sent.complete(null);
      } else {
        sent.completeExceptionally(f.cause());
      }
      ctx.close();
    });
  }

  private void onTimeout() {
    if (sent.completeExceptionally(new TimeoutException("identify: write not done in "
        + timeout))) {
      LOG.debug("identify write to {} timed out", ctx().channel());
    }
    ctx().close();
  }

  @Override
  public void channelRead(final ChannelHandlerContext ctx, final Object msg) {
    // The remote has nothing to say on this stream; drop it rather than buffer it.
    ReferenceCountUtil.release(msg);
  }

  @Override
  public void userEventTriggered(final ChannelHandlerContext ctx, final Object evt)
      throws Exception {
    if (evt == ChannelInputShutdownEvent.INSTANCE) {
      // The remote's FIN changes nothing: we close once our write is done.
      return;
    }
    super.userEventTriggered(ctx, evt);
  }

  @Override
  public void exceptionCaught(final ChannelHandlerContext ctx, final Throwable cause) {
    LOG.debug("identify write stream {} failed: {}", ctx.channel(), cause.toString());
    sent.completeExceptionally(cause);
    deadline.cancel();
    ctx.close();
  }

  @Override
  protected void onInactive(final ChannelHandlerContext ctx) {
    if (!sent.isDone()) {
      sent.completeExceptionally(new ClosedChannelException());
    }
  }
}
