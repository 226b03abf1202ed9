package io.relaypinner.handoff.records.service;

import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPipeline;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpMessage;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpUtil;
import io.relaypinner.handoff.records.ErrorCodes;
import java.util.function.LongConsumer;

/**
 * Joins request bodies up to the service's limit. A body over it (declared by
 * {@code Content-Length}, or counted as chunks arrive) is answered 413 {@code payload_too_large}
 * in the JSON error shape and the connection is closed, so the rest of the body is never read.
 */
final class RecordBodyAggregator extends HttpObjectAggregator {
  private final LongConsumer rejected;

  RecordBodyAggregator(final int maxBodyBytes, final LongConsumer rejected) {
    super(maxBodyBytes);
    this.rejected = rejected;
  }

  @Override
  protected Object newContinueResponse(
      final HttpMessage start, final int maxContentLength, final ChannelPipeline pipeline) {
    // An oversized "Expect: 100-continue" request gets the JSON 413 below, not Netty's bare one.
    if (HttpUtil.is100ContinueExpected(start)
        && HttpUtil.getContentLength(start, -1L) > maxContentLength) {
      return null;
    }
    return super.newContinueResponse(start, maxContentLength, pipeline);
  }

  @Override
  protected void handleOversizedMessage(
      final ChannelHandlerContext ctx, final HttpMessage oversized) {
    if (!(oversized instanceof HttpRequest)) {
      ctx.close();
      return;
    }
    rejected.accept(1);
    final FullHttpResponse response = RecordHttpResponses.error(413,
        ErrorCodes.PAYLOAD_TOO_LARGE, "request body is over the limit of " + maxContentLength()
            + " bytes");
    response.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
    ctx.writeAndFlush(response).addListener(ChannelFutureListener.CLOSE);
  }
}
