package io.relaypinner.relay.http;

import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.handler.codec.http.HttpDecoderConfig;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.stream.ChunkedWriteHandler;
import io.netty.handler.timeout.IdleStateHandler;
import io.relaypinner.relay.config.HttpConfig;
import java.util.concurrent.TimeUnit;

/**
 * The pipeline of one HTTP connection, one concern per handler:
 *
 * <pre>
 *   idle        IdleStateHandler: an event after idleTimeout without reads or writes
 *   codec       HttpServerCodec: request line and headers bounded (too long = decoder failure)
 *   cors        CorsHandler: CORS headers on every response written below it
 *   guard       HttpRequestGuard: decoder failures become 431 / 400
 *   bodiless    BodilessRequestHandler: a request without body becomes one full message
 *   streamed    StreamedBodyHandler: bodies of streamed routes go to the route as they arrive
 *   authorized  BodyAuthorizationHandler: a token-protected route's token checked before its
 *               body is read (a refused request reaches its route without the body)
 *   aggregator  LimitedHttpObjectAggregator: bodies up to maxBodySize, else 413
 *   dispatcher  HttpDispatcher: OPTIONS, routing, keep-alive, ordering, idle close
 * </pre>
 *
 * A later {@code /ipfs/} gateway that streams will sit next to the aggregator, not behind it.
 */
final class HttpServerInitializer extends ChannelInitializer<Channel> {
  /** Body pieces handed up by the decoder; the aggregator joins them. */
  private static final int MAX_CHUNK_SIZE = 8 * 1024;

  private final HttpConfig config;
  private final CorsPolicy cors;
  private final Router router;
  private final HttpResponses responses;
  private final HttpMetrics metrics;

  HttpServerInitializer(final HttpConfig config, final CorsPolicy cors, final Router router,
      final HttpResponses responses, final HttpMetrics metrics) {
    this.config = config;
    this.cors = cors;
    this.router = router;
    this.responses = responses;
    this.metrics = metrics;
  }

  @Override
  protected void initChannel(final Channel channel) {
    final HttpDecoderConfig decoder = new HttpDecoderConfig()
        .setMaxInitialLineLength(config.maxInitialLineLength())
        .setMaxHeaderSize(config.maxHeaderSize())
        .setMaxChunkSize(MAX_CHUNK_SIZE);
    channel.pipeline()
        .addLast("idle", new IdleStateHandler(
            0, 0, config.idleTimeout().toMillis(), TimeUnit.MILLISECONDS))
        .addLast("codec", new HttpServerCodec(decoder))
        .addLast("cors", new CorsHandler(cors))
        .addLast("guard",
            new HttpRequestGuard(config.maxInitialLineLength(), config.maxHeaderSize()))
        .addLast("bodiless", new BodilessRequestHandler())
        .addLast("streamed", new StreamedBodyHandler(router, config.idleTimeout()))
        .addLast("authorized", new BodyAuthorizationHandler(router))
        .addLast("aggregator", new LimitedHttpObjectAggregator(config.maxBodySize()))
        // Streamed bodies (spec 4.6) leave through here, queued behind in order.
        .addLast("chunked", new ChunkedWriteHandler())
        .addLast("dispatcher", new HttpDispatcher(router, responses, metrics));
  }
}
