package io.relaypinner.relay.http;

import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.EmptyHttpHeaders;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.LastHttpContent;

/**
 * Joins a request that has no body (no {@code Content-Length} or 0, not chunked) and the empty
 * {@link LastHttpContent} the decoder emits right after it into one {@link FullHttpRequest}. The
 * aggregator passes full requests through untouched, so the common {@code GET}/{@code HEAD}/
 * {@code OPTIONS} costs no composite buffer. Requests that may carry a body go on at once, so
 * {@code Expect: 100-continue} still reaches the aggregator before the body is sent.
 */
final class BodilessRequestHandler extends ChannelInboundHandlerAdapter {
  private HttpRequest held;

  @Override
  public void channelRead(final ChannelHandlerContext ctx, final Object msg) {
    final HttpRequest request = held;
    if (request != null) {
      held = null;
      if (msg instanceof LastHttpContent last && !last.content().isReadable()
          && last.trailingHeaders().isEmpty() && last.decoderResult().isSuccess()) {
        last.release();
        ctx.fireChannelRead(new DefaultFullHttpRequest(request.protocolVersion(),
            request.method(), request.uri(), Unpooled.EMPTY_BUFFER, request.headers(),
            EmptyHttpHeaders.INSTANCE));
        return;
      }
      // Not what the decoder produces for a bodiless request; hand both on unchanged.
      ctx.fireChannelRead(request);
      ctx.fireChannelRead(msg);
      return;
    }
    if (msg instanceof HttpRequest candidate && !(msg instanceof FullHttpRequest)
        && candidate.decoderResult().isSuccess() && hasNoBody(candidate)) {
      held = candidate;
      return;
    }
    ctx.fireChannelRead(msg);
  }

  private static boolean hasNoBody(final HttpRequest request) {
    return !HttpUtil.isTransferEncodingChunked(request)
        && HttpUtil.getContentLength(request, 0L) == 0L;
  }
}
