package io.relaypinner.libp2p.mux.yamux;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.util.ReferenceCountUtil;
import io.relaypinner.libp2p.core.ProtocolViolationException;
import java.util.Arrays;

/**
 * Jazzer: yamux frames off the wire, in two reads split where the first byte says: decoded or
 * refused with a protocol violation, nothing else.
 */
class YamuxFrameFuzzer {
  @FuzzTest
  void decode(final byte[] input) throws Throwable {
    final Throwable[] failure = new Throwable[1];
    final EmbeddedChannel channel = new EmbeddedChannel(new YamuxFrameCodec(256 * 1024),
        new ChannelInboundHandlerAdapter() {
          @Override
          public void channelRead(final ChannelHandlerContext ctx, final Object msg) {
            ReferenceCountUtil.release(msg);
          }

          @Override
          public void exceptionCaught(final ChannelHandlerContext ctx, final Throwable cause) {
            failure[0] = cause;
          }
        });
    final int split = input.length == 0 ? 0 : (input[0] & 0xff) % (input.length + 1);
    channel.writeInbound(Unpooled.wrappedBuffer(Arrays.copyOfRange(input, 0, split)));
    channel.writeInbound(Unpooled.wrappedBuffer(Arrays.copyOfRange(input, split,
        input.length)));
    channel.finishAndReleaseAll();
    if (failure[0] != null && !(failure[0] instanceof ProtocolViolationException)) {
      throw failure[0];
    }
  }
}
