package io.relaypinner.relay.node;

import static io.relaypinner.common.Failures.rootMessage;

import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.prometheus.metrics.instrumentation.jvm.JvmMetrics;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.relaypinner.common.Shutdown;
import io.relaypinner.ipfs.pin.CodecLinkResolver;
import io.relaypinner.ipfs.unixfs.UnixFsReader;
import io.relaypinner.libp2p.http.PeerIdAuthClient;
import io.relaypinner.libp2p.netty.EventLoops;
import io.relaypinner.multiformats.Multiaddr;
import io.relaypinner.relay.RelayVersion;
import io.relaypinner.relay.api.MetricsHttpsStatus;
import io.relaypinner.relay.api.NodeStatus;
import io.relaypinner.relay.api.RelayRoutes;
import io.relaypinner.relay.autotls.AcmeIssuer;
import io.relaypinner.relay.autotls.AutoTlsEngine;
import io.relaypinner.relay.autotls.AutoTlsMetrics;
import io.relaypinner.relay.autotls.AutoTlsOptions;
import io.relaypinner.relay.autotls.AutoTlsService;
import io.relaypinner.relay.autotls.BrokerClient;
import io.relaypinner.relay.config.MetricsHttpsEndpoint;
import io.relaypinner.relay.config.RelayConfig;
import io.relaypinner.relay.export.DatabaseExporter;
import io.relaypinner.relay.export.DatabaseImporter;
import io.relaypinner.relay.export.ExportRoutes;
import io.relaypinner.relay.export.ImportStaging;
import io.relaypinner.relay.gateway.GatewayFallback;
import io.relaypinner.relay.gateway.GatewayMetrics;
import io.relaypinner.relay.gateway.IpfsGatewayRoute;
import io.relaypinner.relay.http.ErrorCodes;
import io.relaypinner.relay.http.ClientAddresses;
import io.relaypinner.relay.http.HttpConnectionBudget;
import io.relaypinner.relay.http.HttpMetrics;
import io.relaypinner.relay.http.HttpResponses;
import io.relaypinner.relay.http.RelayHttpServer;
import io.relaypinner.relay.http.RouteHandler;
import io.relaypinner.relay.http.Router;
import io.relaypinner.relay.identity.NodeIdentity;
import io.relaypinner.relay.pinsvc.PinsRoute;
import io.relaypinner.relay.routing.RoutingRoute;
import io.relaypinner.relay.storage.StorageQuota;
import io.relaypinner.relay.sync.SyncTrigger;
import io.relaypinner.relay.tls.CertificateStore;
import io.relaypinner.relay.ui.DashboardStatusRoute;
import java.net.http.HttpClient;
import java.security.SecureRandom;
import java.time.Clock;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The node's HTTP side (spec 1, 4.4-4.6): the routes on the other subsystems, the HTTP listener
 * unless {@code METRICS_DISABLED}, the same routes over HTTPS once {@code RELAY_TLS_CERT_DIR}
 * holds a certificate and {@code METRICS_HTTPS_ENABLED}, the certificate store, and the AutoTLS
 * client. Scrapes of {@code /metrics} run on its own thread.
 */
public final class HttpSubsystem extends Subsystem {
  private static final Logger LOG = LoggerFactory.getLogger(HttpSubsystem.class);

  /** What the HTTP side is built from, besides the other subsystems. */
  public record Settings(RelayConfig config, NodeIdentity identity, NodeStatus status,
      MetricsHttpsEndpoint httpsEndpoint, HttpResponses responses, AutoTlsOptions autoTls) {
    public Settings {
      Objects.requireNonNull(config, "config");
      Objects.requireNonNull(identity, "identity");
      Objects.requireNonNull(status, "status");
      Objects.requireNonNull(httpsEndpoint, "httpsEndpoint");
      Objects.requireNonNull(responses, "responses");
      Objects.requireNonNull(autoTls, "autoTls");
    }
  }

  private final RelayConfig config;
  private final HttpResponses responses;
  private final HttpMetrics httpMetrics;
  private final MetricsHttpsEndpoint httpsEndpoint;
  private final EventLoops loops;
  private final CertificateStore certificates;
  private final NodeTuning tuning;
  private final ExecutorService scrapeExecutor;
  private final Router router;
  private final RelayHttpServer httpServer;
  /** Both listeners' connections: the node budget's http scope and its per-IP scopes. */
  private final HttpConnectionBudget connections;
  private volatile MetricsHttpsStatus metricsHttps;
  private RelayHttpServer httpsServer;
  private volatile AutoTlsService autoTls;

  /**
   * Builds the routes, binds the HTTP listener (returns once bound), starts the certificate
   * store, which it owns from now on, and AutoTLS.
   *
   * @throws java.io.UncheckedIOException when the listener cannot bind (what started is closed)
   */
  public HttpSubsystem(final Settings settings, final CertificateStore certificates,
      final StorageSubsystem storage, final NetworkSubsystem network,
      final ContentSubsystem content, final ReplicationSubsystem replication,
      final EventLoops loops, final PrometheusRegistry registry, final Clock clock,
      final NodeTuning tuning) {
    this(settings, certificates, storage, network, content, replication, loops, registry, clock,
        tuning, NodeBudget.ofThisJvm(settings.config()));
  }

  /**
   * As above, the listeners' connections admitted from {@code budget}'s http scope
   * ({@code RELAY_HTTP_MAX_CONNECTIONS}) and per-IP scopes ({@code RELAY_MAX_CONNECTIONS_PER_IP};
   * {@code RELAY_TRUSTED_PROXIES} capped only in total).
   */
  public HttpSubsystem(final Settings settings, final CertificateStore certificates,
      final StorageSubsystem storage, final NetworkSubsystem network,
      final ContentSubsystem content, final ReplicationSubsystem replication,
      final EventLoops loops, final PrometheusRegistry registry, final Clock clock,
      final NodeTuning tuning, final NodeBudget budget) {
    this.config = settings.config();
    this.connections = new HttpConnectionBudget(budget.http(), budget.httpIps(),
        new ClientAddresses(NetworkSubsystem.trustedProxy(settings.config()), budget::ipKey));
    this.responses = settings.responses();
    this.httpsEndpoint = settings.httpsEndpoint();
    this.certificates = Objects.requireNonNull(certificates, "certificates");
    this.loops = Objects.requireNonNull(loops, "loops");
    this.tuning = Objects.requireNonNull(tuning, "tuning");
    // Until a certificate is there (and METRICS_HTTPS_ENABLED), the HTTPS listener is down.
    this.metricsHttps = MetricsHttpsStatus.notListening(config.https().enabled(), httpsEndpoint);
    this.httpMetrics = new HttpMetrics(registry);
    final GatewayMetrics gatewayMetrics = new GatewayMetrics(registry);
    if (config.http().disabled()) {
      scrapeExecutor = null;
      router = null;
      httpServer = null;
      JvmMetrics.builder().register(registry);
      LOG.info("HTTP listener disabled (METRICS_DISABLED)");
      startCertificatesAndAutoTls(settings, network, registry, clock);
      return;
    }
    scrapeExecutor = Executors.newSingleThreadExecutor(
        new DefaultThreadFactory("relay-metrics-scrape", true));
    try {
      final NodeStatus status = settings.status();
      final PinsRoute pinsRoute = new PinsRoute(content.startPinningService(
          () -> network.advertisedAddresses().stream().map(Multiaddr::toString).toList(),
          network.dialable(), responses.mapper()), config.pinningService().tokens(), storage.executor(), responses);
      final ExportRoutes exportRoutes = exportRoutes(storage, replication, gatewayMetrics,
          registry, budget);
      final UnixFsReader reader = new UnixFsReader(storage.blockstore());
      router = RelayRoutes.builder(responses, clock)
          .health(RelayVersion.VERSION, status, () -> metricsHttps)
          .multiaddrs(RelayVersion.VERSION, status, network::advertisedAddresses,
              () -> metricsHttps, config.deployment().deployedMode())
          .metrics(registry, scrapeExecutor)
          .pinning(replication.syncEngine(), config.http().apiToken())
          .hasEntry(replication::hasEntry, storage.executor(), config.http().apiToken())
          .dashboard(new DashboardStatusRoute(() -> Optional.of(network.host()),
              () -> Optional.of(replication.service()), replication.syncEngine(),
              storage.pins(), config.storage().dataDir(), storage.quotaBytes(),
              storage.executor(), clock, responses))
          .gateway(new IpfsGatewayRoute(storage.pins(), reader, storage.executor(), responses,
              gatewayMetrics, storage::blockFile, new GatewayFallback(config.gateway(),
                  content.gatewayContent(), reader, storage.executor(), network.host().ticker()),
              storage.blockstore(), tuning.carPlanner(),
              budget.memory(NodeBudget.Surface.GATEWAY)))
          .addTo(Router.builder())
          .getPrefix(RoutingRoute.PREFIX, new RoutingRoute(settings.identity().peerId(),
              network::advertisedAddresses, storage.blockstore()::has,
              network::connectedPeer, storage.executor(), responses))
          .route(HttpMethod.GET, PinsRoute.PATH, pinsRoute)
          .route(HttpMethod.POST, PinsRoute.PATH, pinsRoute)
          .prefix(HttpMethod.GET, PinsRoute.PATH + "/", pinsRoute)
          .prefix(HttpMethod.POST, PinsRoute.PATH + "/", pinsRoute)
          .prefix(HttpMethod.DELETE, PinsRoute.PATH + "/", pinsRoute)
          // The token before the body: anonymous bodies are never aggregated.
          .authorizedBody(HttpMethod.POST, PinsRoute.PATH, pinsRoute::authorized)
          .authorizedBody(HttpMethod.POST, PinsRoute.PATH + "/*", pinsRoute::authorized)
          .get(ExportRoutes.EXPORT, exportRoutes.export())
          .streamed(HttpMethod.POST, ExportRoutes.IMPORT,
              refusedWhenFull(exportRoutes.importer(), "import", storage.quota()),
              ExportRoutes.MAX_IMPORT_BYTES, ExportRoutes.CAR_TOO_LARGE,
              config.imports().timeout())
          .build();
      httpServer = new RelayHttpServer(config.http(), config.cors(), router, responses,
          httpMetrics, loops, connections);
      // Start-up time matters (ready in <= 0.8 s): class loading for the first request and the
      // JVM collectors (~100 ms each on a cold JVM) run on the scrape thread while this thread
      // binds. Scrapes queue behind the registration on that single thread, so none misses it.
      final RelayHttpServer server = httpServer;
      scrapeExecutor.execute(() -> server.warmUp("/health"));
      scrapeExecutor.execute(() -> JvmMetrics.builder().register(registry));
      httpServer.start();
    } catch (final RuntimeException e) {
      close();
      throw e;
    }
    if (config.https().enabled()) {
      // The listener comes up with the first certificate, now or later.
      certificates.onChange(certificate -> startHttps());
    }
    startCertificatesAndAutoTls(settings, network, registry, clock);
  }

  /**
   * {@code GET /pinning/export} and {@code POST /pinning/import}: imports are staged in
   * {@code <DATASTORE_PATH>/import-staging} (emptied now), checked against the policy topic
   * admission and syncs use, verify entries on the replication executor, then queue a sync so
   * the database is followed like an announced one.
   */
  private ExportRoutes exportRoutes(final StorageSubsystem storage,
      final ReplicationSubsystem replication, final GatewayMetrics gatewayMetrics,
      final PrometheusRegistry registry, final NodeBudget budget) {
    final ImportStaging staging = new ImportStaging(
        config.storage().dataDir().resolve(ImportStaging.DIRECTORY),
        ExportRoutes.MAX_IMPORT_BYTES, budget.imports());
    return new ExportRoutes(
        new DatabaseExporter(storage.blockstore(), storage.datastore(),
            CodecLinkResolver.standard(),
            payload -> replication.mediaExtractor().extract(payload).cids(),
            tuning.carPlanner(), budget.memory(NodeBudget.Surface.GATEWAY)),
        new DatabaseImporter(storage.blockstore(), storage.datastore(), storage.pins(),
            CodecLinkResolver.standard(),
            payload -> replication.mediaExtractor().extract(payload).cids(),
            replication.executor(), tuning.carReader(), tuning.replicationFetchTimeout(),
            replication.identityVerifiers(),
            address -> replication.service().replicas().replica(address), staging,
            address -> replication.topics().permits(address.toString())),
        staging, storage.blockstore(), storage.executor(), responses, gatewayMetrics, registry,
        config.http().apiToken(), budget.imports(), budget.importClients(),
        connections.clients(),
        address -> replication.syncEngine().enqueue(address.toString(), SyncTrigger.HTTP),
        budget.memory(NodeBudget.Surface.GATEWAY));
  }

  /**
   * {@code route}, answered {@code 507 storage_full} instead while the storage quota is reached
   * (checked before the request does anything; counted under {@code what}).
   */
  private RouteHandler refusedWhenFull(final RouteHandler route, final String what,
      final StorageQuota quota) {
    return request -> quota.admit(what, () -> route.handle(request),
        e -> CompletableFuture.completedFuture(responses.error(
            HttpResponseStatus.INSUFFICIENT_STORAGE, ErrorCodes.STORAGE_FULL, e.getMessage())));
  }

  private void startCertificatesAndAutoTls(final Settings settings,
      final NetworkSubsystem network, final PrometheusRegistry registry, final Clock clock) {
    try {
      certificates.start();
      startAutoTls(settings, network, registry, clock);
    } catch (final RuntimeException e) {
      close();
      throw e;
    }
  }

  /**
   * The AutoTLS client (issue: a {@code *.<zone>} certificate from the ACME server via the
   * broker), unless {@code disableAutoTLS}, and only in deployed mode (a public address the broker
   * can dial back) unless {@code RELAY_AUTOTLS_FORCE}. Returns at once.
   */
  private void startAutoTls(final Settings settings, final NetworkSubsystem network,
      final PrometheusRegistry registry, final Clock clock) {
    if (config.tls().autoTlsDisabled()) {
      LOG.info("AutoTLS disabled (disableAutoTLS)");
      return;
    }
    if (!config.deployedMode() && !config.tls().autoTlsForced()) {
      LOG.info("AutoTLS not started: no public address (deployed mode: PUBLIC_IPV4, "
          + "PROXY_HOSTNAME or EXTERNAL_*_PORT; RELAY_AUTOTLS_FORCE=true runs it anyway)");
      return;
    }
    final AutoTlsOptions options = settings.autoTls();
    final NodeIdentity identity = settings.identity();
    final PeerIdAuthClient http = new PeerIdAuthClient(identity.privateKey(),
        HttpClient.newBuilder().connectTimeout(options.brokerTimeout()).build(),
        new SecureRandom(), clock, 4096);
    final BrokerClient broker = new BrokerClient(http, config.tls().brokerUrl(),
        "relay-pinner/" + RelayVersion.VERSION, options.brokerTimeout());
    final AcmeIssuer issuer = new AcmeIssuer(config.tls().effectiveAcmeDirectory(),
        config.storage().dataDir().resolve("autotls").resolve("acme-account-key.pem"), broker,
        options.acmeTimeout(), options.acmeTrust(), clock);
    final AutoTlsService service = new AutoTlsService(identity.autoTlsServingZone(),
        config.tls().certDir(), issuer, network.addresses()::dialBack, certificates::checkNow,
        new AutoTlsEngine(options.engine(), clock));
    autoTls = service;
    AutoTlsMetrics.register(registry, service);
    LOG.info("AutoTLS: ACME directory {}, broker {}", config.tls().effectiveAcmeDirectory(),
        broker.endpoint());
    service.start();
  }

  /**
   * Binds the HTTPS listener once a certificate is active (called on the certificate store's
   * thread); later certificates only change what new connections get. A failed bind is logged
   * and retried with the next certificate.
   */
  private synchronized void startHttps() {
    if (isStopped() || httpsServer != null || router == null) {
      return;
    }
    final RelayHttpServer server = RelayHttpServer.https(config.http(), config.https().port(),
        certificates::current, config.cors(), router, responses, httpMetrics, loops,
        connections);
    try {
      server.start();
    } catch (final RuntimeException e) {
      LOG.warn("HTTPS listener not started: {}", rootMessage(e));
      return;
    }
    httpsServer = server;
    metricsHttps = MetricsHttpsStatus.listening(httpsEndpoint, server.port());
  }

  /** The bound HTTP port; empty when the listener is disabled or not running. */
  public synchronized OptionalInt port() {
    final int port = httpServer == null || isStopped() ? -1 : httpServer.port();
    return port < 0 ? OptionalInt.empty() : OptionalInt.of(port);
  }

  /** The bound HTTPS port; empty while the HTTPS listener is not running. */
  public synchronized OptionalInt httpsPort() {
    final int port = httpsServer == null ? -1 : httpsServer.port();
    return port < 0 ? OptionalInt.empty() : OptionalInt.of(port);
  }

  /** The {@code metricsHttps} object (spec 2.2) as served now. */
  public MetricsHttpsStatus metricsHttps() {
    return metricsHttps;
  }

  /**
   * The TLS certificate of {@code RELAY_TLS_CERT_DIR}: the HTTPS listener uses it, and the
   * WebSocket transport takes its server context from it unless told otherwise.
   */
  public CertificateStore certificates() {
    return certificates;
  }

  /** The AutoTLS client, when it runs. */
  public Optional<AutoTlsService> autoTls() {
    return Optional.ofNullable(autoTls);
  }

  /** Closes the listeners, AutoTLS and the certificate store. */
  @Override
  protected void onStop() {
    if (httpServer != null) {
      httpServer.close();
    }
    if (httpsServer != null) {
      httpsServer.close();
      httpsServer = null;
    }
    if (autoTls != null) {
      autoTls.close();
    }
    certificates.close();
  }

  /** After {@link #stop()}: the scrape thread. */
  @Override
  protected void onClose() {
    if (scrapeExecutor != null) {
      Shutdown.shutdownGracefully(scrapeExecutor, tuning.shutdownTimeout(), true,
          "metrics scrape");
    }
  }
}
