package io.relaypinner.libp2p.netty;

import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.socket.DuplexChannel;
import io.netty.handler.codec.quic.DefaultQuicStreamFrame;
import io.netty.handler.codec.quic.QuicStreamChannel;

/**
 * Ends a stream's output (a FIN) behind everything written to it before, on any transport.
 *
 * <p>Why not {@link DuplexChannel#shutdownOutput()} everywhere: Netty's QUIC stream (4.2.18)
 * hands the FIN to quiche at once, ahead of writes still queued for flow control, so the remote
 * sees a clean end of a truncated stream and the queued writes fail. A FIN frame written through
 * the pipeline queues behind them.
 */
public final class HalfClose {
  private HalfClose() {}

  /**
   * Shuts {@code channel}'s output down after its pending writes: a QUIC stream gets a FIN frame
   * through its pipeline, another {@link DuplexChannel} {@code shutdownOutput()}, anything else
   * is closed.
   */
  public static ChannelFuture shutdownOutput(final Channel channel) {
    if (channel instanceof QuicStreamChannel) {
      return channel.writeAndFlush(new DefaultQuicStreamFrame(Unpooled.EMPTY_BUFFER, true));
    }
    if (channel instanceof DuplexChannel duplex) {
      return duplex.shutdownOutput();
    }
    return channel.close();
  }
}
