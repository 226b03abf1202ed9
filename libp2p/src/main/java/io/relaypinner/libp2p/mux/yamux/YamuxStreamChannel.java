package io.relaypinner.libp2p.mux.yamux;

import io.netty.buffer.ByteBuf;
import io.netty.channel.AbstractChannel;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelMetadata;
import io.netty.channel.ChannelOutboundBuffer;
import io.netty.channel.ChannelPromise;
import io.netty.channel.EventLoop;
import io.netty.channel.socket.ChannelInputShutdownEvent;
import io.netty.channel.socket.ChannelInputShutdownReadComplete;
import io.netty.channel.socket.ChannelOutputShutdownEvent;
import io.netty.channel.socket.ChannelOutputShutdownException;
import io.netty.channel.socket.DuplexChannel;
import io.netty.util.internal.StringUtil;
import io.relaypinner.libp2p.core.InternalErrorException;
import java.net.SocketAddress;
import java.nio.channels.ClosedChannelException;
import java.util.ArrayDeque;
import java.util.Optional;
import java.util.concurrent.ScheduledFuture;

/**
 * One yamux stream ({@code /yamux/1.0.0}) as a Netty child channel of the connection: it runs on
 * the connection's event loop and has its own pipeline, in which multistream-select and then the
 * application protocol run as ordinary handlers.
 *
 * <p><b>Reading.</b> Inbound DATA payloads arrive as {@link ByteBuf}s (slices of the connection's
 * buffers; the receiver releases them), honouring {@code autoRead} and {@link #read()}. Receive
 * window is granted back to the remote only as payloads are delivered to the pipeline, so an
 * application that stops reading stops the remote at its window. A received FIN fires {@link
 * ChannelInputShutdownEvent} then {@link ChannelInputShutdownReadComplete} after the last payload,
 * without a {@code read()} request; with {@code ALLOW_HALF_CLOSURE} off (default on, see {@link
 * YamuxConfig#streamAllowHalfClosure()}) the FIN closes the channel instead.
 *
 * <p><b>Writing.</b> Only {@link ByteBuf}s. On flush each buffer becomes one DATA frame, or several
 * if it exceeds the remote's window or {@link YamuxConfig#maxFramePayload()}; writes are never
 * merged, so one write of a message that fits is one frame on the wire. What the window does not
 * allow stays queued: the channel turns unwritable above the configured high water mark and resumes
 * when a WINDOW_UPDATE arrives; a write pushing the queue above {@link
 * YamuxConfig#maxStreamWriteBuffer()} fails. A write's future completes when its bytes have been
 * handed to the connection.
 *
 * <p><b>Closing.</b> {@link #shutdownOutput()} sends FIN after everything flushed before it. {@link
 * #close()} sends FIN if not sent yet and stops delivering; the session forgets the stream once the
 * remote's FIN arrives, or resets it after the linger timeout. Unsent writes fail on close, as on
 * any Netty channel, and if flushed data was still waiting for window the close sends RST instead
 * of FIN, so the remote never takes a truncated message for a complete one: to finish writing
 * first, close from the last write's listener or use {@code shutdownOutput}. Once FIN went both
 * ways the channel closes itself. {@link #reset()} sends RST. A received RST fires {@link
 * YamuxStreamResetEvent} and closes the channel; writes then fail with {@link
 * YamuxStreamResetException}. {@link #termination()} says how the stream ended.
 */
public final class YamuxStreamChannel extends AbstractChannel implements DuplexChannel {
  private static final ChannelMetadata METADATA = new ChannelMetadata(false);

  private final YamuxHandler session;
  private final int streamId;
  private final boolean outbound;
  private final YamuxStreamChannelConfig config;
  private final YamuxStreamFlow flow;
  private final ArrayDeque<ByteBuf> inbound = new ArrayDeque<>(4);
  // Kept because Netty detaches it from the channel before doClose() runs.
  private final ChannelOutboundBuffer outboundQueue;

  private volatile boolean open = true;
  private volatile YamuxStreamTermination termination;
  private volatile boolean inputShutdown;
  private volatile boolean outputShutdown;

  // Send side (its window is in flow); everything below is touched only on the event loop.
  boolean finSent;
  boolean awaitingParent;
  private ChannelPromise finPromise;

  // Receive side (its window and counters are in flow).
  boolean remoteFin;
  private boolean remoteFinDelivered;
  private boolean readPending;
  private boolean readCompletePending;
  boolean readCompleteQueued;
  private boolean draining;

  // Session bookkeeping.
  boolean acked;
  boolean forgotten;
  ScheduledFuture<?> linger;

  YamuxStreamChannel(
      final YamuxHandler session,
      final Channel connection,
      final int streamId,
      final boolean outbound,
      final YamuxConfig yamuxConfig,
      final YamuxStreamFlow flow) {
    super(connection, new YamuxStreamChannelId(connection.id(), streamId));
    this.session = session;
    this.streamId = streamId;
    this.outbound = outbound;
    this.config = new YamuxStreamChannelConfig(this, yamuxConfig);
    this.flow = flow;
    this.outboundQueue = unsafe().outboundBuffer();
  }

  /**
   * The yamux stream id: odd if the connection's dialer opened the stream, even for its listener.
   * An unsigned 32-bit value; use {@link Integer#toUnsignedLong} above 2^31.
   */
  public int streamId() {
    return streamId;
  }

  /** Whether we opened this stream (otherwise the remote did). */
  public boolean isOutbound() {
    return outbound;
  }

  /** The session this stream belongs to, e.g. to open sibling streams. */
  public YamuxHandler session() {
    return session;
  }

  /** How the stream ended; empty while it is open. */
  public Optional<YamuxStreamTermination> termination() {
    return Optional.ofNullable(termination);
  }

  /**
   * Resets the stream: sends RST (unless the session already forgot it), discards buffered input,
   * fails pending writes with {@link YamuxStreamResetException} and closes the channel. Callable
   * from any thread; returns the close future.
   */
  public ChannelFuture reset() {
    if (!isRegistered() && session.inEventLoop()) {
      // Registration failed: the session resets the stream on its own event loop.
      reset0();
      return closeFuture();
    }
    final EventLoop loop = eventLoop();
    if (loop.inEventLoop()) {
      reset0();
    } else {
      loop.execute(this::reset0);
    }
    return closeFuture();
  }

  @Override
  public YamuxStreamChannelConfig config() {
    return config;
  }

  @Override
  public boolean isOpen() {
    return open;
  }

  @Override
  public boolean isActive() {
    return open;
  }

  @Override
  public ChannelMetadata metadata() {
    return METADATA;
  }

  @Override
  public boolean isInputShutdown() {
    return inputShutdown;
  }

  @Override
  public ChannelFuture shutdownInput() {
    return shutdownInput(newPromise());
  }

  /**
   * Stops reading: buffered and later payloads are dropped (and their window still granted, so the
   * remote can finish and send FIN). Yamux has no frame for this; the remote is not told.
   */
  @Override
  public ChannelFuture shutdownInput(final ChannelPromise promise) {
    final EventLoop loop = eventLoop();
    if (loop.inEventLoop()) {
      shutdownInput0(promise);
    } else {
      loop.execute(() -> shutdownInput0(promise));
    }
    return promise;
  }

  @Override
  public boolean isOutputShutdown() {
    return outputShutdown;
  }

  @Override
  public ChannelFuture shutdownOutput() {
    return shutdownOutput(newPromise());
  }

  /**
   * Half-closes: sends FIN once everything written and flushed before this call has been sent
   * (which may wait for window). Later writes fail. The promise completes when FIN is sent.
   */
  @Override
  public ChannelFuture shutdownOutput(final ChannelPromise promise) {
    final EventLoop loop = eventLoop();
    if (loop.inEventLoop()) {
      shutdownOutput0(promise);
    } else {
      loop.execute(() -> shutdownOutput0(promise));
    }
    return promise;
  }

  @Override
  public boolean isShutdown() {
    return inputShutdown && outputShutdown;
  }

  @Override
  public ChannelFuture shutdown() {
    return shutdown(newPromise());
  }

  /** {@link #shutdownInput()} and {@link #shutdownOutput(ChannelPromise)}. */
  @Override
  public ChannelFuture shutdown(final ChannelPromise promise) {
    shutdownInput(voidPromise());
    return shutdownOutput(promise);
  }

  @Override
  protected AbstractUnsafe newUnsafe() {
    return new StreamUnsafe();
  }

  @Override
  protected boolean isCompatible(final EventLoop loop) {
    // A stream's state is the session's state: both must live on the connection's event loop.
    return loop == parent().eventLoop();
  }

  @Override
  protected SocketAddress localAddress0() {
    return parent().localAddress();
  }

  @Override
  protected SocketAddress remoteAddress0() {
    return parent().remoteAddress();
  }

  @Override
  protected void doBind(final SocketAddress localAddress) {
    throw new UnsupportedOperationException("a yamux stream cannot be bound");
  }

  @Override
  protected void doDisconnect() {
    throw new UnsupportedOperationException("a yamux stream cannot be disconnected");
  }

  @Override
  protected void doClose() {
    open = false;
    readPending = false;
    if (termination == null) {
      termination = YamuxStreamTermination.CLOSED;
    }
    discardInbound();
    final ChannelPromise pending = finPromise;
    finPromise = null;
    if (pending != null) {
      pending.tryFailure(new ClosedChannelException());
    }
    if (!outboundQueue.isEmpty()) {
      // Flushed data the window held back is dropped now: a FIN would pass the truncated
      // message off as complete, so the remote gets RST instead.
      session.resetStream(this, YamuxStreamTermination.LOCAL_RESET);
    } else {
      session.onStreamClosed(this);
    }
  }

  @Override
  protected void doShutdownOutput() {
    // Reached only if a write failed unexpectedly: end our side as cleanly as still possible.
    outputShutdown = true;
    sendFin();
  }

  @Override
  protected void doBeginRead() {
    if (!open) {
      return;
    }
    readPending = true;
    drainInbound();
  }

  @Override
  protected void doWrite(final ChannelOutboundBuffer in) {
    final int maxFrame = session.config().maxFramePayload();
    boolean wrote = false;
    while (open) {
      final Object msg = in.current();
      if (msg == null) {
        break;
      }
      final ByteBuf buf = (ByteBuf) msg;
      final int readable = buf.readableBytes();
      if (readable == 0) {
        in.remove();
        continue;
      }
      if (!flow.canSend() || !session.reserveConnectionCapacity(this)) {
        // Resumed by a WINDOW_UPDATE or by the connection turning writable again.
        break;
      }
      final int n = flow.takeSendWindow(Math.min(readable, maxFrame));
      // The frame goes out before removeBytes: that completes the write's promise, and a
      // listener that closes the stream must find its data ahead of the FIN.
      session.writeData(this, buf.retainedSlice(buf.readerIndex(), n));
      wrote = true;
      in.removeBytes(n);
    }
    if (open && outputShutdown && !finSent && in.isEmpty()) {
      sendFin();
    } else if (wrote) {
      session.flushConnection();
    }
  }

  @Override
  protected Object filterOutboundMessage(final Object msg) throws ChannelOutputShutdownException {
    if (!(msg instanceof ByteBuf)) {
      throw new UnsupportedOperationException(
          "unsupported message type: " + StringUtil.simpleClassName(msg) + " (expected ByteBuf)");
    }
    if (outputShutdown) {
      throw new ChannelOutputShutdownException("yamux stream output is shut down (FIN)");
    }
    final ChannelOutboundBuffer queue = unsafe().outboundBuffer();
    final long limit = session.config().maxStreamWriteBuffer();
    if (queue != null && queue.totalPendingWriteBytes() + ((ByteBuf) msg).readableBytes() > limit) {
      // The application ignored isWritable(); failing the write keeps memory bounded.
      throw new InternalErrorException(
          "yamux stream write queue would exceed " + limit + " bytes; respect isWritable()");
    }
    return msg;
  }

  // ---- called by the session (event loop only) ----

  /** This stream's windows, shared with the session: it feeds frames, we report consumption. */
  YamuxStreamFlow flow() {
    return flow;
  }

  /** A DATA payload slice for this stream; takes ownership. */
  void onData(final ByteBuf payload) {
    if (!open || inputShutdown) {
      flow.consumed(payload.readableBytes());
      payload.release();
      session.onConsumed(this);
      return;
    }
    inbound.add(payload);
    if (readPending) {
      drainInbound();
    }
  }

  /** The remote's FIN arrived (after all its data). */
  void onRemoteFin() {
    remoteFin = true;
    if (open && isRegistered() && !draining && inbound.isEmpty()) {
      deliverRemoteFin();
    }
  }

  /** The remote reset the stream; the session already forgot it. */
  void onRemoteReset() {
    discardInbound();
    if (open) {
      pipeline().fireUserEventTriggered(YamuxStreamResetEvent.INSTANCE);
    }
    if (open) {
      ((StreamUnsafe) unsafe())
          .closeWithCause(new YamuxStreamResetException("stream reset by the remote", true));
    }
  }

  /** The connection closed; the session already forgot the stream. */
  void onSessionClosed() {
    discardInbound();
    if (open) {
      ((StreamUnsafe) unsafe()).closeWithCause(new ClosedChannelException());
    }
  }

  /** The window grew; resume writing what it held back. */
  void resumeWrite() {
    ((StreamUnsafe) unsafe()).resumeWrite();
  }

  void setTermination(final YamuxStreamTermination value) {
    termination = value;
  }

  void setTerminationIfOpen(final YamuxStreamTermination value) {
    if (termination == null) {
      termination = value;
    }
  }

  /** Registration done: a FIN that arrived meanwhile can now reach the pipeline. */
  void onRegistered() {
    if (open && remoteFin && !remoteFinDelivered && !draining && inbound.isEmpty()) {
      deliverRemoteFin();
    }
  }

  /** The connection's read batch ended: deliver the deferred {@code channelReadComplete}. */
  void onConnectionReadComplete() {
    readCompleteQueued = false;
    fireReadCompleteIfPending();
  }

  void clearReadPending() {
    readPending = false;
  }

  // ---- internals ----

  private void reset0() {
    session.resetStream(this, YamuxStreamTermination.LOCAL_RESET);
    discardInbound();
    if (open) {
      ((StreamUnsafe) unsafe())
          .closeWithCause(new YamuxStreamResetException("stream reset locally", false));
    }
  }

  private void shutdownInput0(final ChannelPromise promise) {
    if (!inputShutdown) {
      inputShutdown = true;
      discardInbound();
    }
    promise.trySuccess();
  }

  private void shutdownOutput0(final ChannelPromise promise) {
    if (!open) {
      promise.tryFailure(new ClosedChannelException());
      return;
    }
    if (finSent) {
      promise.trySuccess();
      return;
    }
    if (outputShutdown) {
      final ChannelPromise first = finPromise;
      if (first == null) {
        promise.trySuccess();
      } else {
        first.addListener(
            f -> {
              if (f.isSuccess()) {
                promise.trySuccess();
              } else {
                promise.tryFailure(f.cause());
              }
            });
      }
      return;
    }
    outputShutdown = true;
    finPromise = promise;
    unsafe().flush();
    final ChannelOutboundBuffer queue = unsafe().outboundBuffer();
    if (open && !finSent && (queue == null || queue.isEmpty())) {
      sendFin();
    }
  }

  private void sendFin() {
    if (finSent || !open) {
      return;
    }
    finSent = true;
    outputShutdown = true;
    session.writeFin(this);
    pipeline().fireUserEventTriggered(ChannelOutputShutdownEvent.INSTANCE);
    final ChannelPromise pending = finPromise;
    finPromise = null;
    if (pending != null) {
      pending.trySuccess();
    }
    closeIfBothDone();
  }

  private void drainInbound() {
    if (draining) {
      // Re-entered from a handler's read(): the outer loop sees readPending and continues.
      return;
    }
    draining = true;
    try {
      ByteBuf buf;
      while (readPending && open && (buf = inbound.poll()) != null) {
        flow.consumed(buf.readableBytes());
        if (!config.isAutoRead()) {
          readPending = false;
        }
        readCompletePending = true;
        pipeline().fireChannelRead(buf);
        session.onConsumed(this);
      }
    } finally {
      draining = false;
    }
    if (readCompletePending) {
      if (session.inConnectionRead()) {
        session.deferReadComplete(this);
      } else {
        fireReadCompleteIfPending();
      }
    }
    if (open && remoteFin && !remoteFinDelivered && inbound.isEmpty()) {
      deliverRemoteFin();
    }
  }

  private void fireReadCompleteIfPending() {
    if (readCompletePending) {
      readCompletePending = false;
      if (open) {
        pipeline().fireChannelReadComplete();
      }
    }
  }

  private void deliverRemoteFin() {
    remoteFinDelivered = true;
    // Netty order: the reads' channelReadComplete comes before the input shutdown events.
    fireReadCompleteIfPending();
    if (!inputShutdown) {
      inputShutdown = true;
      if (!config.isAllowHalfClosure()) {
        close();
        return;
      }
      pipeline().fireUserEventTriggered(ChannelInputShutdownEvent.INSTANCE);
      pipeline().fireUserEventTriggered(ChannelInputShutdownReadComplete.INSTANCE);
    }
    closeIfBothDone();
  }

  private void closeIfBothDone() {
    if (open && finSent && remoteFinDelivered) {
      close();
    }
  }

  private void discardInbound() {
    boolean discarded = false;
    ByteBuf buf;
    while ((buf = inbound.poll()) != null) {
      flow.consumed(buf.readableBytes());
      buf.release();
      discarded = true;
    }
    if (discarded) {
      session.onConsumed(this);
    }
  }

  private final class StreamUnsafe extends AbstractUnsafe {
    @Override
    public void connect(
        final SocketAddress remoteAddress,
        final SocketAddress localAddress,
        final ChannelPromise promise) {
      if (promise.setUncancellable()) {
        promise.setFailure(new UnsupportedOperationException("a yamux stream cannot connect"));
      }
    }

    void resumeWrite() {
      flush0();
    }

    void closeWithCause(final Throwable cause) {
      final ClosedChannelException closed = new ClosedChannelException();
      closed.initCause(cause);
      close(voidPromise(), cause, closed);
    }
  }
}
