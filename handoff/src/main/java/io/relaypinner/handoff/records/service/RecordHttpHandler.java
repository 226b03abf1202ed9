package io.relaypinner.handoff.records.service;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.netty.buffer.ByteBufUtil;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.QueryStringDecoder;
import io.netty.handler.timeout.IdleStateEvent;
import io.relaypinner.handoff.json.CanonicalJson;
import io.relaypinner.handoff.records.AlephMessage;
import io.relaypinner.handoff.records.ErrorCodes;
import io.relaypinner.handoff.records.PostPage;
import io.relaypinner.handoff.records.PostQuery;
import io.relaypinner.handoff.records.PostRecord;
import io.relaypinner.handoff.records.PublishResult;
import io.relaypinner.handoff.records.RecordRejectedException;
import io.relaypinner.handoff.records.RecordStoreException;
import io.relaypinner.handoff.wallet.EthAddress;
import io.relaypinner.handoff.wallet.WalletFormatException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.LongConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Routes one connection's requests to the {@link LocalRecordStore}. The store's work (signature
 * checks, disk writes) runs on the service's bounded worker, never on the event loop; while a
 * request is being served the connection stops reading, so responses leave in request order and a
 * client cannot queue unbounded work. Routes:
 *
 * <pre>
 *   POST /api/v0/messages                    {"sync":bool,"message":{…}}
 *   GET  /api/v0/aggregates/ADDRESS.json     ?keys=a,b
 *   GET  /api/v0/posts.json                  ?types=&amp;refs=&amp;addresses=&amp;channels=
 *                                            &amp;hashes=&amp;pagination=&amp;page=&amp;sortOrder=
 *   GET  /health
 * </pre>
 */
final class RecordHttpHandler extends SimpleChannelInboundHandler<FullHttpRequest> {
  private static final Logger LOG = LoggerFactory.getLogger(RecordHttpHandler.class);
  private static final String MESSAGES = "/api/v0/messages";
  private static final String AGGREGATES = "/api/v0/aggregates/";
  private static final String POSTS = "/api/v0/posts.json";
  private static final String HEALTH = "/health";

  private final LocalRecordStore store;
  private final Executor worker;
  private final int maxPagination;
  private final LongConsumer rejected;

  RecordHttpHandler(final LocalRecordStore store, final Executor worker, final int maxPagination,
      final LongConsumer rejected) {
    this.store = store;
    this.worker = worker;
    this.maxPagination = maxPagination;
    this.rejected = rejected;
  }

  @Override
  protected void channelRead0(final ChannelHandlerContext ctx, final FullHttpRequest request) {
    final boolean keepAlive = HttpUtil.isKeepAlive(request) && request.decoderResult().isSuccess();
    if (request.decoderResult().isFailure()) {
      rejected.accept(1);
      LOG.debug("malformed HTTP request from {}: {}", ctx.channel().remoteAddress(),
          request.decoderResult().cause().toString());
      respond(ctx, RecordHttpResponses.error(400, "bad_request", "malformed HTTP request"),
          false);
      return;
    }
    final QueryStringDecoder uri = new QueryStringDecoder(request.uri());
    final String path = uri.path();
    final HttpMethod method = request.method();
    if (HttpMethod.OPTIONS.equals(method)) {
      respond(ctx, preflight(), keepAlive);
      return;
    }
    final Route route = route(path);
    if (route == null) {
      respond(ctx, RecordHttpResponses.error(404, ErrorCodes.NOT_FOUND, "no route " + path),
          keepAlive);
      return;
    }
    if (!route.method.equals(method)) {
      respond(ctx, RecordHttpResponses.error(405, ErrorCodes.METHOD_NOT_ALLOWED,
          path + " takes " + route.method), keepAlive);
      return;
    }
    final byte[] body = ByteBufUtil.getBytes(request.content());
    final Map<String, List<String>> parameters = uri.parameters();
    // One request at a time per connection: stop reading until this one is answered.
    ctx.channel().config().setAutoRead(false);
    try {
      worker.execute(() -> respond(ctx, serve(route, path, parameters, body), keepAlive));
    } catch (final RejectedExecutionException e) {
      respond(ctx, RecordHttpResponses.error(503, ErrorCodes.BUSY,
          "the record service is busy; retry later"), false);
    }
  }

  private enum Route {
    PUBLISH(HttpMethod.POST), AGGREGATES(HttpMethod.GET), POSTS(HttpMethod.GET),
    HEALTH(HttpMethod.GET);

    private final HttpMethod method;

    Route(final HttpMethod method) {
      this.method = method;
    }
  }

  private static Route route(final String path) {
    if (MESSAGES.equals(path)) {
      return Route.PUBLISH;
    }
    if (POSTS.equals(path)) {
      return Route.POSTS;
    }
    if (HEALTH.equals(path)) {
      return Route.HEALTH;
    }
    if (path.startsWith(AGGREGATES) && path.endsWith(".json")
        && path.length() > AGGREGATES.length() + ".json".length()) {
      return Route.AGGREGATES;
    }
    return null;
  }

  /** Runs on the worker. */
  private FullHttpResponse serve(final Route route, final String path,
      final Map<String, List<String>> parameters, final byte[] body) {
    try {
      return switch (route) {
        case PUBLISH -> publish(body);
        case AGGREGATES -> aggregates(
            path.substring(AGGREGATES.length(), path.length() - ".json".length()), parameters);
        case POSTS -> posts(parameters);
        case HEALTH -> health();
      };
    } catch (final RecordRejectedException e) {
      rejected.accept(1);
      LOG.debug("rejected {} request: {} {}", route, e.code(), e.getMessage());
      final ObjectNode error = RecordHttpResponses.errorBody(e.code(), e.getMessage());
      if (route == Route.PUBLISH) {
        // What Aleph clients look at to tell a rejection from a pending message.
        error.put("message_status", "rejected");
      }
      return RecordHttpResponses.json(e.httpStatus(), error);
    } catch (final RecordStoreException e) {
      LOG.error("record store failure serving {}: {}", route, e.getMessage());
      return RecordHttpResponses.error(500, ErrorCodes.INTERNAL_ERROR, "record store failure");
    } catch (final RuntimeException e) {
      LOG.error("bug serving {}", route, e);
      return RecordHttpResponses.error(500, ErrorCodes.INTERNAL_ERROR, "internal error");
    }
  }

  private FullHttpResponse publish(final byte[] body) {
    final JsonNode request;
    try {
      request = CanonicalJson.parse(body);
    } catch (final JsonProcessingException e) {
      throw new RecordRejectedException(400, ErrorCodes.INVALID_JSON,
          "request body is not JSON: " + e.getOriginalMessage());
    }
    if (!request.isObject() || !request.path("message").isObject()) {
      throw new RecordRejectedException(400, ErrorCodes.INVALID_REQUEST,
          "request body must be {\"sync\":true|false,\"message\":{…}}");
    }
    final JsonNode sync = request.get("sync");
    if (sync != null && !sync.isBoolean()) {
      throw new RecordRejectedException(400, ErrorCodes.INVALID_REQUEST,
          "sync must be true or false");
    }
    final PublishResult result = store.publish(AlephMessage.fromJson(request.get("message")));
    final ObjectNode response = JsonNodeFactory.instance.objectNode();
    final ObjectNode publication = response.putObject("publication_status");
    publication.put("status", "success");
    publication.putArray("failed");
    response.put("message_status", result.status());
    response.put("item_hash", result.itemHash());
    return RecordHttpResponses.json(200, response);
  }

  private FullHttpResponse aggregates(final String address,
      final Map<String, List<String>> parameters) {
    final EthAddress owner;
    try {
      owner = EthAddress.parse(address);
    } catch (final WalletFormatException e) {
      throw new RecordRejectedException(400, ErrorCodes.INVALID_ADDRESS,
          "not an address: " + e.getMessage());
    }
    final List<String> keys = new ArrayList<>();
    for (final String value : parameters.getOrDefault("keys", List.of())) {
      for (final String key : value.split(",")) {
        if (!key.isEmpty()) {
          keys.add(key);
        }
      }
    }
    final Map<String, JsonNode> data = store.aggregates(owner, keys);
    if (data.isEmpty()) {
      throw new RecordRejectedException(404, ErrorCodes.AGGREGATE_NOT_FOUND,
          "no aggregate found for " + address + (keys.isEmpty() ? "" : " with keys " + keys));
    }
    final ObjectNode response = JsonNodeFactory.instance.objectNode();
    response.put("address", address);
    final ObjectNode dataNode = response.putObject("data");
    data.forEach(dataNode::set);
    return RecordHttpResponses.json(200, response);
  }

  private FullHttpResponse posts(final Map<String, List<String>> parameters) {
    final PostPage page = store.posts(PostQuery.fromParameters(parameters, maxPagination));
    final ObjectNode response = JsonNodeFactory.instance.objectNode();
    final ArrayNode posts = response.putArray("posts");
    for (final PostRecord post : page.posts()) {
      posts.add(post.toJson());
    }
    response.put("pagination_page", page.page());
    response.put("pagination_total", page.total());
    response.put("pagination_per_page", page.perPage());
    response.put("pagination_item", "posts");
    return RecordHttpResponses.json(200, response);
  }

  private FullHttpResponse health() {
    final ObjectNode response = JsonNodeFactory.instance.objectNode();
    response.put("ok", true);
    response.put("messages", store.messageCount());
    return RecordHttpResponses.json(200, response);
  }

  private static FullHttpResponse preflight() {
    final FullHttpResponse response = new DefaultFullHttpResponse(
        HttpVersion.HTTP_1_1, HttpResponseStatus.NO_CONTENT);
    response.headers()
        .set(HttpHeaderNames.ACCESS_CONTROL_ALLOW_ORIGIN, "*")
        .set(HttpHeaderNames.ACCESS_CONTROL_ALLOW_METHODS, "GET, POST, OPTIONS")
        .set(HttpHeaderNames.ACCESS_CONTROL_ALLOW_HEADERS, "Content-Type")
        .set(HttpHeaderNames.ACCESS_CONTROL_MAX_AGE, "86400");
    return response;
  }

  /** Writes the response (from any thread) and resumes reading, or closes. */
  private static void respond(final ChannelHandlerContext ctx, final FullHttpResponse response,
      final boolean keepAlive) {
    if (keepAlive) {
      response.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.KEEP_ALIVE);
      ctx.writeAndFlush(response).addListener((ChannelFutureListener) future -> {
        if (future.isSuccess()) {
          future.channel().config().setAutoRead(true);
        } else {
          future.channel().close();
        }
      });
    } else {
      response.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
      ctx.writeAndFlush(response).addListener(ChannelFutureListener.CLOSE);
    }
  }

  @Override
  public void userEventTriggered(final ChannelHandlerContext ctx, final Object event)
      throws Exception {
    if (event instanceof IdleStateEvent) {
      LOG.debug("closing idle connection from {}", ctx.channel().remoteAddress());
      ctx.close();
      return;
    }
    super.userEventTriggered(ctx, event);
  }

  @Override
  public void exceptionCaught(final ChannelHandlerContext ctx, final Throwable cause) {
    rejected.accept(1);
    LOG.debug("closing connection from {}: {}", ctx.channel().remoteAddress(), cause.toString());
    ctx.close();
  }
}
