package io.relaypinner.relay.http;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPipeline;
import io.netty.handler.codec.http.HttpMessage;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpUtil;

/**
 * Aggregates request bodies up to a hard limit. Over the limit (declared by
 * {@code Content-Length}, or counted while chunks arrive) the request becomes a
 * {@link RejectedRequest} 413 {@code payload_too_large} with the JSON error shape, instead of
 * Netty's bare 413; the aggregator then discards the rest of that body.
 */
final class LimitedHttpObjectAggregator extends HttpObjectAggregator {
  LimitedHttpObjectAggregator(final int maxBodySize) {
    super(maxBodySize);
  }

  @Override
  protected Object newContinueResponse(
      final HttpMessage start, final int maxContentLength, final ChannelPipeline pipeline) {
    // An oversized "Expect: 100-continue" request gets our JSON 413, not Netty's bare one.
    if (HttpUtil.is100ContinueExpected(start)
        && HttpUtil.getContentLength(start, -1L) > maxContentLength) {
      return null;
    }
    return super.newContinueResponse(start, maxContentLength, pipeline);
  }

  @Override
  protected void handleOversizedMessage(
      final ChannelHandlerContext ctx, final HttpMessage oversized) throws Exception {
    if (oversized instanceof HttpRequest) {
      ctx.fireChannelRead(RejectedRequest.payloadTooLarge(maxContentLength()));
    } else {
      super.handleOversizedMessage(ctx, oversized);
    }
  }
}
