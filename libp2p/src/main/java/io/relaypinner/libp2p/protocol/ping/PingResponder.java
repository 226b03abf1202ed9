package io.relaypinner.libp2p.protocol.ping;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.socket.ChannelInputShutdownEvent;
import io.netty.util.ReferenceCountUtil;
import io.relaypinner.common.Failures;
import io.relaypinner.libp2p.core.ProtocolViolationException;
import io.relaypinner.libp2p.netty.ActivatedHandler;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The ping responder (libp2p/specs ping/ping.md): echoes every whole 32-byte payload, however the
 * bytes are split across reads, until the remote's FIN; then finishes writing the echoes and
 * closes. Bytes that do not make a whole payload at FIN are dropped.
 *
 * <p>Limits: the stream is closed after {@link PingConfig#idleTimeout()} without a byte and after
 * {@link PingConfig#maxStreamDuration()} in all. While the stream is not writable (the remote
 * does not read its echoes) reading pauses, so a flood costs at most the write buffer.
 */
final class PingResponder extends ActivatedHandler {
  private static final Logger LOG = LoggerFactory.getLogger(PingResponder.class);

  private final long idleNanos;
  private final long maxNanos;
  /** The earlier of the idle and the total bound; pushed back on every read at no cost. */
  private final Deadline deadline = deadline(this::onDeadline);
  private ByteBuf partial;
  private ChannelFuture lastWrite;
  private long startedAt;
  private long lastActivity;
  private boolean closing;
  private boolean pausedReading;

  PingResponder(final PingConfig config) {
    this.idleNanos = config.idleTimeout().toNanos();
    this.maxNanos = config.maxStreamDuration().toNanos();
  }

  @Override
  protected void onActivated(final ChannelHandlerContext ctx) {
    startedAt = deadline.now();
    lastActivity = startedAt;
    deadline.expireAt(nextDeadline());
  }

  private long nextDeadline() {
    return Math.min(lastActivity + idleNanos, startedAt + maxNanos);
  }

  @Override
  public void channelRead(final ChannelHandlerContext ctx, final Object msg) {
    if (!(msg instanceof ByteBuf in)) {
      ReferenceCountUtil.release(msg);
      exceptionCaught(ctx, new ProtocolViolationException("ping: unexpected message"));
      return;
    }
    boolean wrote = false;
    try {
      if (closing) {
        return;
      }
      lastActivity = deadline.now();
      deadline.expireAt(nextDeadline());
      while (in.isReadable()) {
        if (partial == null && in.readableBytes() >= PingProtocol.PING_LENGTH) {
          lastWrite = ctx.write(in.readRetainedSlice(PingProtocol.PING_LENGTH));
          wrote = true;
          continue;
        }
        if (partial == null) {
          partial = ctx.alloc().buffer(PingProtocol.PING_LENGTH, PingProtocol.PING_LENGTH);
        }
        partial.writeBytes(in, Math.min(partial.writableBytes(), in.readableBytes()));
        if (!partial.isWritable()) {
          final ByteBuf whole = partial;
          partial = null;
          lastWrite = ctx.write(whole);
          wrote = true;
        }
      }
    } finally {
      in.release();
    }
    if (wrote) {
      ctx.flush();
      if (!ctx.channel().isWritable() && ctx.channel().config().isAutoRead()) {
        pausedReading = true;
        ctx.channel().config().setAutoRead(false);
      }
    }
  }

  @Override
  public void channelWritabilityChanged(final ChannelHandlerContext ctx) {
    if (pausedReading && ctx.channel().isWritable()) {
      pausedReading = false;
      ctx.channel().config().setAutoRead(true);
    }
    ctx.fireChannelWritabilityChanged();
  }

  @Override
  public void userEventTriggered(final ChannelHandlerContext ctx, final Object evt)
      throws Exception {
    if (evt == ChannelInputShutdownEvent.INSTANCE) {
      // The remote's FIN ends the loop: finish the echoes already written, then close.
      closeAfterWrites();
      return;
    }
    super.userEventTriggered(ctx, evt);
  }

  private void closeAfterWrites() {
    if (closing) {
      return;
    }
    closing = true;
    cleanUp();
    // Writes complete in order, so the last one done means every echo is out.
    if (lastWrite != null && !lastWrite.isDone()) {
      lastWrite.addListener(ChannelFutureListener.CLOSE);
    } else {
      ctx().close();
    }
  }

  private void onDeadline() {
    if (closing) {
      return;
    }
    LOG.debug("ping stream {} closed: {}", ctx().channel(),
        lastActivity + idleNanos - deadline.now() <= 0 ? "idle" : "open too long");
    closing = true;
    cleanUp();
    ctx().close();
  }

  @Override
  public void exceptionCaught(final ChannelHandlerContext ctx, final Throwable cause) {
    if (Failures.isFatal(cause)) {
      LOG.error("ping stream {} failed", ctx.channel(), cause);
    } else {
      LOG.debug("ping stream {} failed: {}", ctx.channel(), cause.toString());
    }
    closing = true;
    cleanUp();
    ctx.close();
  }

  @Override
  protected void onInactive(final ChannelHandlerContext ctx) {
    closing = true;
    cleanUp();
  }

  @Override
  protected void onRemoved(final ChannelHandlerContext ctx) {
    cleanUp();
  }

  private void cleanUp() {
    deadline.cancel();
    if (partial != null) {
      partial.release();
      partial = null;
    }
  }
}
