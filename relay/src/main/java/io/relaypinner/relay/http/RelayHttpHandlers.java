package io.relaypinner.relay.http;

import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.handler.ssl.SslContext;
import io.relaypinner.relay.config.CorsConfig;
import io.relaypinner.relay.config.HttpConfig;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * The relay's HTTP handling as reusable Netty pieces, for applications that embed the relay's
 * routes (spec 1: "embedded consumers may reuse the same handlers through a request-handler
 * factory or a server class"). The server class is {@link RelayHttpServer}; this is the factory:
 *
 * <pre>
 *   ChannelInitializer&lt;Channel&gt; http = RelayHttpHandlers.initializer(router, httpConfig,
 *       corsConfig, responses, new HttpMetrics(registry));
 *   serverBootstrap.childHandler(new ChannelInitializer&lt;Channel&gt;() {
 *     protected void initChannel(Channel ch) {
 *       ch.pipeline().addLast(myOwnHandlers...);   // e.g. a proxy-protocol decoder
 *       ch.pipeline().addLast(http);               // shareable: one instance for all channels
 *     }
 *   });
 * </pre>
 *
 * The initializer installs the whole per-connection pipeline (codec, limits, CORS, body
 * aggregation, routing; see {@code HttpServerInitializer}) at its place and removes itself.
 */
public final class RelayHttpHandlers {
  private RelayHttpHandlers() {}

  /** The plain HTTP pipeline for {@code router}; one instance serves every connection. */
  public static ChannelInitializer<Channel> initializer(final Router router,
      final HttpConfig config, final CorsConfig cors, final HttpResponses responses,
      final HttpMetrics metrics) {
    return new HttpServerInitializer(Objects.requireNonNull(config, "config"),
        new CorsPolicy(Objects.requireNonNull(cors, "cors")),
        Objects.requireNonNull(router, "router"), Objects.requireNonNull(responses, "responses"),
        Objects.requireNonNull(metrics, "metrics"));
  }

  /**
   * The same pipeline behind TLS: each new connection takes the context current at accept time
   * (so a renewed certificate applies to new connections), and is closed when there is none.
   */
  public static ChannelInitializer<Channel> tlsInitializer(
      final Supplier<Optional<SslContext>> tls, final ChannelInitializer<Channel> http) {
    Objects.requireNonNull(tls, "tls");
    Objects.requireNonNull(http, "http");
    return new ChannelInitializer<>() {
      @Override
      protected void initChannel(final Channel channel) {
        final Optional<SslContext> context = tls.get();
        if (context.isEmpty()) {
          channel.close();
          return;
        }
        channel.pipeline().addLast("tls", context.get().newHandler(channel.alloc()));
        channel.pipeline().addLast(http);
      }
    };
  }
}
