package io.relaypinner.handoff.records.service;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.concurrent.ScheduledFuture;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.function.LongConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A request must arrive whole within a deadline from its first byte: a client that trickles a
 * byte now and then (which the idle timeout alone never catches) is disconnected. Two handlers
 * share one timer per connection: {@link #start()} sits before the HTTP codec and starts the timer
 * at the first byte of a request, {@link #stop()} sits after it and stops the timer at the
 * request's last content. Both run on the connection's event loop.
 */
final class RequestDeadline {
  private static final Logger LOG = LoggerFactory.getLogger(RequestDeadline.class);

  private final long deadlineNanos;
  private final LongConsumer rejected;
  private ScheduledFuture<?> timer;

  RequestDeadline(final Duration deadline, final LongConsumer rejected) {
    this.deadlineNanos = deadline.toNanos();
    this.rejected = rejected;
  }

  /** The handler before the codec. */
  ChannelInboundHandlerAdapter start() {
    return new ChannelInboundHandlerAdapter() {
      @Override
      public void channelRead(final ChannelHandlerContext ctx, final Object msg) {
        if (msg instanceof ByteBuf bytes && bytes.isReadable() && timer == null) {
          timer = ctx.executor().schedule(() -> {
            rejected.accept(1);
            LOG.debug("closing {}: request not complete within {} ms",
                ctx.channel().remoteAddress(), TimeUnit.NANOSECONDS.toMillis(deadlineNanos));
            ctx.close();
          }, deadlineNanos, TimeUnit.NANOSECONDS);
        }
        ctx.fireChannelRead(msg);
      }

      @Override
      public void channelInactive(final ChannelHandlerContext ctx) {
        cancel();
        ctx.fireChannelInactive();
      }
    };
  }

  /** The handler after the codec. */
  ChannelInboundHandlerAdapter stop() {
    return new ChannelInboundHandlerAdapter() {
      @Override
      public void channelRead(final ChannelHandlerContext ctx, final Object msg) {
        if (msg instanceof LastHttpContent) {
          cancel();
        }
        ctx.fireChannelRead(msg);
      }
    };
  }

  private void cancel() {
    if (timer != null) {
      timer.cancel(false);
      timer = null;
    }
  }
}
