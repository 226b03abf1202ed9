package io.relaypinner.libp2p.protocol.ping;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.EventLoop;
import io.netty.channel.socket.ChannelInputShutdownEvent;
import io.netty.channel.socket.DuplexChannel;
import io.netty.util.ReferenceCountUtil;
import io.relaypinner.libp2p.core.BadPeerException;
import io.relaypinner.libp2p.core.ProtocolViolationException;
import io.relaypinner.libp2p.netty.ActivatedHandler;
import java.nio.channels.ClosedChannelException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeoutException;
import java.util.function.LongSupplier;
import java.util.random.RandomGenerator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The ping initiator (libp2p/specs ping/ping.md): sends 32 random bytes, waits for exactly those
 * 32 bytes back and reports the round-trip time; several pings may follow on one stream.
 *
 * <p>Per stream it holds one 32-byte expected payload and one 32-byte receive buffer; a ping
 * allocates only its 32-byte outbound buffer and its future. The timeout uses one timer at a time,
 * re-armed only when it fires.
 */
final class PingInitiator extends ActivatedHandler implements PingController {
  private static final Logger LOG = LoggerFactory.getLogger(PingInitiator.class);

  private final EventLoop eventLoop;
  private final long timeoutNanos;
  private final RandomGenerator random;
  private final LongSupplier nanoTime;
  private final byte[] expected = new byte[PingProtocol.PING_LENGTH];
  /** The pending ping's; a ping right after the last echo moves it later at no cost. */
  private final Deadline timeout = deadline(this::onTimeout);
  private final ChannelFutureListener writeListener = this::onWritten;
  private ByteBuf received;
  private CompletableFuture<Duration> pending;
  private long sentAt;
  private boolean last;
  private boolean finished;

  PingInitiator(
      final Channel stream,
      final PingConfig config,
      final RandomGenerator random,
      final LongSupplier nanoTime) {
    this.eventLoop = stream.eventLoop();
    this.timeoutNanos = config.timeout().toNanos();
    this.random = random;
    this.nanoTime = nanoTime;
  }

  @Override
  protected void onAdded(final ChannelHandlerContext ctx) {
    this.received = ctx.alloc().buffer(PingProtocol.PING_LENGTH, PingProtocol.PING_LENGTH);
  }

  @Override
  public CompletableFuture<Duration> ping() {
    return submit(false);
  }

  @Override
  public CompletableFuture<Duration> pingAndClose() {
    return submit(true);
  }

  @Override
  public void close() {
    if (eventLoop.inEventLoop()) {
      doClose();
    } else {
      eventLoop.execute(this::doClose);
    }
  }

  private CompletableFuture<Duration> submit(final boolean lastPing) {
    final CompletableFuture<Duration> result = new CompletableFuture<>();
    if (eventLoop.inEventLoop()) {
      start(result, lastPing);
    } else {
      eventLoop.execute(() -> start(result, lastPing));
    }
    return result;
  }

  private void start(final CompletableFuture<Duration> result, final boolean lastPing) {
    final ChannelHandlerContext ctx = ctx();
    if (ctx == null || finished || !ctx.channel().isActive()) {
      result.completeExceptionally(new ClosedChannelException());
      return;
    }
    if (pending != null) {
      result.completeExceptionally(
          new IllegalStateException("a ping is already in flight on this stream"));
      return;
    }
    random.nextBytes(expected);
    final ByteBuf payload = ctx.alloc().buffer(PingProtocol.PING_LENGTH, PingProtocol.PING_LENGTH)
        .writeBytes(expected);
    pending = result;
    last = lastPing;
    received.clear();
    timeout.expireIn(timeoutNanos);
    sentAt = nanoTime.getAsLong();
    ctx.writeAndFlush(payload).addListener(writeListener);
  }

  private void onWritten(final ChannelFuture future) {
    if (!future.isSuccess()) {
      fail(future.cause());
      return;
    }
    if (last && pending != null && ctx().channel() instanceof DuplexChannel duplex) {
      // Only once the payload is out: shutting the output down fails writes still queued.
      duplex.shutdownOutput();
    }
  }

  @Override
  public void channelRead(final ChannelHandlerContext ctx, final Object msg) {
    if (!(msg instanceof ByteBuf in)) {
      ReferenceCountUtil.release(msg);
      fail(new ProtocolViolationException("ping: unexpected message"));
      return;
    }
    try {
      if (finished) {
        return;
      }
      if (pending == null) {
        fail(new ProtocolViolationException("ping: " + in.readableBytes()
            + " bytes received with no ping in flight"));
        return;
      }
      received.writeBytes(in, Math.min(received.writableBytes(), in.readableBytes()));
      if (in.isReadable()) {
        fail(new ProtocolViolationException("ping: echo longer than "
            + PingProtocol.PING_LENGTH + " bytes"));
        return;
      }
      if (!received.isWritable()) {
        onEcho();
      }
    } finally {
      in.release();
    }
  }

  private void onEcho() {
    final long rtt = nanoTime.getAsLong() - sentAt;
    for (int i = 0; i < PingProtocol.PING_LENGTH; i++) {
      if (received.getByte(i) != expected[i]) {
        fail(new BadPeerException("ping: the echo differs from the payload sent"));
        return;
      }
    }
    final CompletableFuture<Duration> result = pending;
    pending = null;
    if (last) {
      finish();
    }
    // Completed last: a callback may start the next ping at once.
    result.complete(Duration.ofNanos(Math.max(0, rtt)));
  }

  private void onTimeout() {
    if (pending == null || finished) {
      return;
    }
    fail(new TimeoutException("ping: no echo within " + Duration.ofNanos(timeoutNanos)));
  }

  @Override
  public void userEventTriggered(final ChannelHandlerContext ctx, final Object evt)
      throws Exception {
    if (evt == ChannelInputShutdownEvent.INSTANCE) {
      if (pending != null) {
        fail(new ProtocolViolationException("ping: stream closed before the echo"));
      } else {
        // Nothing more can come back: the stream is useless now.
        finish();
      }
      return;
    }
    super.userEventTriggered(ctx, evt);
  }

  @Override
  public void exceptionCaught(final ChannelHandlerContext ctx, final Throwable cause) {
    fail(cause);
  }

  @Override
  protected void onInactive(final ChannelHandlerContext ctx) {
    finished = true;
    failPending(new ClosedChannelException());
    cleanUp();
  }

  @Override
  protected void onRemoved(final ChannelHandlerContext ctx) {
    failPending(new ClosedChannelException());
    cleanUp();
  }

  private void doClose() {
    if (ctx() == null) {
      return;
    }
    failPending(new ClosedChannelException());
    finish();
  }

  private void fail(final Throwable cause) {
    if (finished) {
      return;
    }
    LOG.debug("ping stream {} failed: {}", ctx().channel(), cause.toString());
    failPending(cause);
    finish();
  }

  private void failPending(final Throwable cause) {
    final CompletableFuture<Duration> result = pending;
    pending = null;
    if (result != null) {
      result.completeExceptionally(cause);
    }
  }

  private void finish() {
    finished = true;
    timeout.cancel();
    ctx().close();
  }

  private void cleanUp() {
    finished = true;
    timeout.cancel();
    if (received != null) {
      received.release();
      received = null;
    }
  }
}
