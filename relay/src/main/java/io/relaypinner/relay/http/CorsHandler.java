package io.relaypinner.relay.http;

import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpStatusClass;
import java.util.ArrayDeque;

/**
 * Puts the {@link CorsPolicy} headers on every response of one connection, whichever handler wrote
 * it (the dispatcher, or the guards in front of it). With an origin allowlist the answer depends on
 * the request's {@code Origin}: responses leave in request order (HTTP/1.1 pipelining), so a FIFO
 * of origins pairs each response with its request. Interim {@code 1xx} responses are left alone.
 */
final class CorsHandler extends ChannelDuplexHandler {
  private static final String NO_ORIGIN = "";

  private final CorsPolicy policy;
  private final ArrayDeque<String> origins;

  CorsHandler(final CorsPolicy policy) {
    this.policy = policy;
    this.origins = policy.anyOrigin() ? null : new ArrayDeque<>(2);
  }

  @Override
  public void channelRead(final ChannelHandlerContext ctx, final Object msg) {
    if (origins != null && msg instanceof HttpRequest request) {
      final String origin = request.headers().get(HttpHeaderNames.ORIGIN);
      origins.add(origin == null ? NO_ORIGIN : origin);
    }
    ctx.fireChannelRead(msg);
  }

  @Override
  public void write(final ChannelHandlerContext ctx, final Object msg,
      final ChannelPromise promise) {
    if (msg instanceof HttpResponse response
        && response.status().codeClass() != HttpStatusClass.INFORMATIONAL) {
      String origin = null;
      if (origins != null) {
        final String queued = origins.poll();
        origin = queued == null || queued.isEmpty() ? null : queued;
      }
      policy.apply(response.headers(), origin);
    }
    ctx.write(msg, promise);
  }
}
