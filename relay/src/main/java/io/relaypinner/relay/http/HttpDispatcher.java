package io.relaypinner.relay.http;

import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.DefaultFileRegion;
import io.netty.channel.socket.ChannelInputShutdownEvent;
import io.netty.channel.socket.DuplexChannel;
import io.netty.handler.codec.http.DefaultHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpChunkedInput;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.handler.ssl.NotSslRecordException;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.stream.ChunkedNioFile;
import io.netty.handler.stream.ChunkedWriteHandler;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.util.ReferenceCountUtil;
import io.relaypinner.common.Failures;
import java.io.IOException;
import java.util.ArrayDeque;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The last handler of an HTTP connection: answers {@code OPTIONS} for any path (spec 4.7), routes
 * everything else through the {@link Router} (404 plain text, 405 JSON with {@code Allow}), turns
 * {@link RejectedRequest}s into JSON errors, and writes the response with {@code Content-Length},
 * the keep-alive decision, and no body for {@code HEAD}.
 *
 * <p>Ordering: HTTP/1.1 responses must leave in request order, but routes may answer
 * asynchronously. One request is served at a time; requests that arrive meanwhile (pipelining)
 * wait in a queue, and reading pauses as soon as one waits ({@link #MAX_QUEUED}). Synchronous
 * answers are written without a flush and flushed once per read batch.
 *
 * <p>Closing: after a request that cannot be trusted further (413, 431, 400), and after any
 * answer sent with {@code Connection: close} (the client asked for it, or a route answered early,
 * e.g. a 403 or 503 while a body is still arriving), our side is shut down for output once the
 * answer is written, and what the client still sends is read and dropped before it reaches the
 * pipeline's decoders ({@link LingerDrain}): the connection is closed once the
 * client closes, after {@link #LINGER_MILLIS}, or after {@link #LINGER_MAX_BYTES} dropped,
 * whichever comes first. Closing at once while the client is still sending would make the
 * kernel reset the connection (unread data in its buffer), and the client could lose the
 * answer (RFC 9112 9.6).
 */
final class HttpDispatcher extends ChannelInboundHandlerAdapter {
  private static final Logger LOG = LoggerFactory.getLogger(HttpDispatcher.class);
  /**
   * Pipelined requests waiting per connection before reading pauses: one, so a connection has
   * the request being served and what one read delivered meanwhile, not 16 aggregated bodies of
   * up to 64 KiB each (issue 36). Pipelining clients are rare and still served, in order.
   */
  static final int MAX_QUEUED = 1;
  /** How long a client answered with {@code Connection: close} may keep sending. */
  static final long LINGER_MILLIS = 2_000;
  /** Bytes such a client may send after its answer before the connection is closed anyway. */
  static final long LINGER_MAX_BYTES = 4L << 20;
  private static final ChannelFutureListener LINGER_AND_CLOSE = HttpDispatcher::lingerAndClose;
  /** Read size for file bodies on TLS connections, where sendfile cannot be used. */
  private static final int FILE_CHUNK_SIZE = 64 * 1024;

  /** The facts about a request the response needs once the route answers. */
  private record Exchange(
      FullHttpRequest request, String route, HttpMethod method, boolean keepAlive,
      boolean http10) {}

  private final Router router;
  private final HttpResponses responses;
  private final HttpMetrics metrics;
  private final ArrayDeque<Object> queued = new ArrayDeque<>();
  private boolean inFlight;
  private boolean closing;
  private boolean inReadBatch;
  private boolean flushNeeded;
  private boolean readPaused;
  private boolean inputShutdown;

  HttpDispatcher(final Router router, final HttpResponses responses, final HttpMetrics metrics) {
    this.router = router;
    this.responses = responses;
    this.metrics = metrics;
  }

  @Override
  public void channelActive(final ChannelHandlerContext ctx) {
    metrics.connectionOpened();
    ctx.fireChannelActive();
  }

  @Override
  public void channelInactive(final ChannelHandlerContext ctx) {
    metrics.connectionClosed();
    closing = true;
    releaseQueued();
    ctx.fireChannelInactive();
  }

  @Override
  public void channelRead(final ChannelHandlerContext ctx, final Object msg) {
    inReadBatch = true;
    if (closing) {
      ReferenceCountUtil.release(msg);
      return;
    }
    if (inFlight || !queued.isEmpty()) {
      queued.add(msg);
      if (queued.size() >= MAX_QUEUED && !readPaused) {
        readPaused = true;
        ctx.channel().config().setAutoRead(false);
      }
      return;
    }
    dispatch(ctx, msg);
  }

  @Override
  public void channelReadComplete(final ChannelHandlerContext ctx) {
    inReadBatch = false;
    if (flushNeeded) {
      flushNeeded = false;
      ctx.flush();
    }
    ctx.fireChannelReadComplete();
  }

  @Override
  public void userEventTriggered(final ChannelHandlerContext ctx, final Object evt) {
    if (evt instanceof IdleStateEvent) {
      // A slow route (a sync waiting for its timeout) is not idleness on the client's part.
      if (!inFlight && queued.isEmpty()) {
        LOG.debug("closing idle HTTP connection from {}", ctx.channel().remoteAddress());
        ctx.close();
      }
      return;
    }
    if (evt instanceof ChannelInputShutdownEvent) {
      // The client half-closed after its requests (HTTP/1.1 allows it; nc -N, some proxies):
      // answer what it asked, then close. Closing at once lost the answers of asynchronous
      // routes (found by HttpRoutesFuzzer: a GET /ipfs/ answered nothing).
      inputShutdown = true;
      closeIfAnswered(ctx);
      return;
    }
    ctx.fireUserEventTriggered(evt);
  }

  private void closeIfAnswered(final ChannelHandlerContext ctx) {
    if (inputShutdown && !inFlight && queued.isEmpty() && ctx.channel().isActive()) {
      // After whatever is written and not yet flushed.
      ctx.writeAndFlush(Unpooled.EMPTY_BUFFER).addListener(ChannelFutureListener.CLOSE);
    }
  }

  @Override
  public void exceptionCaught(final ChannelHandlerContext ctx, final Throwable cause) {
    final boolean tls = isTlsFailure(cause);
    if (tls) {
      metrics.error(HttpMetrics.REASON_BAD_TLS);
    }
    if (cause instanceof IOException || tls) {
      // Resets, broken pipes and bad TLS (plain HTTP on the HTTPS port, failed handshakes) are
      // the network's or the client's doing: no stack trace.
      LOG.debug("HTTP connection from {} failed: {}", ctx.channel().remoteAddress(),
          cause.toString());
    } else {
      LOG.error("HTTP connection from {} failed", ctx.channel().remoteAddress(), cause);
    }
    closing = true;
    ctx.close();
  }

  private static boolean isTlsFailure(final Throwable error) {
    for (Throwable cause = error; cause != null; cause = cause.getCause()) {
      if (cause instanceof NotSslRecordException || cause instanceof SSLException) {
        return true;
      }
      if (cause.getCause() == cause) {
        break;
      }
    }
    return false;
  }

  private void dispatch(final ChannelHandlerContext ctx, final Object msg) {
    if (msg instanceof FullHttpRequest request) {
      serve(ctx, request);
    } else if (msg instanceof RejectedRequest rejected) {
      reject(ctx, rejected);
    } else {
      // Nothing else is produced by the handlers in front of us.
      LOG.debug("dropping unexpected message {}", msg.getClass().getName());
      ReferenceCountUtil.release(msg);
    }
  }

  private void serve(final ChannelHandlerContext ctx, final FullHttpRequest request) {
    final HttpMethod method = request.method();
    final String path = pathOf(request.uri());
    final boolean keepAlive = HttpUtil.isKeepAlive(request);
    final boolean http10 = request.protocolVersion().equals(HttpVersion.HTTP_1_0);

    if (HttpMethod.OPTIONS.equals(method)) {
      final String route = router.routeOf(path);
      final Exchange exchange = new Exchange(request,
          route == null ? HttpMetrics.ROUTE_UNMATCHED : route, method, keepAlive, http10);
      complete(ctx, exchange, HttpResponses.noContent());
      return;
    }

    final Router.Match match = router.match(method, path);
    if (match instanceof Router.Found found) {
      final Exchange exchange = new Exchange(request, found.route(), method, keepAlive, http10);
      final RouteRequest routeRequest = new RouteRequest(ctx.channel(), request, path);
      if (!routeRequest.hasValidQuery()) {
        // Found by HttpRoutesFuzzer: "?%%" made every route reading a parameter throw (a 500
        // and a stack trace for the client's fault).
        metrics.error(ErrorCodes.BAD_REQUEST);
        complete(ctx, exchange, responses.error(HttpResponseStatus.BAD_REQUEST,
            ErrorCodes.BAD_REQUEST, "the query string is not valid percent-encoding"));
        return;
      }
      invoke(ctx, exchange, found.handler(), routeRequest);
    } else if (match instanceof Router.MethodNotAllowed notAllowed) {
      final Exchange exchange =
          new Exchange(request, notAllowed.route(), method, keepAlive, http10);
      final FullHttpResponse response = responses.error(HttpResponseStatus.METHOD_NOT_ALLOWED,
          ErrorCodes.METHOD_NOT_ALLOWED,
          "method " + method.name() + " is not allowed on " + notAllowed.route()
              + " (allowed: " + notAllowed.allow() + ")");
      response.headers().set(HttpHeaderNames.ALLOW, notAllowed.allow());
      metrics.error(ErrorCodes.METHOD_NOT_ALLOWED);
      complete(ctx, exchange, response);
    } else {
      final Exchange exchange =
          new Exchange(request, HttpMetrics.ROUTE_UNMATCHED, method, keepAlive, http10);
      metrics.error(HttpMetrics.REASON_NOT_FOUND);
      complete(ctx, exchange, HttpResponses.notFound());
    }
  }

  private void invoke(final ChannelHandlerContext ctx, final Exchange exchange,
      final RouteHandler handler, final RouteRequest routeRequest) {
    CompletableFuture<FullHttpResponse> future;
    try {
      future = handler.handle(routeRequest);
      if (future == null) {
        future = CompletableFuture.failedFuture(
            new IllegalStateException("route " + exchange.route() + " returned no future"));
      }
    } catch (final RuntimeException e) {
      future = CompletableFuture.failedFuture(e);
    }
    if (future.isDone()) {
      complete(ctx, exchange, outcome(exchange, future));
      return;
    }
    inFlight = true;
    final CompletableFuture<FullHttpResponse> pending = future;
    // Always hop through the loop's queue, even when completed on the loop: no re-entrance
    // into channelRead or drain.
    pending.whenComplete((response, error) -> {
      try {
        ctx.executor().execute(() -> completeAsync(ctx, exchange, pending));
      } catch (final RejectedExecutionException e) {
        // The loop is shutting down: the connection is gone with it.
        if (response instanceof StreamedResponse streamed) {
          streamed.discardBody();
        }
        if (response != null) {
          response.release();
        }
        ReferenceCountUtil.release(exchange.request());
      }
    });
  }

  private void completeAsync(final ChannelHandlerContext ctx, final Exchange exchange,
      final CompletableFuture<FullHttpResponse> future) {
    inFlight = false;
    complete(ctx, exchange, outcome(exchange, future));
    drain(ctx);
  }

  private FullHttpResponse outcome(
      final Exchange exchange, final CompletableFuture<FullHttpResponse> future) {
    Throwable failure;
    try {
      final FullHttpResponse response = future.join();
      if (response != null) {
        return response;
      }
      failure = new IllegalStateException("route " + exchange.route() + " answered null");
    } catch (final CompletionException e) {
      failure = Failures.unwrap(e);
    } catch (final CancellationException e) {
      failure = e;
    }
    final ErrorMapping.Answer answer = ErrorMapping.unhandled(failure);
    if (answer.isInternal()) {
      LOG.error("HTTP route {} {} failed", exchange.method(), exchange.route(), failure);
    } else {
      // A full quota or a shared store's outage: the client may retry later. The store logged
      // it once; a line per request would flood the log while it lasts.
      LOG.debug("HTTP route {} {}: {}", exchange.method(), exchange.route(), failure.toString());
    }
    metrics.error(answer.code());
    return responses.error(answer);
  }

  private void reject(final ChannelHandlerContext ctx, final RejectedRequest rejected) {
    LOG.debug("rejecting HTTP request from {}: {} {}", ctx.channel().remoteAddress(),
        rejected.status().code(), rejected.message());
    metrics.error(rejected.code());
    metrics.requestCompleted(HttpMetrics.ROUTE_REJECTED, null, rejected.status().code());
    final FullHttpResponse response =
        responses.error(rejected.status(), rejected.code(), rejected.message());
    response.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
    closing = true;
    releaseQueued();
    ctx.writeAndFlush(response).addListener(LINGER_AND_CLOSE);
  }

  private void complete(final ChannelHandlerContext ctx, final Exchange exchange,
      final FullHttpResponse response) {
    ReferenceCountUtil.release(exchange.request());
    final int status = response.status().code();
    FullHttpResponse out = response;
    final StreamedResponse streamed = response instanceof StreamedResponse s ? s : null;
    if (streamed != null) {
      HttpUtil.setContentLength(out, streamed.contentLength());
    } else if (status >= 200 && status != 204 && status != 304) {
      HttpUtil.setContentLength(out, out.content().readableBytes());
    }
    if (streamed != null && HttpMethod.HEAD.equals(exchange.method())) {
      streamed.discardBody();
    }
    if (HttpMethod.HEAD.equals(exchange.method()) && out.content().isReadable()) {
      // Same status and headers as GET, Content-Length included, and no body (RFC 9110 9.3.2).
      out = response.replace(Unpooled.EMPTY_BUFFER);
      response.release();
    }
    final boolean close = !exchange.keepAlive() || closing
        || out.headers().containsValue(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE, true);
    if (close) {
      out.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
    } else if (exchange.http10()) {
      out.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.KEEP_ALIVE);
    }
    metrics.requestCompleted(exchange.route(), exchange.method(), status);
    if (streamed != null && !HttpMethod.HEAD.equals(exchange.method())) {
      writeStreamed(ctx, streamed, close);
    } else if (close) {
      closing = true;
      releaseQueued();
      // The answer may come before the request's body has all arrived (an early 401, 403, 503).
      ctx.writeAndFlush(out).addListener(LINGER_AND_CLOSE);
    } else if (inReadBatch) {
      ctx.write(out, ctx.voidPromise());
      flushNeeded = true;
    } else {
      ctx.writeAndFlush(out, ctx.voidPromise());
    }
  }

  /**
   * Writes a streamed response: the head, then the body through the {@link ChunkedWriteHandler},
   * which queues later responses behind it, so request order holds. The head has already told
   * the client the length, so a body that fails midway can only be answered by closing.
   */
  private void writeStreamed(final ChannelHandlerContext ctx, final StreamedResponse streamed,
      final boolean close) {
    final HttpResponse head = new DefaultHttpResponse(
        streamed.protocolVersion(), streamed.status(), streamed.headers());
    final StreamedResponse.FileBody file = streamed.fileBody();
    final boolean tls = ctx.pipeline().get(SslHandler.class) != null;
    final Object body;
    if (file != null && !tls) {
      body = null;
    } else if (file != null) {
      // TLS cannot use sendfile: the bytes must pass through the engine.
      try {
        body = new HttpChunkedInput(new ChunkedNioFile(file.file(), file.position(),
            file.count(), FILE_CHUNK_SIZE));
      } catch (final IOException e) {
        streamed.discardBody();
        streamed.release();
        LOG.debug("cannot read file body for {}: {}", ctx.channel().remoteAddress(),
            e.toString());
        closing = true;
        releaseQueued();
        ctx.close();
        return;
      }
    } else {
      final ChunkedWriteHandler chunked = ctx.pipeline().get(ChunkedWriteHandler.class);
      body = new ContentInput(streamed.openBody(chunked::resumeTransfer, !tls));
    }
    streamed.release();
    ctx.write(head, ctx.voidPromise());
    flushNeeded = false;
    if (close) {
      closing = true;
      releaseQueued();
    }
    final ChannelFuture done;
    if (body == null) {
      // Zero-copy: the region closes the file when released, whatever the outcome.
      final long count = file.count();
      ctx.write(new DefaultFileRegion(file.file(), file.position(), count))
          .addListener((ChannelFuture sent) -> {
            if (sent.isSuccess()) {
              file.onSent().accept(count);
            }
          });
      done = ctx.writeAndFlush(LastHttpContent.EMPTY_LAST_CONTENT);
    } else {
      done = ctx.writeAndFlush(body);
    }
    done.addListener((ChannelFuture written) -> {
      if (!written.isSuccess()) {
        // Client gone or content unreadable after the head left: nothing else can be said.
        LOG.debug("HTTP body to {} not completed: {}", written.channel().remoteAddress(),
            String.valueOf(written.cause()));
        // Close only after what was written has reached the socket: close() alone would drop
        // the blocks still queued in the outbound buffer, and the client gets a clean prefix.
        written.channel().writeAndFlush(Unpooled.EMPTY_BUFFER)
            .addListener(ChannelFutureListener.CLOSE);
      } else if (close) {
        written.channel().close();
      }
    });
  }

  /** Serves queued requests after an asynchronous answer, in order. */
  private void drain(final ChannelHandlerContext ctx) {
    while (!inFlight && !closing && !queued.isEmpty()) {
      dispatch(ctx, queued.poll());
    }
    if (readPaused && queued.size() < MAX_QUEUED && !closing) {
      readPaused = false;
      ctx.channel().config().setAutoRead(true);
    }
    if (flushNeeded && !inReadBatch) {
      flushNeeded = false;
      ctx.flush();
    }
    closeIfAnswered(ctx);
  }

  private void releaseQueued() {
    Object msg;
    while ((msg = queued.poll()) != null) {
      ReferenceCountUtil.release(msg);
    }
  }

  private static void lingerAndClose(final ChannelFuture written) {
    final Channel channel = written.channel();
    if (written.isSuccess() && channel instanceof DuplexChannel duplex && channel.isActive()
        && !duplex.isInputShutdown()) {
      // Everything the client still sends is dropped at the head of the pipeline, unparsed.
      channel.pipeline().addFirst(LingerDrain.NAME, new LingerDrain());
      channel.config().setAutoRead(true);
      duplex.shutdownOutput();
      channel.eventLoop().schedule(() -> {
        channel.close();
      }, LINGER_MILLIS, TimeUnit.MILLISECONDS);
    } else {
      channel.close();
    }
  }

  /**
   * Reads and drops the bytes a client sends after its last answer, so that closing finds the
   * receive buffer empty (no reset); closes once the client closes or after
   * {@link #LINGER_MAX_BYTES}.
   */
  static final class LingerDrain extends ChannelInboundHandlerAdapter {
    static final String NAME = "linger-drain";
    private long dropped;

    @Override
    public void channelRead(final ChannelHandlerContext ctx, final Object msg) {
      if (msg instanceof io.netty.buffer.ByteBuf bytes) {
        dropped += bytes.readableBytes();
      }
      ReferenceCountUtil.release(msg);
      if (dropped > LINGER_MAX_BYTES) {
        ctx.close();
      }
    }

    @Override
    public void channelReadComplete(final ChannelHandlerContext ctx) {
      // Nothing reaches the handlers behind any more.
    }

    @Override
    public void userEventTriggered(final ChannelHandlerContext ctx, final Object evt) {
      if (evt instanceof ChannelInputShutdownEvent) {
        ctx.close();
        return;
      }
      ctx.fireUserEventTriggered(evt);
    }
  }

  /** The path of a request target: origin form, or absolute form as sent to proxies. */
  static String pathOf(final String uri) {
    int start = 0;
    if (!uri.startsWith("/")) {
      final int scheme = uri.indexOf("://");
      if (scheme > 0) {
        final int slash = uri.indexOf('/', scheme + 3);
        if (slash < 0) {
          return "/";
        }
        start = slash;
      }
    }
    int end = uri.length();
    final int query = uri.indexOf('?', start);
    if (query >= 0) {
      end = query;
    }
    final int fragment = uri.indexOf('#', start);
    if (fragment >= 0 && fragment < end) {
      end = fragment;
    }
    return uri.substring(start, end);
  }
}
