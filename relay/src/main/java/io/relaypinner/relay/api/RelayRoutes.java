package io.relaypinner.relay.api;

import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.relaypinner.ipfs.pin.PinStore;
import io.relaypinner.ipfs.unixfs.UnixFsReader;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.multiformats.Multiaddr;
import io.relaypinner.relay.gateway.GatewayMetrics;
import io.relaypinner.relay.gateway.IpfsGatewayRoute;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.relaypinner.relay.http.BearerAuth;
import io.relaypinner.relay.http.HttpResponses;
import io.relaypinner.relay.http.RouteHandler;
import io.relaypinner.relay.http.Router;
import io.relaypinner.relay.sync.SyncEngine;
import io.relaypinner.relay.ui.DashboardPage;
import io.relaypinner.relay.ui.DashboardStatusRoute;
import java.nio.channels.FileChannel;
import java.time.Clock;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * The relay's route set (spec 4) in one place, for the relay itself and for applications that
 * embed it: pick the parts you have, then {@link #router()} (or {@link #addTo} your own
 * {@link Router.Builder}) and serve it with {@code RelayHttpServer} or mount it in your own
 * pipeline with {@code RelayHttpHandlers}.
 *
 * <pre>
 *   Router router = RelayRoutes.builder(responses, clock)
 *       .health(version, status, metricsHttps)
 *       .pinning(syncEngine, apiToken)                 // /pinning/stats, /databases, /sync
 *       .hasEntry(lookup, storage, apiToken)           // /pinning/has-entry
 *       .pinnedOnlyGateway(pins, reader, storage, gatewayMetrics, blockFiles)
 *       .router();
 * </pre>
 */
public final class RelayRoutes {
  private final HttpResponses responses;
  private final Clock clock;
  private final Map<String, RouteHandler> get = new LinkedHashMap<>();
  private final Map<String, RouteHandler> post = new LinkedHashMap<>();
  private RouteHandler gateway;
  /** The {@code POST} routes behind {@code RELAY_API_TOKEN}, with their token check. */
  private final Map<String, BearerAuth> apiTokenPosts = new LinkedHashMap<>();

  private RelayRoutes(final HttpResponses responses, final Clock clock) {
    this.responses = Objects.requireNonNull(responses, "responses");
    this.clock = Objects.requireNonNull(clock, "clock");
  }

  public static RelayRoutes builder(final HttpResponses responses, final Clock clock) {
    return new RelayRoutes(responses, clock);
  }

  /** {@code GET /health} (spec 4.1). */
  public RelayRoutes health(final String version, final NodeStatus status,
      final Supplier<MetricsHttpsStatus> metricsHttps) {
    get.put("/health", new HealthRoute(version, status, metricsHttps, clock, responses));
    return this;
  }

  /** {@code GET /multiaddrs} (spec 4.2). */
  public RelayRoutes multiaddrs(final String version, final NodeStatus status,
      final Supplier<List<Multiaddr>> advertised, final Supplier<MetricsHttpsStatus> metricsHttps,
      final boolean deployedMode) {
    get.put("/multiaddrs", new MultiaddrsRoute(version, status, advertised, metricsHttps,
        deployedMode, clock, responses));
    return this;
  }

  /** {@code GET /metrics} (spec 4.3); scrapes run on {@code scrapeExecutor}. */
  public RelayRoutes metrics(final PrometheusRegistry registry, final Executor scrapeExecutor) {
    get.put("/metrics", new MetricsRoute(registry, scrapeExecutor));
    return this;
  }

  /**
   * {@code GET /pinning/stats}, {@code GET /pinning/databases} and {@code POST /pinning/sync}
   * (spec 2.4-2.7, 4.4, 4.5) on one engine.
   *
   * @param apiToken {@code RELAY_API_TOKEN}: when present, the POST needs the bearer token
   */
  public RelayRoutes pinning(final SyncEngine engine, final Optional<String> apiToken) {
    get.put("/pinning/stats", new PinningStatsRoute(engine, clock, responses));
    get.put("/pinning/databases", new PinningDatabasesRoute(engine.history(), responses));
    return apiTokenPost("/pinning/sync", new PinningSyncRoute(engine, responses), apiToken);
  }

  /**
   * {@code POST /pinning/has-entry} (orbitdb-relay 0.10): whether one entry is in the relay's own
   * log of a database, with the token rule of {@code POST /pinning/sync}.
   *
   * @param storage runs the lookups (they may read the datastore)
   * @param apiToken {@code RELAY_API_TOKEN}: when present, the POST needs the bearer token
   */
  public RelayRoutes hasEntry(final EntryLookup lookup, final Executor storage,
      final Optional<String> apiToken) {
    return apiTokenPost("/pinning/has-entry", new HasEntryRoute(lookup, storage, responses),
        apiToken);
  }

  /**
   * The one rule of the {@code RELAY_API_TOKEN} routes: without the token the route answers 401
   * {@code unauthorized} before it runs, and (registered in {@link #addTo}) before its body is
   * read: an anonymous client cannot make the relay aggregate one.
   */
  private RelayRoutes apiTokenPost(final String path, final RouteHandler route,
      final Optional<String> apiToken) {
    final BearerAuth auth = BearerAuth.apiToken(apiToken);
    post.put(path, request -> auth.permits(request.headers().get(HttpHeaderNames.AUTHORIZATION))
        ? route.handle(request)
        : CompletableFuture.completedFuture(BearerAuth.apiTokenRequired(responses)));
    apiTokenPosts.put(path, auth);
    return this;
  }

  /**
   * {@code GET /dashboard}, the status page, and {@code GET /dashboard/status}, the JSON it
   * needs beyond the other routes (see docs/operators.md).
   */
  public RelayRoutes dashboard(final DashboardStatusRoute status) {
    get.put("/dashboard", new DashboardPage());
    get.put("/dashboard/status", Objects.requireNonNull(status, "status"));
    return this;
  }

  /** {@code GET /ipfs/…} (spec 4.6) served by {@code route}, whatever its gateway mode. */
  public RelayRoutes gateway(final RouteHandler route) {
    this.gateway = Objects.requireNonNull(route, "route");
    return this;
  }

  /**
   * {@code GET /ipfs/…} strictly from local pins ({@code pinned-only}): never asks the network.
   *
   * @param blockFiles opens a raw block's file for zero-copy sends, or empty
   */
  public RelayRoutes pinnedOnlyGateway(final PinStore pins, final UnixFsReader reader,
      final Executor storage, final GatewayMetrics metrics,
      final Function<Cid, Optional<FileChannel>> blockFiles) {
    return gateway(new IpfsGatewayRoute(pins, reader, storage, responses, metrics, blockFiles));
  }

  /** Adds the chosen routes to {@code builder}, next to the embedding application's own. */
  public Router.Builder addTo(final Router.Builder builder) {
    get.forEach(builder::get);
    post.forEach(builder::post);
    apiTokenPosts.forEach((path, auth) ->
        builder.authorizedBody(HttpMethod.POST, path, auth::permits));
    if (gateway != null) {
      builder.getPrefix(IpfsGatewayRoute.PREFIX, gateway);
    }
    return builder;
  }

  /** A router with the chosen routes only. */
  public Router router() {
    return addTo(Router.builder()).build();
  }
}
