package io.relaypinner.libp2p.pubsub;

import com.google.protobuf.InvalidProtocolBufferException;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.socket.ChannelInputShutdownEvent;
import io.netty.handler.codec.DecoderException;
import io.netty.util.ReferenceCountUtil;
import io.relaypinner.common.Failures;
import io.relaypinner.libp2p.core.ProtocolViolationException;
import io.relaypinner.libp2p.host.Connection;
import io.relaypinner.libp2p.host.PeerBanEngine;
import io.relaypinner.libp2p.pubsub.pb.PubsubProtos.RPC;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads the RPCs of a peer's gossipsub stream to us (libp2p/specs pubsub/gossipsub-v1.0.md
 * "Protocol": the stream the remote opened is read-only for us), after an
 * {@code UvarintFrameDecoder} that enforces the frame limit. A frame that is not an RPC protobuf
 * closes the stream; the remote's FIN closes it as well (it will open a new one to talk again).
 */
final class RpcInboundHandler extends ChannelInboundHandlerAdapter {
  private static final Logger LOG = LoggerFactory.getLogger(RpcInboundHandler.class);

  private final Consumer<RPC> sink;

  RpcInboundHandler(final Consumer<RPC> sink) {
    this.sink = sink;
  }

  @Override
  public void channelRead(final ChannelHandlerContext ctx, final Object msg) {
    if (!(msg instanceof ByteBuf frame)) {
      ReferenceCountUtil.release(msg);
      exceptionCaught(ctx, new ProtocolViolationException("gossipsub: unexpected message"));
      return;
    }
    final RPC rpc;
    try {
      rpc = RPC.parseFrom(frame.nioBuffer());
    } catch (final InvalidProtocolBufferException e) {
      exceptionCaught(ctx, new ProtocolViolationException("gossipsub: malformed RPC", e));
      return;
    } finally {
      frame.release();
    }
    sink.accept(rpc);
  }

  @Override
  public void userEventTriggered(final ChannelHandlerContext ctx, final Object evt) {
    if (evt instanceof ChannelInputShutdownEvent) {
      ctx.close();
    }
    ctx.fireUserEventTriggered(evt);
  }

  @Override
  public void exceptionCaught(final ChannelHandlerContext ctx, final Throwable cause) {
    if (cause instanceof ProtocolViolationException || cause instanceof DecoderException) {
      // A frame over the limit (from the frame decoder) or one that is not an RPC.
      Connection.reportFault(ctx.channel(), PeerBanEngine.Fault.MALFORMED_MESSAGE);
    }
    if (Failures.isFatal(cause)) {
      // Not the remote's doing: a JVM error or our bug must be seen.
      LOG.error("gossipsub stream {} failed", ctx.channel(), cause);
    } else {
      LOG.debug("closing gossipsub stream {} from the remote: {}", ctx.channel(),
          cause.toString());
    }
    ctx.close();
  }
}
