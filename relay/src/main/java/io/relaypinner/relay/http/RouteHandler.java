package io.relaypinner.relay.http;

import io.netty.handler.codec.http.FullHttpResponse;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;

/**
 * Answers one route. Called on the connection's event loop, so it must not block: a route that
 * waits on background work (a sync, a block fetch) returns an incomplete future and completes it
 * from any thread; the response is then written on the event loop, in request order.
 *
 * <p>The request, including its body, stays valid until the returned future completes. A future
 * that completes exceptionally becomes a 500 {@code internal_error} (logged with its stack trace):
 * routes answer client mistakes with their own 4xx responses.
 */
@FunctionalInterface
public interface RouteHandler {
  CompletableFuture<FullHttpResponse> handle(RouteRequest request);

  /** A route that answers at once. */
  static RouteHandler sync(final Function<RouteRequest, FullHttpResponse> handler) {
    return request -> CompletableFuture.completedFuture(handler.apply(request));
  }
}
