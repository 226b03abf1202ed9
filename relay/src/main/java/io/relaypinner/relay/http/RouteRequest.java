package io.relaypinner.relay.http;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.EventLoop;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.QueryStringDecoder;
import java.net.SocketAddress;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * One request as a route sees it: method, raw path (not percent-decoded), decoded query
 * parameters, headers and the aggregated body, plus the connection's event loop for timers. Valid
 * until the route's future completes; copy what you need beyond that.
 */
public final class RouteRequest {
  private final Channel channel;
  private final FullHttpRequest request;
  private final String path;
  private QueryStringDecoder query;

  RouteRequest(final Channel channel, final FullHttpRequest request, final String path) {
    this.channel = channel;
    this.request = request;
    this.path = path;
  }

  public HttpMethod method() {
    return request.method();
  }

  /** The request target as sent, e.g. {@code /pinning/databases?address=%2Forbitdb%2Fzdpu…}. */
  public String uri() {
    return request.uri();
  }

  /** The path part of the target, without query, not percent-decoded. */
  public String path() {
    return path;
  }

  public HttpHeaders headers() {
    return request.headers();
  }

  /** The body (at most the configured limit); do not release it. */
  public ByteBuf content() {
    return request.content();
  }

  /**
   * The body as a stream, on a route registered with {@link Router.Builder#streamed} (whose
   * {@link #content()} is then empty); read it off the event loop. Empty on other routes.
   */
  public Optional<RequestBody> body() {
    return request instanceof StreamedBodyHandler.StreamedHttpRequest streamed
        ? Optional.of(streamed.body()) : Optional.empty();
  }

  /** The first value of a query parameter, percent-decoded. */
  public Optional<String> queryParameter(final String name) {
    final List<String> values = queryParameters().get(name);
    return values == null || values.isEmpty() ? Optional.empty() : Optional.of(values.get(0));
  }

  /** All query parameters, percent-decoded. */
  public Map<String, List<String>> queryParameters() {
    if (query == null) {
      query = new QueryStringDecoder(request.uri());
    }
    return query.parameters();
  }

  /**
   * Whether the query string decodes (a {@code %} not followed by two hex digits does not):
   * checked before the route runs, so routes may read parameters without handling it.
   */
  boolean hasValidQuery() {
    try {
      queryParameters();
      return true;
    } catch (final IllegalArgumentException e) {
      return false;
    }
  }

  /** The loop this connection runs on: schedule timeouts here. */
  public EventLoop eventLoop() {
    return channel.eventLoop();
  }

  public ByteBufAllocator alloc() {
    return channel.alloc();
  }

  public SocketAddress remoteAddress() {
    return channel.remoteAddress();
  }
}
