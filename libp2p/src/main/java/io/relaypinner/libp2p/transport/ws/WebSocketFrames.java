package io.relaypinner.libp2p.transport.ws;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.handler.codec.http.websocketx.BinaryWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketFrame;
import io.netty.util.ReferenceCountUtil;
import io.relaypinner.libp2p.core.ProtocolViolationException;

/**
 * Carries a libp2p byte stream in WebSocket binary frames (libp2p/specs websockets): each inbound
 * binary frame's payload is passed on as a {@link ByteBuf}; each outbound {@link ByteBuf} becomes
 * one binary frame. Text frames are a protocol violation. Control frames (ping, pong, close) are
 * handled by Netty's protocol handler before this one.
 */
final class WebSocketFrames extends ChannelDuplexHandler {
  @Override
  public void channelRead(final ChannelHandlerContext ctx, final Object msg) {
    if (msg instanceof BinaryWebSocketFrame frame) {
      ctx.fireChannelRead(frame.content());
      return;
    }
    if (msg instanceof WebSocketFrame frame) {
      ReferenceCountUtil.release(frame);
      ctx.fireExceptionCaught(new ProtocolViolationException(
          "libp2p over WebSocket takes binary frames only, got " + frame.getClass()
              .getSimpleName()));
      ctx.close();
      return;
    }
    ctx.fireChannelRead(msg);
  }

  @Override
  public void write(final ChannelHandlerContext ctx, final Object msg,
      final ChannelPromise promise) {
    if (msg instanceof ByteBuf buf) {
      ctx.write(new BinaryWebSocketFrame(buf), promise);
      return;
    }
    ctx.write(msg, promise);
  }
}
