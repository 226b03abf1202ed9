package io.relaypinner.libp2p.multistream;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.socket.ChannelInputShutdownEvent;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.netty.util.concurrent.ScheduledFuture;
import io.relaypinner.common.Failures;
import io.relaypinner.libp2p.core.BadPeerException;
import io.relaypinner.libp2p.core.InternalErrorException;
import io.relaypinner.libp2p.core.NoSuchProtocolException;
import io.relaypinner.libp2p.core.ProtocolViolationException;
import java.nio.channels.ClosedChannelException;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What both sides of a multistream-select 1.0 negotiation share: message reading with limits, the
 * timeout, answer batching, and the hand-over to the selected protocol.
 *
 * <p>Built on {@link ByteToMessageDecoder} for its upgrade semantics: {@link #decode} takes one
 * message at a time, and when the handler removes itself from inside {@code decode}, Netty passes
 * the unread rest of the cumulation to the next handler before the read returns. That is how bytes
 * sent right behind the final message reach the protocol's handlers, in order and exactly once.
 */
abstract class MultistreamHandler extends ByteToMessageDecoder {
  private static final Logger LOG = LoggerFactory.getLogger(MultistreamHandler.class);

  final MultistreamConfig config;
  private final ProtocolInstaller installer;
  private final CompletableFuture<String> result = new CompletableFuture<>();
  private ScheduledFuture<?> timer;
  /** Messages to write at the end of the current read, so one read yields one write. */
  private ByteBuf queued;
  private boolean started;
  private boolean finished;
  private long bytesRead;

  MultistreamHandler(final ProtocolInstaller installer, final MultistreamConfig config) {
    this.installer = Objects.requireNonNull(installer, "installer");
    this.config = Objects.requireNonNull(config, "config");
  }

  /**
   * Completes with the selected protocol once the protocol's handlers are installed, or fails
   * with the reason the channel was closed: {@link NoSuchProtocolException} (every proposal
   * answered {@code na}), {@link ProtocolViolationException}, {@link NegotiationTimeoutException},
   * {@link ClosedChannelException} or {@link InternalErrorException}. Completion happens on the
   * event loop. Returns a dependent copy, so completing it does not affect the handler; as with
   * any dependent stage, callbacks on it see a failure wrapped in a {@code CompletionException}
   * ({@code get()} unwraps it).
   */
  public final CompletableFuture<String> result() {
    return result.copy();
  }

  /** Called once, when the channel is active and the timer runs: write what goes first. */
  abstract void onStart(ChannelHandlerContext ctx);

  /** Handles one complete message; throw {@link BadPeerException} to fail the negotiation. */
  abstract void onMessage(ChannelHandlerContext ctx, String message);

  /**
   * Called once when the negotiation ends: with {@code null} right before the protocol is
   * installed, or with the failure.
   */
  void onFinish(final ChannelHandlerContext ctx, final Throwable failure) {}

  final boolean isFinished() {
    return finished;
  }

  @Override
  public void handlerAdded(final ChannelHandlerContext ctx) {
    if (ctx.channel().isActive()) {
      start(ctx);
    }
  }

  @Override
  public void channelActive(final ChannelHandlerContext ctx) throws Exception {
    start(ctx);
    super.channelActive(ctx);
  }

  final void start(final ChannelHandlerContext ctx) {
    if (started || finished) {
      return;
    }
    started = true;
    timer = ctx.executor().schedule(
        () -> fail(ctx, new NegotiationTimeoutException(
            "multistream-select did not finish within " + config.timeout().toMillis() + " ms")),
        config.timeout().toNanos(),
        TimeUnit.NANOSECONDS);
    onStart(ctx);
  }

  @Override
  protected final void decode(
      final ChannelHandlerContext ctx, final ByteBuf in, final List<Object> out) {
    if (finished) {
      in.skipBytes(in.readableBytes());
      return;
    }
    start(ctx);
    try {
      final int before = in.readerIndex();
      final String message = MultistreamCodec.readMessage(in, config.maxMessageLength());
      if (message == null) {
        return;
      }
      bytesRead += in.readerIndex() - before;
      if (bytesRead > config.maxNegotiationBytes()) {
        throw new ProtocolViolationException("multistream-select negotiation exceeds "
            + config.maxNegotiationBytes() + " bytes");
      }
      onMessage(ctx, message);
    } catch (final BadPeerException e) {
      fail(ctx, e);
    } catch (final RuntimeException e) {
      fail(ctx, new InternalErrorException("multistream-select handler failed", e));
    }
    // After a failure nothing else in this read may be parsed; after a selection the rest belongs
    // to the protocol and Netty hands it on once decode returns.
    if (finished && !ctx.isRemoved()) {
      in.skipBytes(in.readableBytes());
    }
  }

  @Override
  public void channelRead(final ChannelHandlerContext ctx, final Object msg) throws Exception {
    try {
      super.channelRead(ctx, msg);
    } finally {
      sendQueued(ctx);
    }
  }

  /** Queues messages for the write at the end of this read (or the next {@link #sendQueued}). */
  final void queueMessages(final ChannelHandlerContext ctx, final String... messages) {
    for (final String message : messages) {
      MultistreamCodec.writeMessage(queuedBuffer(ctx), message);
    }
  }

  /** Queues the answer to {@code ls}. */
  final void queueLs(final ChannelHandlerContext ctx, final List<String> protocols) {
    MultistreamCodec.writeLs(queuedBuffer(ctx), protocols);
  }

  /** Writes and flushes the queued messages, if any, as one buffer. */
  final void sendQueued(final ChannelHandlerContext ctx) {
    final ByteBuf out = queued;
    if (out == null) {
      return;
    }
    queued = null;
    ctx.writeAndFlush(out).addListener(ChannelFutureListener.CLOSE_ON_FAILURE);
  }

  private ByteBuf queuedBuffer(final ChannelHandlerContext ctx) {
    if (queued == null) {
      queued = ctx.alloc().buffer();
    }
    return queued;
  }

  /**
   * Ends the negotiation with {@code protocol}: sends the queued answer, installs the protocol,
   * removes this handler and completes {@link #result()}. Call only from {@link #onMessage}, so the
   * removal happens inside {@code decode} and the rest of the read flows on.
   */
  final void select(final ChannelHandlerContext ctx, final String protocol) {
    // The answer leaves before the protocol's handlers can write anything of their own.
    sendQueued(ctx);
    finished = true;
    cancelTimer();
    try {
      onFinish(ctx, null);
      installer.install(ctx.channel(), protocol);
    } catch (final Exception e) {
      terminate(ctx, new InternalErrorException("installing " + protocol + " failed", e));
      ctx.close();
      return;
    }
    ctx.pipeline().remove(this);
    result.complete(protocol);
  }

  /** Ends the negotiation with {@code cause} and closes the channel (this stream only). */
  final void fail(final ChannelHandlerContext ctx, final Throwable cause) {
    if (finished) {
      return;
    }
    finished = true;
    terminate(ctx, cause);
    ctx.close();
  }

  private void terminate(final ChannelHandlerContext ctx, final Throwable cause) {
    cancelTimer();
    releaseQueued();
    onFinish(ctx, cause);
    result.completeExceptionally(cause);
    if (cause instanceof InternalErrorException || Failures.isFatal(cause)) {
      LOG.error("{} multistream-select: {}", ctx.channel(), cause.getMessage(), cause);
    } else {
      LOG.debug("{} multistream-select failed: {}", ctx.channel(), cause.toString());
    }
  }

  @Override
  public void channelInactive(final ChannelHandlerContext ctx) throws Exception {
    if (!finished) {
      finished = true;
      terminate(ctx, new ClosedChannelException());
    }
    super.channelInactive(ctx);
  }

  @Override
  public void userEventTriggered(final ChannelHandlerContext ctx, final Object evt)
      throws Exception {
    // A remote that closed its sending side can no longer finish the negotiation.
    if (evt instanceof ChannelInputShutdownEvent && !finished) {
      fail(ctx, new ProtocolViolationException(
          "remote closed its output during multistream-select"));
    }
    super.userEventTriggered(ctx, evt);
  }

  @Override
  public void exceptionCaught(final ChannelHandlerContext ctx, final Throwable cause) {
    if (finished) {
      ctx.fireExceptionCaught(cause);
      return;
    }
    // The negotiation owns the channel until it ends: nothing behind us can act on the error.
    fail(ctx, cause);
  }

  @Override
  protected void handlerRemoved0(final ChannelHandlerContext ctx) {
    if (!finished) {
      finished = true;
      terminate(ctx, new InternalErrorException("removed before multistream-select finished"));
    }
    cancelTimer();
    releaseQueued();
  }

  private void cancelTimer() {
    if (timer != null) {
      timer.cancel(false);
      timer = null;
    }
  }

  private void releaseQueued() {
    if (queued != null) {
      queued.release();
      queued = null;
    }
  }

  /** Bounded, printable rendering of remote text for exception messages. */
  static String quote(final String message) {
    final String shortened = message.length() > 64 ? message.substring(0, 64) + "..." : message;
    return '"' + shortened.replaceAll("\\p{Cntrl}", "?") + '"';
  }
}
