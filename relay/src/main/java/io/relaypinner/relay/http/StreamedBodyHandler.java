package io.relaypinner.relay.http;

import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.EmptyHttpHeaders;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.LastHttpContent;
import java.io.IOException;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * Hands the body of a request on a streamed route ({@link Router.Builder#streamed}) to the route
 * as it arrives instead of aggregating it: the request goes on at once as a
 * {@link StreamedHttpRequest} (empty content, a {@link RequestBody} to read), and its body chunks
 * feed that stream, with back-pressure (reading pauses while the reader is {@link
 * RequestBody#HIGH_WATER} behind). A declared {@code Content-Length} over the route's limit is
 * refused (413 with the route's code) before any byte is read; a body that goes over it while
 * arriving fails the stream with {@link RequestBody.TooLargeException}. On a route with a total
 * deadline, a timer on the connection's event loop cuts a body that has not ended by then
 * ({@link RequestBody.DeadlineException}; the route answers and frees what it holds). Once the
 * route answers, the rest of the body is read and discarded, so the connection stays usable, up
 * to {@link #MAX_DISCARDED} bytes, after which the connection is closed. Other requests pass
 * through untouched.
 */
final class StreamedBodyHandler extends ChannelInboundHandlerAdapter {
  private static final RequestBody.FlowControl NO_FLOW = new RequestBody.FlowControl() {
    @Override
    public void pause() {}

    @Override
    public void resume() {}
  };

  /**
   * Bytes of an abandoned body (the route answered, or refused it as too large) read and
   * dropped before the connection is closed instead.
   */
  static final long MAX_DISCARDED = 16L << 20;

  private final Router router;
  private final Duration stall;

  private RequestBody current;
  private ScheduledFuture<?> deadline;
  private long discarded;

  StreamedBodyHandler(final Router router, final Duration stall) {
    this.router = router;
    this.stall = stall;
  }

  @Override
  public void channelRead(final ChannelHandlerContext ctx, final Object msg) {
    if (current != null && msg instanceof HttpContent content) {
      final RequestBody body = current;
      final boolean last = msg instanceof LastHttpContent;
      if (last) {
        current = null;
      }
      final int size = content.content().readableBytes();
      if (!body.offer(content.content().retain())) {
        // Nobody reads this body any more: discarded, up to a bound.
        discarded += size;
        if (discarded > MAX_DISCARDED && !last) {
          content.release();
          current = null;
          ctx.close();
          return;
        }
      }
      content.release();
      if (last) {
        body.end();
        cancelDeadline();
        discarded = 0;
      }
      return;
    }
    if (current != null) {
      // The decoder gave up inside the body (the guard turned it into a rejection).
      current.fail(new IOException("the request body is not valid HTTP"));
      current = null;
      cancelDeadline();
    }
    if (msg instanceof HttpRequest request && !(msg instanceof FullHttpRequest)
        && request.decoderResult().isSuccess()) {
      final Optional<Router.StreamedRoute> route =
          router.streamedRoute(request.method(), HttpDispatcher.pathOf(request.uri()));
      if (route.isPresent()) {
        start(ctx, request, route.get());
        return;
      }
    }
    ctx.fireChannelRead(msg);
  }

  private void start(final ChannelHandlerContext ctx, final HttpRequest request,
      final Router.StreamedRoute route) {
    final long declared = HttpUtil.getContentLength(request, -1L);
    if (declared > route.maxBytes()) {
      // Refused before a byte is read; the body that follows is discarded (a body abandoned
      // from the start) while the dispatcher answers and closes.
      final RequestBody refused = new RequestBody(route.maxBytes(), stall, NO_FLOW);
      refused.abandon();
      current = refused;
      ctx.fireChannelRead(new RejectedRequest(HttpResponseStatus.REQUEST_ENTITY_TOO_LARGE,
          route.tooLargeCode(), "request body is larger than " + route.maxBytes() + " bytes"));
      return;
    }
    if (HttpUtil.is100ContinueExpected(request)) {
      ctx.writeAndFlush(new DefaultFullHttpResponse(request.protocolVersion(),
          HttpResponseStatus.CONTINUE, Unpooled.EMPTY_BUFFER));
      request.headers().remove(HttpHeaderNames.EXPECT);
    }
    final ChannelFlow flow = new ChannelFlow(ctx);
    final RequestBody body = new RequestBody(route.maxBytes(), stall, flow);
    flow.body = body;
    current = body;
    cancelDeadline();
    if (!route.deadline().isZero()) {
      final Duration limit = route.deadline();
      // On this loop (its ticker), so the cut and the chunks it races are ordered.
      deadline = ctx.executor().schedule(() -> {
        deadline = null;
        body.expire(limit);
      }, limit.toNanos(), TimeUnit.NANOSECONDS);
    }
    ctx.fireChannelRead(new StreamedHttpRequest(request, body));
  }

  private void cancelDeadline() {
    if (deadline != null) {
      deadline.cancel(false);
      deadline = null;
    }
  }

  @Override
  public void channelInactive(final ChannelHandlerContext ctx) {
    if (current != null) {
      current.fail(new IOException("the connection closed before the request body ended"));
      current = null;
    }
    cancelDeadline();
    ctx.fireChannelInactive();
  }

  /**
   * Pauses and resumes the connection's reading for a body. The body changes state on two
   * threads (the event loop offers, a worker reads) and tells us outside its lock, so the two
   * calls can reach the event loop in either order: each task therefore applies the body's state
   * as it is when the task runs, never the edge that queued it (a late "pause" after a "resume"
   * would otherwise leave the connection unread for good).
   */
  static final class ChannelFlow implements RequestBody.FlowControl, Runnable {
    private final ChannelHandlerContext ctx;
    volatile RequestBody body;

    ChannelFlow(final ChannelHandlerContext ctx) {
      this.ctx = ctx;
    }

    @Override
    public void pause() {
      ctx.executor().execute(this);
    }

    @Override
    public void resume() {
      ctx.executor().execute(this);
    }

    @Override
    public void run() {
      final boolean read = !body.paused();
      if (ctx.channel().config().isAutoRead() != read) {
        ctx.channel().config().setAutoRead(read);
        if (read) {
          ctx.read();
        }
      }
    }
  }

  /** A request whose body is read from {@link #body()}; releasing it abandons the body. */
  static final class StreamedHttpRequest extends DefaultFullHttpRequest {
    private final RequestBody body;

    StreamedHttpRequest(final HttpRequest head, final RequestBody body) {
      super(head.protocolVersion(), head.method(), head.uri(), Unpooled.EMPTY_BUFFER,
          head.headers(), EmptyHttpHeaders.INSTANCE);
      this.body = body;
    }

    RequestBody body() {
      return body;
    }

    @Override
    public boolean release() {
      body.abandon();
      return super.release();
    }

    @Override
    public boolean release(final int decrement) {
      body.abandon();
      return super.release(decrement);
    }
  }
}
