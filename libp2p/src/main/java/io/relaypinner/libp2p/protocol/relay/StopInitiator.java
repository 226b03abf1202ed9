package io.relaypinner.libp2p.protocol.relay;

import com.google.protobuf.ByteString;
import com.google.protobuf.InvalidProtocolBufferException;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.socket.ChannelInputShutdownEvent;
import io.netty.util.ReferenceCountUtil;
import io.relaypinner.libp2p.core.BadPeerException;
import io.relaypinner.libp2p.core.ProtocolViolationException;
import io.relaypinner.libp2p.netty.ActivatedHandler;
import io.relaypinner.libp2p.netty.SingleMessageReader;
import io.relaypinner.libp2p.protocol.relay.pb.CircuitProtos.Limit;
import io.relaypinner.libp2p.protocol.relay.pb.CircuitProtos.Peer;
import io.relaypinner.libp2p.protocol.relay.pb.CircuitProtos.Status;
import io.relaypinner.libp2p.protocol.relay.pb.CircuitProtos.StopMessage;
import io.relaypinner.multiformats.PeerId;
import java.nio.channels.ClosedChannelException;
import java.util.concurrent.CompletableFuture;

/**
 * The relay's side of {@code /libp2p/circuit/relay/0.2.0/stop} (libp2p/specs relay/circuit-v2.md,
 * "Stop protocol"): on the stream the relay opened to the destination it sends
 * {@code CONNECT{peer: source, limit}} and reads one answer. STATUS OK completes {@link #result()}
 * with this handler, which then stops reading and keeps the bytes after the answer for the splice
 * ({@link #handOver}); anything else fails it and closes the stream. The hop handler's timer
 * bounds the exchange.
 */
final class StopInitiator extends ActivatedHandler {
  private final PeerId source;
  private final Limit limit;
  private final SingleMessageReader reader;
  private final CompletableFuture<StopInitiator> result = new CompletableFuture<>();

  /**
   * @param limit the circuit's limit, or null for none
   */
  StopInitiator(final PeerId source, final Limit limit, final int maxMessageSize) {
    this.source = source;
    this.limit = limit;
    this.reader = new SingleMessageReader(maxMessageSize);
  }

  CompletableFuture<StopInitiator> result() {
    return result;
  }

  ChannelHandlerContext context() {
    return ctx();
  }

  @Override
  protected void onActivated(final ChannelHandlerContext ctx) {
    final StopMessage.Builder request = StopMessage.newBuilder().setType(StopMessage.Type.CONNECT)
        .setPeer(Peer.newBuilder().setId(ByteString.copyFrom(source.bytes())));
    if (limit != null) {
      request.setLimit(limit);
    }
    ctx.writeAndFlush(SingleMessageReader.frame(ctx.alloc(), request.build())).addListener(f -> {
      if (!f.isSuccess()) {
        fail(f.cause());
      }
    });
  }

  @Override
  public void channelRead(final ChannelHandlerContext ctx, final Object msg) {
    if (!(msg instanceof ByteBuf in)) {
      ReferenceCountUtil.release(msg);
      fail(new ProtocolViolationException("stop: unexpected message"));
      return;
    }
    final byte[] answer;
    try {
      answer = reader.add(ctx.alloc(), in);
    } catch (final ProtocolViolationException e) {
      fail(e);
      return;
    }
    if (answer == null || result.isDone()) {
      return;
    }
    final StopMessage response;
    try {
      response = StopMessage.parseFrom(answer);
    } catch (final InvalidProtocolBufferException e) {
      fail(new ProtocolViolationException("stop: malformed answer", e));
      return;
    }
    if (response.getType() != StopMessage.Type.STATUS || response.getStatus() != Status.OK) {
      fail(new BadPeerException("stop: destination answered " + response.getType() + " "
          + response.getStatus()));
      return;
    }
    // Until the splice takes over, nothing more is read; what already came stays in the reader.
    ctx.channel().config().setAutoRead(false);
    result.complete(this);
  }

  /**
   * Replaces this handler with {@code next} on the event loop and passes it the bytes that came
   * after the answer; reading resumes.
   */
  void handOver(final CircuitSplice.End next) {
    final ChannelHandlerContext ctx = ctx();
    ctx.executor().execute(() -> {
      if (!ctx.channel().isActive()) {
        reader.release();
        next.peerGone();
        return;
      }
      ctx.pipeline().addLast(next);
      final ByteBuf rest = reader.takeRest();
      ctx.pipeline().remove(this);
      if (rest != null) {
        next.forward(rest);
      }
      ctx.channel().config().setAutoRead(true);
    });
  }

  @Override
  public void userEventTriggered(final ChannelHandlerContext ctx, final Object evt)
      throws Exception {
    if (evt == ChannelInputShutdownEvent.INSTANCE && !result.isDone()) {
      fail(new ProtocolViolationException("stop: stream closed before the answer"));
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
    fail(new ClosedChannelException());
  }

  @Override
  protected void onRemoved(final ChannelHandlerContext ctx) {
    // After a hand-over the reader is empty already.
    reader.release();
  }

  /** Fails the exchange and closes the stream (no-op once it succeeded). */
  void fail(final Throwable cause) {
    if (result.completeExceptionally(cause)) {
      reader.release();
      ctx().close();
    }
  }
}
