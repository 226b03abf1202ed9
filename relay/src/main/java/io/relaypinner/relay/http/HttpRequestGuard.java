package io.relaypinner.relay.http;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.DecoderResult;
import io.netty.handler.codec.http.HttpObject;
import io.netty.handler.codec.http.TooLongHttpHeaderException;
import io.netty.handler.codec.http.TooLongHttpLineException;
import io.netty.util.ReferenceCountUtil;

/**
 * Turns what {@code HttpServerCodec} could not decode into a {@link RejectedRequest}: a request
 * line or header block over the limit into 431 {@code headers_too_large}, anything else malformed
 * into 400 {@code bad_request}. The decoder has stopped parsing by then (it discards the rest of
 * the stream), so everything after the failure is dropped here too.
 */
final class HttpRequestGuard extends ChannelInboundHandlerAdapter {
  private final int maxInitialLineLength;
  private final int maxHeaderSize;
  private boolean failed;

  HttpRequestGuard(final int maxInitialLineLength, final int maxHeaderSize) {
    this.maxInitialLineLength = maxInitialLineLength;
    this.maxHeaderSize = maxHeaderSize;
  }

  @Override
  public void channelRead(final ChannelHandlerContext ctx, final Object msg) {
    if (failed) {
      ReferenceCountUtil.release(msg);
      return;
    }
    if (msg instanceof HttpObject object && object.decoderResult().isFailure()) {
      failed = true;
      final DecoderResult result = object.decoderResult();
      ReferenceCountUtil.release(msg);
      ctx.fireChannelRead(classify(result.cause()));
      return;
    }
    ctx.fireChannelRead(msg);
  }

  private RejectedRequest classify(final Throwable cause) {
    if (cause instanceof TooLongHttpLineException) {
      return RejectedRequest.requestLineTooLong(maxInitialLineLength);
    }
    if (cause instanceof TooLongHttpHeaderException) {
      return RejectedRequest.headersTooLarge(maxHeaderSize);
    }
    return RejectedRequest.badRequest();
  }
}
