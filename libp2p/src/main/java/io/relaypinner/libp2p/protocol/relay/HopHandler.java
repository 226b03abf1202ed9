package io.relaypinner.libp2p.protocol.relay;

import com.google.protobuf.InvalidProtocolBufferException;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.socket.ChannelInputShutdownEvent;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.ScheduledFuture;
import io.relaypinner.common.Failures;
import io.relaypinner.libp2p.core.ProtocolViolationException;
import io.relaypinner.libp2p.netty.SingleMessageReader;
import io.relaypinner.libp2p.host.Connection;
import io.relaypinner.libp2p.protocol.relay.pb.CircuitProtos.HopMessage;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The responder of {@code /libp2p/circuit/relay/0.2.0/hop} for one stream (libp2p/specs
 * relay/circuit-v2.md, "Hop protocol"): reads one {@code HopMessage} of at most
 * {@link CircuitRelayConfig#maxMessageSize()} bytes within {@link CircuitRelayConfig#hopTimeout()}
 * and hands it to {@link CircuitRelay}: RESERVE is answered and the stream closed; CONNECT stops
 * reading until the destination accepted, then the stream becomes the source end of the circuit.
 * A malformed message is answered MALFORMED_MESSAGE, STATUS (or an unknown type)
 * UNEXPECTED_MESSAGE, an oversized one closes the stream; each is counted as a refusal.
 */
final class HopHandler extends ChannelInboundHandlerAdapter {
  private static final Logger LOG = LoggerFactory.getLogger(HopHandler.class);

  private enum State { READING, WORKING, DONE }

  private final CircuitRelay relay;
  private final Connection connection;
  private final SingleMessageReader reader;
  private ChannelHandlerContext ctx;
  private ScheduledFuture<?> timer;
  private State state = State.READING;
  private Runnable onAbort;

  HopHandler(final CircuitRelay relay, final Connection connection) {
    this.relay = relay;
    this.connection = connection;
    this.reader = new SingleMessageReader(relay.config().maxMessageSize());
  }

  Connection connection() {
    return connection;
  }

  ChannelHandlerContext context() {
    return ctx;
  }

  @Override
  public void handlerAdded(final ChannelHandlerContext ctx) {
    this.ctx = ctx;
    timer = ctx.executor().schedule(this::timedOut, relay.config().hopTimeout().toNanos(),
        TimeUnit.NANOSECONDS);
  }

  @Override
  public void channelRead(final ChannelHandlerContext ctx, final Object msg) {
    if (!(msg instanceof ByteBuf in)) {
      ReferenceCountUtil.release(msg);
      return;
    }
    if (state == State.DONE) {
      in.release();
      return;
    }
    final byte[] bytes;
    try {
      bytes = reader.add(ctx.alloc(), in);
    } catch (final ProtocolViolationException e) {
      LOG.debug("hop from {}: {}", connection.remotePeer(), e.getMessage());
      relay.engine().refuse(RelayRefusal.OVERSIZED);
      finish();
      ctx.close();
      return;
    }
    if (bytes == null || state != State.READING) {
      return;
    }
    state = State.WORKING;
    ctx.channel().config().setAutoRead(false);
    final HopMessage request;
    try {
      request = HopMessage.parseFrom(bytes);
    } catch (final InvalidProtocolBufferException e) {
      refuse(RelayRefusal.MALFORMED, true);
      return;
    }
    if (!request.hasType()) {
      refuse(RelayRefusal.MALFORMED, true);
      return;
    }
    switch (request.getType()) {
      case RESERVE -> relay.reserve(this);
      case CONNECT -> relay.connect(this, request);
      default -> refuse(RelayRefusal.UNEXPECTED, true);
    }
  }

  /**
   * Runs {@code action} if the hop timer fires, or the stream closes, while the relay is still
   * working on the request (the stop exchange is then abandoned).
   */
  void onAbort(final Runnable action) {
    this.onAbort = action;
  }

  private void timedOut() {
    timer = null;
    if (state == State.DONE) {
      return;
    }
    if (state == State.READING) {
      LOG.debug("hop from {}: no request within {}", connection.remotePeer(),
          relay.config().hopTimeout());
      relay.engine().refuse(RelayRefusal.TIMEOUT);
      finish();
      ctx.close();
      return;
    }
    abort();
  }

  /** Answers STATUS {@code reason.status()} and closes. Counts it when {@code count}. */
  void refuse(final RelayRefusal reason, final boolean count) {
    if (count) {
      relay.engine().refuse(reason);
    }
    LOG.debug("hop from {} refused: {}", connection.remotePeer(), reason.label());
    respondAndClose(HopMessage.newBuilder().setType(HopMessage.Type.STATUS)
        .setStatus(reason.status()).build());
  }

  /** Writes {@code response}, then closes the stream. */
  void respondAndClose(final HopMessage response) {
    if (state == State.DONE) {
      return;
    }
    finish();
    ctx.writeAndFlush(SingleMessageReader.frame(ctx.alloc(), response))
        .addListener(ChannelFutureListener.CLOSE);
  }

  /**
   * Writes the CONNECT's STATUS OK, then makes the stream the source end of {@code splice}: the
   * bytes that came after the request go first, then reading resumes.
   *
   * @return false when the stream is gone (the caller ends the circuit)
   */
  boolean accept(final HopMessage response, final CircuitSplice.End end) {
    if (state != State.WORKING || !ctx.channel().isActive()) {
      return false;
    }
    finish();
    ctx.writeAndFlush(SingleMessageReader.frame(ctx.alloc(), response));
    ctx.pipeline().addLast(end);
    final ByteBuf rest = reader.takeRest();
    ctx.pipeline().remove(this);
    if (rest != null) {
      end.forward(rest);
    }
    ctx.channel().config().setAutoRead(true);
    return true;
  }

  /** Whether the exchange still waits for an answer from the relay. */
  boolean working() {
    return state == State.WORKING && ctx.channel().isActive();
  }

  private void abort() {
    final Runnable action = onAbort;
    onAbort = null;
    if (state == State.WORKING && action != null) {
      action.run();
    }
  }

  private void finish() {
    state = State.DONE;
    if (timer != null) {
      timer.cancel(false);
      timer = null;
    }
  }

  @Override
  public void userEventTriggered(final ChannelHandlerContext ctx, final Object evt)
      throws Exception {
    if (evt == ChannelInputShutdownEvent.INSTANCE) {
      if (state == State.READING) {
        // The remote gave up before sending a whole request.
        finish();
        ctx.close();
      }
      return;
    }
    super.userEventTriggered(ctx, evt);
  }

  @Override
  public void exceptionCaught(final ChannelHandlerContext ctx, final Throwable cause) {
    if (Failures.isFatal(cause)) {
      LOG.error("hop stream from {} failed", connection.remotePeer(), cause);
    } else {
      LOG.debug("hop stream from {} failed: {}", connection.remotePeer(), cause.toString());
    }
    finish();
    ctx.close();
  }

  @Override
  public void channelInactive(final ChannelHandlerContext ctx) {
    abort();
    finish();
    ctx.fireChannelInactive();
  }

  @Override
  public void handlerRemoved(final ChannelHandlerContext ctx) {
    finish();
    reader.release();
  }
}
