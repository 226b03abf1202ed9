package io.relaypinner.relay.http;

import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.ReferenceCountUtil;

/**
 * The token of a route with a body ({@link Router.Builder#authorizedBody}) checked on the
 * request's head, before the aggregator buffers a byte of the body: a request that fails goes
 * on at once without its body (the route answers its own 401), and the body that follows is
 * read and dropped, up to {@link #MAX_DISCARDED} bytes, after which the connection is closed.
 * Without it an anonymous client made the relay aggregate a 64 KiB body per request before any
 * token was looked at. Requests that pass, and every other request, pass through untouched.
 */
final class BodyAuthorizationHandler extends ChannelInboundHandlerAdapter {
  /** Bytes of a refused body read and dropped before the connection is closed instead. */
  static final long MAX_DISCARDED = 1L << 20;

  private final Router router;
  private boolean discarding;
  private long discarded;

  BodyAuthorizationHandler(final Router router) {
    this.router = router;
  }

  @Override
  public void channelRead(final ChannelHandlerContext ctx, final Object msg) {
    if (discarding && msg instanceof HttpContent content) {
      discarded += content.content().readableBytes();
      final boolean last = msg instanceof LastHttpContent;
      ReferenceCountUtil.release(msg);
      if (last) {
        discarding = false;
        discarded = 0;
      } else if (discarded > MAX_DISCARDED) {
        discarding = false;
        ctx.close();
      }
      return;
    }
    if (msg instanceof HttpRequest head && !(msg instanceof FullHttpRequest)
        && head.decoderResult().isSuccess()
        && !router.bodyAuthorized(head.method(), HttpDispatcher.pathOf(head.uri()),
            head.headers().get(HttpHeaderNames.AUTHORIZATION))) {
      final HttpHeaders headers = head.headers().copy();
      headers.remove(HttpHeaderNames.TRANSFER_ENCODING);
      headers.remove(HttpHeaderNames.EXPECT);
      headers.set(HttpHeaderNames.CONTENT_LENGTH, 0);
      final FullHttpRequest bodiless = new DefaultFullHttpRequest(head.protocolVersion(),
          head.method(), head.uri(), Unpooled.EMPTY_BUFFER, headers,
          HttpHeaders.EMPTY_HEADERS);
      discarding = !(msg instanceof LastHttpContent);
      ReferenceCountUtil.release(msg);
      ctx.fireChannelRead(bodiless);
      return;
    }
    ctx.fireChannelRead(msg);
  }
}
