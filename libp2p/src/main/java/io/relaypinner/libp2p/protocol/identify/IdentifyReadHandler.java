package io.relaypinner.libp2p.protocol.identify;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.socket.ChannelInputShutdownEvent;
import io.netty.handler.codec.DecoderException;
import io.netty.util.ReferenceCountUtil;
import io.relaypinner.common.Failures;
import io.relaypinner.libp2p.core.InternalErrorException;
import io.relaypinner.libp2p.core.Libp2pException;
import io.relaypinner.libp2p.core.ProtocolViolationException;
import io.relaypinner.libp2p.netty.ActivatedHandler;
import io.relaypinner.libp2p.netty.UvarintFrameDecoder;
import io.relaypinner.multiformats.PeerId;
import java.nio.channels.ClosedChannelException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads Identify messages from a stream until the remote's FIN, merges them and completes a
 * future: the identify initiator and the push responder (libp2p/specs identify/README.md).
 *
 * <p>Like js-libp2p 4.1.x ({@code readIdentifyMessages}) it accepts up to {@link
 * IdentifyConfig#maxMessages()} length-prefixed messages, which also covers the single message of
 * js-libp2p 3.0.x; after the last allowed message, or at the timeout once at least one message
 * arrived, it stops and uses what it has. A frame over {@link IdentifyConfig#maxMessageSize()}, a
 * malformed message or a wrong public key fails the future and closes the stream.
 *
 * <p>On {@code handlerAdded} it installs its own {@link UvarintFrameDecoder} just before itself.
 */
final class IdentifyReadHandler extends ActivatedHandler {
  private static final Logger LOG = LoggerFactory.getLogger(IdentifyReadHandler.class);

  private final IdentifyConfig config;
  private final boolean requirePublicKey;
  private final IdentifyAccumulator accumulator;
  private final CompletableFuture<IdentifyResult> result;
  private final Deadline timeout = deadline(this::onTimeout);
  private boolean done;

  /**
   * @param remotePeer the connection's remote peer: a public key must be this peer's
   * @param requirePublicKey true for identify, false for a push
   */
  IdentifyReadHandler(
      final IdentifyConfig config,
      final PeerId remotePeer,
      final boolean requirePublicKey,
      final CompletableFuture<IdentifyResult> result) {
    this.config = config;
    this.requirePublicKey = requirePublicKey;
    this.accumulator = new IdentifyAccumulator(remotePeer);
    this.result = result;
  }

  @Override
  protected void onAdded(final ChannelHandlerContext ctx) {
    ctx.pipeline().addBefore(ctx.name(), null, new UvarintFrameDecoder(config.maxMessageSize()));
  }

  @Override
  protected void onActivated(final ChannelHandlerContext ctx) {
    timeout.expireIn(config.timeout().toNanos());
    if (!ctx.channel().config().isAutoRead()) {
      ctx.read();
    }
  }

  @Override
  public void channelRead(final ChannelHandlerContext ctx, final Object msg) {
    if (!(msg instanceof ByteBuf frame)) {
      ReferenceCountUtil.release(msg);
      // Only our frame decoder feeds this handler: anything else is a wiring bug.
      fail(ctx, new InternalErrorException("identify: unexpected message " + msg.getClass()));
      return;
    }
    try {
      if (done) {
        return;
      }
      accumulator.add(IdentifyCodec.parse(frame));
    } catch (final Libp2pException e) {
      fail(ctx, e);
      return;
    } finally {
      frame.release();
    }
    if (accumulator.messages() >= config.maxMessages()) {
      LOG.debug("identify from {}: {} messages, the most we read; ignoring the rest",
          ctx.channel(), accumulator.messages());
      finish(ctx);
    }
  }

  @Override
  public void channelReadComplete(final ChannelHandlerContext ctx) {
    if (!done && !ctx.channel().config().isAutoRead()) {
      ctx.read();
    }
    ctx.fireChannelReadComplete();
  }

  @Override
  public void userEventTriggered(final ChannelHandlerContext ctx, final Object evt)
      throws Exception {
    if (evt == ChannelInputShutdownEvent.INSTANCE) {
      // The remote's FIN: the normal end of its messages (the decoder has passed on whole frames).
      finish(ctx);
      return;
    }
    super.userEventTriggered(ctx, evt);
  }

  @Override
  public void exceptionCaught(final ChannelHandlerContext ctx, final Throwable cause) {
    // The frame decoder wraps its ProtocolViolationException.
    final Throwable unwrapped =
        cause instanceof DecoderException && cause.getCause() instanceof Libp2pException
            ? cause.getCause() : cause;
    fail(ctx, unwrapped);
  }

  @Override
  protected void onInactive(final ChannelHandlerContext ctx) {
    if (!done) {
      done = true;
      result.completeExceptionally(new ClosedChannelException());
    }
  }

  private void onTimeout() {
    final ChannelHandlerContext ctx = ctx();
    if (done) {
      return;
    }
    if (accumulator.messages() > 0) {
      // js-libp2p 4.1.x keeps what it read when the timeout ends the reading; so do we.
      LOG.debug("identify from {}: no FIN within {}, using {} message(s)",
          ctx.channel(), config.timeout(), accumulator.messages());
      finish(ctx);
    } else {
      fail(ctx, new TimeoutException("identify: no message within " + config.timeout()));
    }
  }

  private void finish(final ChannelHandlerContext ctx) {
    if (done) {
      return;
    }
    done = true;
    timeout.cancel();
    try {
      result.complete(accumulator.result(requirePublicKey));
    } catch (final ProtocolViolationException e) {
      LOG.debug("identify from {} failed: {}", ctx.channel(), e.getMessage());
      result.completeExceptionally(e);
    }
    // We have read all we want and never write: close rather than half-close.
    ctx.close();
  }

  private void fail(final ChannelHandlerContext ctx, final Throwable cause) {
    if (done) {
      return;
    }
    done = true;
    timeout.cancel();
    if (Failures.isFatal(cause)) {
      LOG.error("identify from {} failed", ctx.channel(), cause);
    } else {
      LOG.debug("identify from {} failed: {}", ctx.channel(), cause.toString());
    }
    result.completeExceptionally(cause);
    ctx.close();
  }
}
