package io.relaypinner.libp2p.mux.yamux;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerAdapter;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.channel.DefaultChannelPromise;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.collection.IntObjectHashMap;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.ImmediateEventExecutor;
import io.netty.util.concurrent.Promise;
import io.netty.util.internal.StringUtil;
import io.relaypinner.libp2p.core.BadPeerException;
import io.relaypinner.libp2p.core.InternalErrorException;
import io.relaypinner.libp2p.core.ProtocolViolationException;
import java.io.IOException;
import java.nio.channels.ClosedChannelException;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The yamux session ({@code /yamux/1.0.0}: libp2p {@code yamux/README.md}, a verbatim copy of
 * hashicorp yamux {@code spec.md}) on one secured connection. Install it at the tail of the
 * connection pipeline once the muxer is agreed; it puts its {@link YamuxFrameCodec} in front of
 * itself. Each stream is a {@link YamuxStreamChannel}: a child channel on the connection's event
 * loop, with its own pipeline.
 *
 * <p><b>Roles.</b> The connection's dialer uses odd stream ids from 1, its listener even ids from
 * 2. A SYN carrying an id of our own parity is a protocol violation (JS: "Both endpoints are
 * clients").
 *
 * <p><b>Streams.</b> {@link #newStream} sends {@code WINDOW_UPDATE(SYN)} at once, then registers
 * the stream with the given initializer. A remote SYN (on DATA or WINDOW_UPDATE, possibly with
 * data) registers a stream with the inbound initializer and is acknowledged at once with {@code
 * WINDOW_UPDATE(ACK)}; beyond {@link YamuxConfig#maxInboundStreams()} (or after we sent GO_AWAY) it
 * is answered with RST and the connection survives. Frames for unknown streams are ignored, as
 * js-libp2p does. FIN and RST are honoured on both DATA and WINDOW_UPDATE; we send them on a
 * zero-length WINDOW_UPDATE, as js-libp2p does.
 *
 * <p><b>Flow control</b> (the windows and their rules are each stream's {@link YamuxStreamFlow};
 * the session feeds it frames and sends the updates it asks for). Every stream starts with the
 * spec's 256 KiB window each way; a larger {@link YamuxConfig#initialStreamWindow()} is announced
 * in the SYN/ACK. We never send beyond the remote's window. We grant window only for bytes
 * delivered to the stream's pipeline, in one WINDOW_UPDATE once half the window is used; the window
 * doubles (up to {@link YamuxConfig#maxStreamWindow()}) when that happened within four round trips,
 * as js-libp2p tunes its own. A DATA frame larger than the stream's remaining window, or a
 * WINDOW_UPDATE taking the send window past 2^32-1, is a protocol violation: GO_AWAY(protocol
 * error), then close.
 *
 * <p><b>Ping and GO_AWAY.</b> A PING with SYN is echoed with ACK and the same value; answers to
 * pings we did not send are ignored. With keep-alive on, we ping at once (for the RTT) and every
 * interval, and close the connection if an answer takes longer than the timeout. Closing the
 * connection sends GO_AWAY(normal) first; after a received GO_AWAY no stream can be opened, and a
 * GO_AWAY with an error code closes the connection.
 *
 * <p>All state lives on the connection's event loop; {@link #newStream}, {@link #ping}, {@link
 * #goAway} and {@link #stats} may be called from any thread.
 */
public final class YamuxHandler extends ChannelDuplexHandler {
  private static final Logger LOG = LoggerFactory.getLogger(YamuxHandler.class);

  /** A payload shorter than this is copied next to its header instead of composed with it. */
  private static final int COPY_PAYLOAD_BELOW = 512;

  private final YamuxConfig config;
  private final boolean dialer;
  private final ChannelHandler inboundStreamInitializer;
  private final YamuxSessionListener listener;
  private final IntObjectHashMap<YamuxStreamChannel> streams = new IntObjectHashMap<>();
  private final ArrayDeque<YamuxStreamChannel> writeWaiters = new ArrayDeque<>();
  private final List<YamuxStreamChannel> readCompleteWaiters = new ArrayList<>();

  private volatile ChannelHandlerContext ctx;
  private YamuxFrameCodec codec;
  private long nextStreamId;
  private boolean started;
  private boolean closed;
  private boolean goAwaySent;
  private volatile boolean goAwayReceived;
  private boolean inRead;
  private boolean flushPending;
  private boolean resumingWriters;

  // The DATA frame whose payload is arriving; a null stream means the payload is dropped.
  private YamuxStreamChannel dataStream;
  private long dataRemaining;
  private int dataFlags;

  private long nextPingOpaque;
  private boolean pingOutstanding;
  private long pingOpaque;
  private long pingSentNanos;
  private Promise<Duration> pingPromise;
  private ScheduledFuture<?> pingTimeout;
  private ScheduledFuture<?> keepAlive;
  private int pendingPingReplies;
  private final ChannelFutureListener pingReplyWritten = f -> pendingPingReplies--;
  private volatile long rttNanos = -1;

  // Written on the event loop only, volatile for stats() from other threads.
  private volatile int activeInbound;
  private volatile int activeOutbound;
  private volatile long inboundOpened;
  private volatile long outboundOpened;
  private volatile long inboundRejected;
  private volatile long resetByRemote;
  private int unackedOutbound;

  /**
   * @param config limits and windows
   * @param dialer whether we dialed the connection (odd stream ids) or accepted it (even ids)
   * @param inboundStreamInitializer added to the pipeline of every stream the remote opens; it is
   *     shared, so it must be {@code @Sharable} (typically a {@code ChannelInitializer<Channel>})
   * @param listener observes streams and session failures
   */
  public YamuxHandler(
      final YamuxConfig config,
      final boolean dialer,
      final ChannelHandler inboundStreamInitializer,
      final YamuxSessionListener listener) {
    this.config = Objects.requireNonNull(config, "config");
    this.dialer = dialer;
    this.inboundStreamInitializer =
        Objects.requireNonNull(inboundStreamInitializer, "inboundStreamInitializer");
    this.listener = Objects.requireNonNull(listener, "listener");
    if (inboundStreamInitializer instanceof ChannelHandlerAdapter adapter
        && !adapter.isSharable()) {
      throw new IllegalArgumentException(
          "inboundStreamInitializer runs for every inbound stream and must be @Sharable: "
              + StringUtil.simpleClassName(inboundStreamInitializer));
    }
  }

  /** A session for the side that dialed the connection (odd stream ids). */
  public static YamuxHandler forDialer(
      final YamuxConfig config,
      final ChannelHandler inboundStreamInitializer,
      final YamuxSessionListener listener) {
    return new YamuxHandler(config, true, inboundStreamInitializer, listener);
  }

  /** A session for the side that accepted the connection (even stream ids). */
  public static YamuxHandler forListener(
      final YamuxConfig config,
      final ChannelHandler inboundStreamInitializer,
      final YamuxSessionListener listener) {
    return new YamuxHandler(config, false, inboundStreamInitializer, listener);
  }

  /** This session's limits. */
  public YamuxConfig config() {
    return config;
  }

  /** Whether we dialed the connection (odd stream ids). */
  public boolean isDialer() {
    return dialer;
  }

  /**
   * Opens a stream: sends its SYN, then registers a {@link YamuxStreamChannel} with {@code
   * initializer} in its pipeline (which may write at once: a stream may carry data before the
   * remote's ACK). Fails with {@link YamuxStreamOpenException} when the connection is closed, a
   * GO_AWAY was sent or received, or a limit is reached. Callable from any thread; the future
   * completes on the connection's event loop.
   */
  public Future<YamuxStreamChannel> newStream(final ChannelHandler initializer) {
    Objects.requireNonNull(initializer, "initializer");
    final ChannelHandlerContext c = ctx;
    if (c == null) {
      return ImmediateEventExecutor.INSTANCE.newFailedFuture(
          new YamuxStreamOpenException(
              YamuxStreamOpenException.Reason.SESSION_CLOSED, "yamux session not in a pipeline"));
    }
    final EventExecutor loop = c.executor();
    final Promise<YamuxStreamChannel> promise = loop.newPromise();
    if (loop.inEventLoop()) {
      openStream(initializer, promise);
    } else {
      try {
        loop.execute(() -> openStream(initializer, promise));
      } catch (final RejectedExecutionException e) {
        promise.tryFailure(
            new YamuxStreamOpenException(
                YamuxStreamOpenException.Reason.SESSION_CLOSED, "event loop shut down", e));
      }
    }
    return promise;
  }

  /**
   * Sends a PING and completes with the round-trip time when the answer arrives, or fails when the
   * connection closes first (it is closed when no answer comes within the keep-alive timeout).
   * Calls while a ping is outstanding share its answer. Callable from any thread.
   */
  public Future<Duration> ping() {
    final ChannelHandlerContext c = ctx;
    if (c == null) {
      return ImmediateEventExecutor.INSTANCE.newFailedFuture(new ClosedChannelException());
    }
    final Promise<Duration> result = c.executor().newPromise();
    runOnLoop(
        c,
        () -> {
          if (closed || !c.channel().isActive()) {
            result.tryFailure(new ClosedChannelException());
            return;
          }
          if (!pingOutstanding) {
            sendPing();
          }
          pingPromise.addListener(
              (Future<Duration> f) -> {
                if (f.isSuccess()) {
                  result.trySuccess(f.getNow());
                } else {
                  result.tryFailure(f.cause());
                }
              });
        },
        result);
    return result;
  }

  /**
   * Sends GO_AWAY(normal) unless one was sent: the remote may open no more streams (we reset any it
   * still opens) and we open none; open streams carry on. js-libp2p treats any GO_AWAY as the end
   * of the connection (yamux 7.x resets all streams), so this is for shutting down. Callable from
   * any thread.
   */
  public Future<Void> goAway() {
    final ChannelHandlerContext c = ctx;
    if (c == null) {
      return ImmediateEventExecutor.INSTANCE.newFailedFuture(new ClosedChannelException());
    }
    final Promise<Void> result = c.executor().newPromise();
    runOnLoop(
        c,
        () -> {
          if (!goAwaySent && !closed && c.channel().isActive()) {
            goAwaySent = true;
            writeControl(YamuxFrameType.GO_AWAY, 0, 0, YamuxFrame.GO_AWAY_NORMAL);
            flushConnection();
          }
          result.trySuccess(null);
        },
        result);
    return result;
  }

  /** Stream counts and the last RTT; callable from any thread. */
  public YamuxStats stats() {
    return new YamuxStats(
        activeInbound,
        activeOutbound,
        inboundOpened,
        outboundOpened,
        inboundRejected,
        resetByRemote,
        rttNanos,
        goAwayReceived);
  }

  // ---- Netty lifecycle ----

  @Override
  public void handlerAdded(final ChannelHandlerContext ctx) {
    this.ctx = ctx;
    this.nextStreamId = dialer ? 1 : 2;
    this.codec = new YamuxFrameCodec(config.maxStreamWindow());
    ctx.pipeline().addBefore(ctx.name(), ctx.name() + "-codec", codec);
    if (ctx.channel().isActive()) {
      start();
    }
  }

  @Override
  public void handlerRemoved(final ChannelHandlerContext ctx) {
    // While the pipeline is torn down on close Netty removes the codec itself.
    if (ctx.channel().isOpen() && ctx.pipeline().context(codec) != null) {
      ctx.pipeline().remove(codec);
    }
    teardown();
  }

  @Override
  public void channelActive(final ChannelHandlerContext ctx) {
    start();
    ctx.fireChannelActive();
  }

  @Override
  public void channelInactive(final ChannelHandlerContext ctx) {
    teardown();
    ctx.fireChannelInactive();
  }

  @Override
  public void channelRead(final ChannelHandlerContext ctx, final Object msg) {
    inRead = true;
    if (msg instanceof YamuxFrame frame) {
      onFrame(frame);
    } else if (msg instanceof ByteBuf payload) {
      onPayload(payload);
    } else {
      ReferenceCountUtil.release(msg);
      throw new InternalErrorException(
          "yamux session got " + StringUtil.simpleClassName(msg) + "; is the codec missing?");
    }
  }

  @Override
  public void channelReadComplete(final ChannelHandlerContext ctx) {
    // Deliver the deferred channelReadComplete of every stream that got data in this batch. The
    // batch lasts until they are done, so whatever they write goes out in one flush below.
    for (int i = 0; i < readCompleteWaiters.size(); i++) {
      readCompleteWaiters.get(i).onConnectionReadComplete();
    }
    readCompleteWaiters.clear();
    inRead = false;
    if (flushPending) {
      flushPending = false;
      ctx.flush();
    }
    ctx.fireChannelReadComplete();
  }

  @Override
  public void channelWritabilityChanged(final ChannelHandlerContext ctx) {
    if (ctx.channel().isWritable()) {
      resumeWriters();
    }
    ctx.fireChannelWritabilityChanged();
  }

  @Override
  public void exceptionCaught(final ChannelHandlerContext ctx, final Throwable cause) {
    fail(cause);
  }

  @Override
  public void close(final ChannelHandlerContext ctx, final ChannelPromise promise) {
    if (!closed) {
      closeSession(YamuxFrame.GO_AWAY_NORMAL);
    }
    ctx.close(promise);
  }

  // ---- inbound frames ----

  private void onFrame(final YamuxFrame frame) {
    if (closed) {
      if (frame.type() == YamuxFrameType.DATA) {
        dataStream = null;
        dataRemaining = frame.length();
      }
      return;
    }
    switch (frame.type()) {
      case DATA -> onDataHeader(frame);
      case WINDOW_UPDATE -> onWindowUpdate(frame);
      case PING -> onPing(frame);
      case GO_AWAY -> onGoAway(frame);
      default -> throw new InternalErrorException("unhandled frame type " + frame.type());
    }
  }

  private void onDataHeader(final YamuxFrame frame) {
    if (frame.streamId() == 0) {
      throw new ProtocolViolationException("yamux DATA frame on stream 0");
    }
    final long length = frame.length();
    YamuxStreamChannel stream = streamFor(frame);
    if (stream != null) {
      stream.flow().receiveData(length);
      onAck(stream, frame.flags());
      if (stream.remoteFin && length > 0) {
        LOG.debug("yamux: data after FIN on stream {}, resetting it", stream.id());
        stream.reset();
        stream = null;
      }
    }
    dataStream = stream;
    dataRemaining = length;
    dataFlags = frame.flags();
    if (length == 0) {
      endDataFrame();
    }
  }

  private void onPayload(final ByteBuf payload) {
    final int n = payload.readableBytes();
    if (closed) {
      payload.release();
      return;
    }
    if (n > dataRemaining) {
      payload.release();
      throw new InternalErrorException("yamux payload beyond the announced frame length");
    }
    dataRemaining -= n;
    final YamuxStreamChannel stream = dataStream;
    if (stream != null && !stream.forgotten) {
      stream.onData(payload);
    } else {
      payload.release();
    }
    if (dataRemaining == 0) {
      endDataFrame();
    }
  }

  private void endDataFrame() {
    final YamuxStreamChannel stream = dataStream;
    dataStream = null;
    if (stream != null && !stream.forgotten) {
      applyCloseFlags(stream, dataFlags);
    }
  }

  private void onWindowUpdate(final YamuxFrame frame) {
    if (frame.streamId() == 0) {
      throw new ProtocolViolationException("yamux WINDOW_UPDATE on stream 0");
    }
    final YamuxStreamChannel stream = streamFor(frame);
    if (stream == null) {
      return;
    }
    onAck(stream, frame.flags());
    if (frame.length() > 0) {
      stream.flow().incrementSendWindow(frame.length());
      stream.resumeWrite();
    }
    if (!stream.forgotten) {
      applyCloseFlags(stream, frame.flags());
    }
  }

  private void onPing(final YamuxFrame frame) {
    if (frame.streamId() != 0) {
      throw new ProtocolViolationException(
          "yamux PING on stream " + Integer.toUnsignedString(frame.streamId()));
    }
    if (frame.hasFlag(YamuxFrame.FLAG_SYN)) {
      if (pendingPingReplies >= config.maxPendingPingReplies()) {
        // Answers may only be stuck in our own batch: push them out before judging the peer.
        flushPending = false;
        ctx.flush();
        if (pendingPingReplies >= config.maxPendingPingReplies()) {
          throw new ProtocolViolationException(
              "yamux peer sends pings but leaves " + pendingPingReplies + " answers unread");
        }
      }
      if (ctx.channel().isActive()) {
        pendingPingReplies++;
        ctx.write(header(YamuxFrameType.PING, YamuxFrame.FLAG_ACK, 0, frame.length()))
            .addListener(pingReplyWritten);
        flushConnection();
      }
    } else if (frame.hasFlag(YamuxFrame.FLAG_ACK)) {
      if (pingOutstanding && frame.length() == pingOpaque) {
        final long rtt = nanoTime() - pingSentNanos;
        rttNanos = rtt;
        pingOutstanding = false;
        cancel(pingTimeout);
        pingTimeout = null;
        final Promise<Duration> p = pingPromise;
        pingPromise = null;
        p.trySuccess(Duration.ofNanos(rtt));
      } else {
        LOG.trace("yamux: ignoring an answer to a ping we did not send");
      }
    }
  }

  private void onGoAway(final YamuxFrame frame) {
    if (frame.streamId() != 0) {
      throw new ProtocolViolationException(
          "yamux GO_AWAY on stream " + Integer.toUnsignedString(frame.streamId()));
    }
    goAwayReceived = true;
    final long code = frame.length();
    notifyListener(() -> listener.goAwayReceived(code));
    if (code != YamuxFrame.GO_AWAY_NORMAL) {
      LOG.debug("yamux: remote sent GO_AWAY with error code {}, closing", code);
      terminate(-1);
    }
  }

  /** The frame's stream, creating it for a SYN; null for an unknown or refused stream. */
  private YamuxStreamChannel streamFor(final YamuxFrame frame) {
    final int id = frame.streamId();
    if (!frame.hasFlag(YamuxFrame.FLAG_SYN)) {
      return streams.get(id);
    }
    if ((id & 1) == (dialer ? 1 : 0)) {
      throw new ProtocolViolationException(
          "yamux SYN for stream "
              + Integer.toUnsignedString(id)
              + " which has our parity: both endpoints act as "
              + (dialer ? "dialer" : "listener"));
    }
    final YamuxStreamChannel existing = streams.get(id);
    // A repeated SYN on a stream the remote opened is harmless; js-libp2p ignores it too.
    return existing != null ? existing : acceptInbound(id);
  }

  private YamuxStreamChannel acceptInbound(final int id) {
    if (goAwaySent) {
      sendRst(id);
      return null;
    }
    if (activeInbound >= config.maxInboundStreams()) {
      inboundRejected++;
      sendRst(id);
      LOG.debug(
          "yamux: inbound stream limit {} reached, reset stream {}",
          config.maxInboundStreams(),
          Integer.toUnsignedString(id));
      notifyListener(() -> listener.inboundStreamRejected(Integer.toUnsignedLong(id)));
      return null;
    }
    final YamuxStreamChannel stream =
        new YamuxStreamChannel(this, ctx.channel(), id, false, config, newFlow(id));
    streams.put(id, stream);
    activeInbound++;
    inboundOpened++;
    // ACK at once: it drains the remote's ACK backlog and announces any window beyond 256 KiB.
    writeControl(
        YamuxFrameType.WINDOW_UPDATE,
        YamuxFrame.FLAG_ACK,
        id,
        stream.flow().initialWindowIncrement());
    flushConnection();
    notifyListener(() -> listener.streamOpened(stream));
    register(stream, inboundStreamInitializer)
        .addListener(
            f -> {
              if (f.isSuccess()) {
                stream.onRegistered();
              } else {
                LOG.warn("yamux: inbound stream {} failed to register", stream.id(), f.cause());
                stream.reset();
              }
            });
    return stream.forgotten ? null : stream;
  }

  private void onAck(final YamuxStreamChannel stream, final int flags) {
    if ((flags & YamuxFrame.FLAG_ACK) != 0 && stream.isOutbound() && !stream.acked) {
      stream.acked = true;
      unackedOutbound--;
    }
  }

  private void applyCloseFlags(final YamuxStreamChannel stream, final int flags) {
    if ((flags & YamuxFrame.FLAG_RST) != 0) {
      resetByRemote++;
      forget(stream, YamuxStreamTermination.REMOTE_RESET, true);
      stream.onRemoteReset();
      return;
    }
    if ((flags & YamuxFrame.FLAG_FIN) != 0 && !stream.remoteFin) {
      if (stream.isOpen()) {
        stream.onRemoteFin();
      } else {
        stream.remoteFin = true;
      }
      if (!stream.isOpen() && !stream.forgotten) {
        // We had closed it already and only waited for this FIN.
        forget(stream, YamuxStreamTermination.CLOSED, false);
      }
    }
  }

  // ---- outbound streams ----

  private void openStream(
      final ChannelHandler initializer, final Promise<YamuxStreamChannel> promise) {
    final YamuxStreamOpenException refusal = refuseOutbound();
    if (refusal != null) {
      promise.tryFailure(refusal);
      return;
    }
    final int id = (int) nextStreamId;
    nextStreamId += 2;
    final YamuxStreamChannel stream =
        new YamuxStreamChannel(this, ctx.channel(), id, true, config, newFlow(id));
    streams.put(id, stream);
    activeOutbound++;
    unackedOutbound++;
    outboundOpened++;
    // SYN before the initializer runs, so whatever it writes follows the SYN on the wire.
    writeControl(
        YamuxFrameType.WINDOW_UPDATE,
        YamuxFrame.FLAG_SYN,
        id,
        stream.flow().initialWindowIncrement());
    flushConnection();
    notifyListener(() -> listener.streamOpened(stream));
    register(stream, initializer)
        .addListener(
            f -> {
              if (f.isSuccess()) {
                stream.onRegistered();
                promise.trySuccess(stream);
              } else {
                stream.reset();
                promise.tryFailure(
                    new YamuxStreamOpenException(
                        YamuxStreamOpenException.Reason.REGISTRATION_FAILED,
                        "yamux stream failed to register",
                        f.cause()));
              }
            });
  }

  private YamuxStreamOpenException refuseOutbound() {
    final YamuxStreamOpenException.Reason reason;
    final String message;
    if (closed || !ctx.channel().isActive()) {
      reason = YamuxStreamOpenException.Reason.SESSION_CLOSED;
      message = "connection not open";
    } else if (goAwayReceived) {
      reason = YamuxStreamOpenException.Reason.GO_AWAY_RECEIVED;
      message = "remote sent GO_AWAY";
    } else if (goAwaySent) {
      reason = YamuxStreamOpenException.Reason.GO_AWAY_SENT;
      message = "we sent GO_AWAY";
    } else if (activeOutbound >= config.maxOutboundStreams()) {
      reason = YamuxStreamOpenException.Reason.TOO_MANY_STREAMS;
      message = activeOutbound + " outbound streams open";
    } else if (unackedOutbound >= config.maxAckBacklog()) {
      reason = YamuxStreamOpenException.Reason.ACK_BACKLOG_FULL;
      message = unackedOutbound + " outbound streams not acknowledged";
    } else if (nextStreamId > YamuxFrame.MAX_LENGTH) {
      reason = YamuxStreamOpenException.Reason.STREAM_IDS_EXHAUSTED;
      message = "no stream ids left";
    } else {
      return null;
    }
    return new YamuxStreamOpenException(reason, "cannot open a yamux stream: " + message);
  }

  private ChannelFuture register(final YamuxStreamChannel stream, final ChannelHandler init) {
    final ChannelPromise promise = new DefaultChannelPromise(stream, ctx.channel().eventLoop());
    try {
      stream.pipeline().addLast(init);
    } catch (final RuntimeException e) {
      // For instance a non-sharable handler that is already in another pipeline.
      return promise.setFailure(e);
    }
    // On the event loop this runs at once: handlerAdded, channelRegistered, channelActive.
    stream.unsafe().register(ctx.channel().eventLoop(), promise);
    return promise;
  }

  // ---- called by streams (event loop only) ----

  boolean inEventLoop() {
    final ChannelHandlerContext c = ctx;
    return c != null && c.executor().inEventLoop();
  }

  boolean inConnectionRead() {
    return inRead;
  }

  void deferReadComplete(final YamuxStreamChannel stream) {
    if (!stream.readCompleteQueued) {
      stream.readCompleteQueued = true;
      readCompleteWaiters.add(stream);
    }
  }

  /**
   * Whether the connection can take another DATA frame now; if not, the stream waits for the
   * connection to turn writable. This carries TCP backpressure up to the stream channels.
   */
  boolean reserveConnectionCapacity(final YamuxStreamChannel stream) {
    if (closed) {
      return false;
    }
    final Channel connection = ctx.channel();
    if (connection.isWritable()) {
      return true;
    }
    flushPending = false;
    ctx.flush();
    if (connection.isWritable()) {
      return true;
    }
    if (!stream.awaitingParent) {
      stream.awaitingParent = true;
      writeWaiters.add(stream);
    }
    return false;
  }

  void writeData(final YamuxStreamChannel stream, final ByteBuf payload) {
    if (closed || !ctx.channel().isActive()) {
      payload.release();
      return;
    }
    final int n = payload.readableBytes();
    final ByteBuf frame;
    if (n < COPY_PAYLOAD_BELOW) {
      frame = ctx.alloc().ioBuffer(YamuxFrame.HEADER_LENGTH + n);
      YamuxFrame.writeHeader(frame, YamuxFrameType.DATA, 0, stream.streamId(), n);
      frame.writeBytes(payload);
      payload.release();
    } else {
      final ByteBuf header = header(YamuxFrameType.DATA, 0, stream.streamId(), n);
      frame = ctx.alloc().compositeBuffer(2).addComponents(true, header, payload);
    }
    ctx.write(frame, ctx.voidPromise());
  }

  void writeFin(final YamuxStreamChannel stream) {
    if (!stream.forgotten) {
      writeControl(YamuxFrameType.WINDOW_UPDATE, YamuxFrame.FLAG_FIN, stream.streamId(), 0);
      flushConnection();
    }
  }

  /** Flushes the connection now, or at the end of the current read batch. */
  void flushConnection() {
    if (inRead) {
      flushPending = true;
    } else {
      final ChannelHandlerContext c = ctx;
      if (c != null) {
        c.flush();
      }
    }
  }

  /**
   * Payload bytes of the stream left its buffer (delivered or dropped, already reported to its
   * {@link YamuxStreamFlow}): send the WINDOW_UPDATE the flow asks for, if any.
   */
  void onConsumed(final YamuxStreamChannel stream) {
    // No DATA can follow a FIN or reset, or arrive on a closed connection: credit would be lost.
    if (stream.forgotten || stream.remoteFin || closed) {
      return;
    }
    final long increment = stream.flow().nextWindowUpdate(rttNanos);
    if (increment > 0) {
      writeControl(YamuxFrameType.WINDOW_UPDATE, 0, stream.streamId(), increment);
      flushConnection();
    }
  }

  /** The stream channel closed: FIN if not sent, then forget it or linger for the remote FIN. */
  void onStreamClosed(final YamuxStreamChannel stream) {
    if (stream.forgotten) {
      return;
    }
    if (!stream.finSent) {
      stream.finSent = true;
      writeFin(stream);
    }
    if (stream.remoteFin) {
      forget(stream, YamuxStreamTermination.CLOSED, false);
    } else if (!closed) {
      stream.linger =
          ctx.executor()
              .schedule(
                  () -> lingerExpired(stream),
                  config.streamLingerTimeout().toNanos(),
                  TimeUnit.NANOSECONDS);
    }
  }

  /** Sends RST (unless already forgotten) and forgets the stream. */
  void resetStream(final YamuxStreamChannel stream, final YamuxStreamTermination termination) {
    if (stream.forgotten) {
      return;
    }
    sendRst(stream.streamId());
    forget(stream, termination, true);
  }

  // ---- internals ----

  private void lingerExpired(final YamuxStreamChannel stream) {
    stream.linger = null;
    if (!stream.forgotten) {
      LOG.debug("yamux: no FIN for closed stream {} within the linger timeout", stream.id());
      resetStream(stream, YamuxStreamTermination.LINGER_TIMEOUT);
    }
  }

  private void forget(
      final YamuxStreamChannel stream,
      final YamuxStreamTermination termination,
      final boolean override) {
    if (stream.forgotten) {
      return;
    }
    stream.forgotten = true;
    if (override) {
      stream.setTermination(termination);
    } else {
      stream.setTerminationIfOpen(termination);
    }
    if (streams.get(stream.streamId()) == stream) {
      streams.remove(stream.streamId());
    }
    if (stream.isOutbound()) {
      activeOutbound--;
      if (!stream.acked) {
        unackedOutbound--;
      }
    } else {
      activeInbound--;
    }
    cancel(stream.linger);
    stream.linger = null;
    notifyListener(() -> listener.streamClosed(stream));
  }

  private void start() {
    if (started || closed) {
      return;
    }
    started = true;
    final long interval = config.keepAliveInterval().toNanos();
    if (interval > 0) {
      sendPing();
      keepAlive =
          ctx.executor()
              .scheduleAtFixedRate(this::keepAliveTick, interval, interval, TimeUnit.NANOSECONDS);
    }
  }

  private void keepAliveTick() {
    if (!closed && !pingOutstanding && ctx.channel().isActive()) {
      sendPing();
    }
  }

  private void sendPing() {
    pingOutstanding = true;
    pingOpaque = nextPingOpaque;
    nextPingOpaque = (nextPingOpaque + 1) & YamuxFrame.MAX_LENGTH;
    pingSentNanos = nanoTime();
    pingPromise = ctx.executor().newPromise();
    writeControl(YamuxFrameType.PING, YamuxFrame.FLAG_SYN, 0, pingOpaque);
    flushConnection();
    pingTimeout =
        ctx.executor()
            .schedule(
                this::pingTimedOut, config.keepAliveTimeout().toNanos(), TimeUnit.NANOSECONDS);
  }

  private void pingTimedOut() {
    pingTimeout = null;
    if (!pingOutstanding || closed) {
      return;
    }
    final BadPeerException cause =
        new BadPeerException(
            "yamux ping unanswered for " + config.keepAliveTimeout().toMillis() + " ms");
    LOG.debug("yamux: {}, closing {}", cause.getMessage(), ctx.channel());
    notifyListener(() -> listener.sessionFailed(cause));
    terminate(YamuxFrame.GO_AWAY_NORMAL);
  }

  private void fail(final Throwable cause) {
    if (closed) {
      LOG.debug("yamux: error after close on {}", ctx.channel(), cause);
      return;
    }
    final long code;
    if (cause instanceof BadPeerException) {
      LOG.debug("yamux: closing {}: {}", ctx.channel(), cause.getMessage());
      code = YamuxFrame.GO_AWAY_PROTOCOL_ERROR;
    } else if (cause instanceof IOException) {
      LOG.debug("yamux: connection {} failed", ctx.channel(), cause);
      code = -1;
    } else {
      LOG.warn("yamux: internal error on {}", ctx.channel(), cause);
      code = YamuxFrame.GO_AWAY_INTERNAL_ERROR;
    }
    notifyListener(() -> listener.sessionFailed(cause));
    terminate(code);
  }

  /** Sends GO_AWAY with {@code code} (none if negative) and closes the connection. */
  private void terminate(final long code) {
    if (closed) {
      return;
    }
    closeSession(code);
    ctx.close();
  }

  /**
   * Ends the session: no frame but this GO_AWAY (none if {@code code} is negative or one was sent)
   * goes out any more, and everything written so far is flushed ahead of the close.
   */
  private void closeSession(final long code) {
    closed = true;
    if (code >= 0 && !goAwaySent && ctx.channel().isActive()) {
      goAwaySent = true;
      ctx.write(header(YamuxFrameType.GO_AWAY, 0, 0, code), ctx.voidPromise());
    }
    flushPending = false;
    ctx.flush();
  }

  private void teardown() {
    closed = true;
    cancel(keepAlive);
    keepAlive = null;
    cancel(pingTimeout);
    pingTimeout = null;
    if (pingPromise != null) {
      final Promise<Duration> p = pingPromise;
      pingPromise = null;
      pingOutstanding = false;
      p.tryFailure(new ClosedChannelException());
    }
    dataStream = null;
    writeWaiters.clear();
    readCompleteWaiters.clear();
    if (streams.isEmpty()) {
      return;
    }
    final YamuxStreamChannel[] all = streams.values().toArray(new YamuxStreamChannel[0]);
    for (final YamuxStreamChannel stream : all) {
      forget(stream, YamuxStreamTermination.SESSION_CLOSED, false);
      stream.onSessionClosed();
    }
  }

  private void resumeWriters() {
    if (resumingWriters) {
      return;
    }
    resumingWriters = true;
    try {
      YamuxStreamChannel stream;
      while (ctx.channel().isWritable() && (stream = writeWaiters.poll()) != null) {
        stream.awaitingParent = false;
        if (!stream.forgotten) {
          stream.resumeWrite();
        }
      }
    } finally {
      resumingWriters = false;
    }
  }

  /** RST on a zero-length WINDOW_UPDATE, as js-libp2p sends it. */
  private void sendRst(final int streamId) {
    writeControl(YamuxFrameType.WINDOW_UPDATE, YamuxFrame.FLAG_RST, streamId, 0);
    flushConnection();
  }

  private void writeControl(
      final YamuxFrameType type, final int flags, final int streamId, final long length) {
    final ChannelHandlerContext c = ctx;
    // After close only the GO_AWAY written by close() itself may go out.
    if (c == null || closed || !c.channel().isActive()) {
      return;
    }
    c.write(header(type, flags, streamId, length), c.voidPromise());
  }

  private ByteBuf header(
      final YamuxFrameType type, final int flags, final int streamId, final long length) {
    final ByteBuf buf = ctx.alloc().ioBuffer(YamuxFrame.HEADER_LENGTH);
    YamuxFrame.writeHeader(buf, type, flags, streamId, length);
    return buf;
  }

  private long nanoTime() {
    return ctx.executor().ticker().nanoTime();
  }

  private YamuxStreamFlow newFlow(final int id) {
    return new YamuxStreamFlow(
        id, config.initialStreamWindow(), config.maxStreamWindow(), this::nanoTime);
  }

  private void runOnLoop(
      final ChannelHandlerContext c, final Runnable task, final Promise<?> onRejected) {
    final EventExecutor loop = c.executor();
    if (loop.inEventLoop()) {
      task.run();
      return;
    }
    try {
      loop.execute(task);
    } catch (final RejectedExecutionException e) {
      onRejected.tryFailure(e);
    }
  }

  private void notifyListener(final Runnable call) {
    try {
      call.run();
    } catch (final RuntimeException e) {
      LOG.error("yamux session listener failed", e);
    }
  }

  private static void cancel(final ScheduledFuture<?> future) {
    if (future != null) {
      future.cancel(false);
    }
  }
}
