package io.relaypinner.relay;

import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.prometheus.metrics.instrumentation.jvm.JvmMetrics;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.relaypinner.ipfs.bitswap.Bitswap;
import io.relaypinner.ipfs.bitswap.BitswapConfig;
import io.relaypinner.ipfs.bitswap.NetworkPinner;
import io.relaypinner.ipfs.blockstore.Blockstore;
import io.relaypinner.ipfs.car.CarReader;
import io.relaypinner.ipfs.blockstore.FlatFsBlockstore;
import io.relaypinner.ipfs.blockstore.StorageFullException;
import io.relaypinner.ipfs.blockstore.StoreUnavailableException;
import io.relaypinner.ipfs.datastore.Datastore;
import io.relaypinner.ipfs.datastore.MvStoreDatastore;
import io.relaypinner.ipfs.pin.CodecLinkResolver;
import io.relaypinner.ipfs.pin.PinStore;
import io.relaypinner.ipfs.unixfs.UnixFsReader;
import io.relaypinner.libp2p.host.Host;
import io.relaypinner.libp2p.host.HostConfig;
import io.relaypinner.libp2p.netty.EventLoops;
import io.relaypinner.libp2p.protocol.autonat.AutoNat;
import io.relaypinner.libp2p.protocol.autonat.AutoNatConfig;
import io.relaypinner.libp2p.protocol.relay.CircuitRelay;
import io.relaypinner.libp2p.protocol.relay.CircuitRelayConfig;
import io.relaypinner.libp2p.pubsub.discovery.PubsubPeerDiscovery;
import io.relaypinner.libp2p.pubsub.GossipsubConfig;
import io.relaypinner.libp2p.pubsub.PubSub;
import io.relaypinner.libp2p.transport.ws.ServerTlsSource;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.multiformats.Multiaddr;
import io.relaypinner.orbitdb.OrbitDbReplicas;
import io.relaypinner.orbitdb.ReplicaContext;
import io.relaypinner.orbitdb.heads.HeadsConfig;
import io.relaypinner.orbitdb.identity.Identities;
import io.relaypinner.orbitdb.identity.IdentityVerifiers;
import io.relaypinner.orbitdb.log.LogConfig;
import io.relaypinner.multiformats.MultiformatException;
import io.relaypinner.relay.api.AdvertisedAddresses;
import io.relaypinner.relay.api.MetricsHttpsStatus;
import io.relaypinner.relay.api.NodeStatus;
import io.relaypinner.relay.api.RelayRoutes;
import io.relaypinner.relay.config.InvalidConfigException;
import io.relaypinner.relay.config.MetricsHttpsEndpoint;
import io.relaypinner.relay.config.NetworkConfig;
import io.relaypinner.relay.config.RelayConfig;
import io.relaypinner.libp2p.http.PeerIdAuthClient;
import io.relaypinner.relay.autotls.AcmeIssuer;
import io.relaypinner.relay.autotls.AutoTlsEngine;
import io.relaypinner.relay.autotls.AutoTlsMetrics;
import io.relaypinner.relay.autotls.AutoTlsOptions;
import io.relaypinner.relay.autotls.AutoTlsService;
import io.relaypinner.relay.autotls.BrokerClient;
import io.relaypinner.relay.bitswap.BitswapMetrics;
import io.relaypinner.relay.bitswap.BitswapNetworkContent;
import io.relaypinner.relay.config.StorageLimits;
import io.relaypinner.relay.gateway.CachingNetworkContent;
import io.relaypinner.relay.gateway.NetworkContent;
import io.relaypinner.relay.storage.GatewayCache;
import io.relaypinner.relay.storage.GcPolicy;
import io.relaypinner.relay.storage.LogMembers;
import io.relaypinner.relay.storage.StorageGc;
import io.relaypinner.relay.storage.StorageMetrics;
import io.relaypinner.relay.storage.StorageQuota;
import io.relaypinner.relay.gateway.CarPlanner;
import io.relaypinner.relay.gateway.GatewayMetrics;
import io.relaypinner.relay.gateway.IpfsGatewayRoute;
import io.relaypinner.relay.http.ErrorCodes;
import io.relaypinner.relay.http.HttpMetrics;
import io.relaypinner.relay.http.HttpResponses;
import io.relaypinner.relay.http.RelayHttpServer;
import io.relaypinner.relay.http.RouteHandler;
import io.relaypinner.relay.http.Router;
import io.relaypinner.relay.identity.IdentityVerificationMetrics;
import io.relaypinner.relay.ui.DashboardStatusRoute;
import io.relaypinner.relay.identity.NodeIdentity;
import io.relaypinner.relay.network.CircuitRelayMetrics;
import io.relaypinner.relay.network.Libp2pMetrics;
import io.relaypinner.relay.export.DatabaseExporter;
import io.relaypinner.relay.export.DatabaseImporter;
import io.relaypinner.relay.export.ExportRoutes;
import io.relaypinner.relay.pinsvc.PinningServiceEngine;
import io.relaypinner.relay.pinsvc.PinningServiceMetrics;
import io.relaypinner.relay.pinsvc.PinsRoute;
import io.relaypinner.relay.pubsub.OrbitDbTopics;
import io.relaypinner.relay.routing.RoutingRoute;
import io.relaypinner.relay.pubsub.PubSubMetrics;
import io.relaypinner.relay.replication.InboxBudget;
import io.relaypinner.relay.replication.MediaCidExtractor;
import io.relaypinner.relay.coordination.Coordination;
import io.relaypinner.relay.coordination.PostgresCoordination;
import io.relaypinner.relay.replication.MediaPinQueue;
import io.relaypinner.relay.replication.ReplicationMetrics;
import io.relaypinner.relay.replication.ReplicationService;
import io.relaypinner.relay.replication.Libp2pReplicationNetwork;
import io.relaypinner.relay.storage.DurabilityMetrics;
import io.relaypinner.relay.storage.StoreMetrics;
import io.relaypinner.relay.sync.DatabaseSyncer;
import io.relaypinner.relay.sync.SyncEngine;
import io.relaypinner.relay.sync.SyncHistory;
import io.relaypinner.relay.sync.SyncTrigger;
import io.relaypinner.stores.PostgresDatastore;
import io.relaypinner.stores.S3Blockstore;
import io.relaypinner.stores.StoreAvailability;
import io.relaypinner.relay.tls.CertificateStore;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One running relay: wires the parts that exist so far (the HTTP listener of spec 1 with
 * {@code /health}, {@code /multiaddrs}, {@code /metrics}, the pinning routes of spec 4.4-4.5 on
 * the {@link SyncEngine}, and the pinned-content gateway {@code /ipfs/} of spec 4.6; the same
 * routes over HTTPS once {@code RELAY_TLS_CERT_DIR} holds a certificate and
 * {@code METRICS_HTTPS_ENABLED}; the block store, pins and sync history under
 * {@code DATASTORE_PATH}; JVM, HTTP, gateway and sync metrics) from a {@link RelayConfig}.
 *
 * <pre>
 *   RelayConfig config = RelayConfig.fromEnvironment(env);      // InvalidConfigException: exit 2
 *   NodeStatus status = NodeStatus.fixed(peerId, servingZone);  // from the loaded identity
 *   try (RelayNode node = new RelayNode(config, status, new PrometheusRegistry(),
 *       Clock.systemUTC())) {                                   // InvalidConfigException: exit 2
 *     node.start();                                             // returns once bound
 *     awaitShutdownSignal();
 *   }                                                           // close(): bounded, graceful
 * </pre>
 *
 * <p>The registry belongs to the caller and holds this node's metrics only (one registry per
 * node: registering twice fails). Event loops are created by the node unless shared loops are
 * passed in, which the node then never shuts down.
 */
public final class RelayNode implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(RelayNode.class);
  private static final Duration SHUTDOWN_TIMEOUT = Duration.ofSeconds(3);
  private static final Duration BIND_TIMEOUT = Duration.ofSeconds(10);
  /** How soon deferred datastore writes (replicated entries' pins) are committed at the latest. */
  static final Duration DATASTORE_FLUSH = Duration.ofSeconds(1);
  /** Threads for blocking storage work (pin checks, block reads for /ipfs/). */
  private static final int STORAGE_THREADS = 4;
  /** Storage tasks waiting beyond that; more is answered 503 rather than queued without end. */
  private static final int STORAGE_QUEUE = 256;
  /** Tasks queued for the replication executor (joins fan out per entry). */
  private static final int REPLICATION_QUEUE = 100_000;
  /** How long replication waits for one block over bitswap. */
  private static final Duration REPLICATION_FETCH_TIMEOUT = Duration.ofSeconds(15);

  private enum State { NEW, STARTED, CLOSED }

  private final RelayConfig config;
  private final NodeIdentity identity;
  private final AdvertisedAddresses advertiser;
  private final List<Multiaddr> bootstrapPeers;
  private volatile Advertised advertisedCache;

  /** The advertised list and the inputs it was computed from (same inputs: same answer). */
  private record Advertised(List<Multiaddr> listen, boolean tls, boolean sni,
      List<Multiaddr> advertised) {}
  private final NodeStatus status;
  private final PrometheusRegistry registry;
  private final Clock clock;
  private final EventLoops sharedLoops;
  private final HttpResponses responses;
  private final HttpMetrics httpMetrics;
  private final MetricsHttpsEndpoint httpsEndpoint;
  private volatile MetricsHttpsStatus metricsHttps;
  private final GatewayMetrics gatewayMetrics;

  private State state = State.NEW;
  private EventLoops ownLoops;
  private ExecutorService scrapeExecutor;
  private RelayHttpServer httpServer;
  private volatile Host host;
  /** Null until start() unless set by useWebSocketTls: then the certificate store. */
  private volatile ServerTlsSource webSocketTls;
  private volatile PubSub pubsub;
  private volatile CircuitRelay circuitRelay;
  private volatile AutoNat autoNat;
  private volatile PubsubPeerDiscovery discovery;
  private volatile OrbitDbTopics orbitDbTopics;
  private Blockstore blockstore;
  /** Set when the blocks are flat files: the gateway serves raw blocks from them zero-copy. */
  private FlatFsBlockstore flatBlocks;
  private Datastore datastore;
  private volatile PinStore pins;
  private volatile Coordination coordination = Coordination.local();
  /** The quota, the gateway cache and garbage collection (docs/operators.md). */
  private volatile StorageGc storageGc;
  /** Set by {@link #gcPolicy}; null: the coordination's (always alone, the leader shared). */
  private GcPolicy gcPolicy;
  /** One thread: scheduled and pressure GC runs, never overlapping. */
  private ScheduledThreadPoolExecutor gcExecutor;
  /** Probes shared stores found down (null with the embedded stores). */
  private ScheduledThreadPoolExecutor storeProbe;
  private ThreadPoolExecutor storageExecutor;
  private volatile SyncEngine syncEngine;
  private CertificateStore certificates;
  private AutoTlsOptions autoTlsOptions = AutoTlsOptions.DEFAULT;
  private volatile AutoTlsService autoTls;
  private Router router;
  private RelayHttpServer httpsServer;
  private volatile Bitswap bitswap;
  /** Bitswap's own blockstore threads, so peers' wants never crowd out the gateway's reads. */
  private ThreadPoolExecutor bitswapExecutor;
  private volatile ReplicationService replication;
  /** The identity types this node accepts (passkeys per its configuration): one set for all. */
  private final IdentityVerifiers identityVerifiers;
  private volatile PinningServiceEngine pinningService;
  /** Joins, verification, entry pins and media pins of the replication service. */
  private ThreadPoolExecutor replicationExecutor;

  /**
   * A node with its own event loops (one per processor).
   *
   * @throws InvalidConfigException when a setting is bad for this identity
   *     ({@code METRICS_HTTPS_PUBLIC_HOST} not under the serving zone)
   */
  public RelayNode(final RelayConfig config, final NodeIdentity identity,
      final PrometheusRegistry registry, final Clock clock) {
    this(config, identity, registry, clock, null);
  }

  /**
   * A node on shared event loops ({@code null}: its own), which it does not shut down.
   *
   * @throws InvalidConfigException when a setting is bad for this identity
   */
  public RelayNode(final RelayConfig config, final NodeIdentity identity,
      final PrometheusRegistry registry, final Clock clock, final EventLoops sharedLoops) {
    this.config = Objects.requireNonNull(config, "config");
    this.identity = Objects.requireNonNull(identity, "identity");
    this.status = new LiveStatus();
    this.bootstrapPeers = parseBootstrapPeers(config.network().effectiveBootstrapPeers());
    this.advertiser = new AdvertisedAddresses(identity.peerId(), config.deployment(),
        config.network().announce());
    this.registry = Objects.requireNonNull(registry, "registry");
    this.clock = Objects.requireNonNull(clock, "clock");
    this.sharedLoops = sharedLoops;
    this.identityVerifiers = IdentityVerifiers.withPasskeys(config.passkeys().toWebAuthnConfig());
    this.httpsEndpoint = MetricsHttpsEndpoint.resolve(config, identity.autoTlsServingZone());
    // Until a certificate is there (and METRICS_HTTPS_ENABLED), the HTTPS listener is down.
    this.metricsHttps = MetricsHttpsStatus.notListening(config.https().enabled(), httpsEndpoint);
    this.responses = HttpResponses.withMapperBuiltInBackground();
    this.httpMetrics = new HttpMetrics(registry);
    this.gatewayMetrics = new GatewayMetrics(registry);
  }

  /**
   * Starts the HTTP listener unless {@code METRICS_DISABLED}, and returns once it is bound.
   *
   * @throws java.io.UncheckedIOException when the listener cannot bind (the node is then closed)
   * @throws IllegalStateException when called twice or after {@link #close()}
   */
  public synchronized void start() {
    if (state != State.NEW) {
      throw new IllegalStateException("relay node is " + state.name().toLowerCase(Locale.ROOT));
    }
    state = State.STARTED;
    try {
      openStorage();
      startSyncEngine();
      final EventLoops loops = sharedLoops != null ? sharedLoops : ownLoops();
      // One store for WSS on the WebSocket port and the HTTPS listener.
      certificates = new CertificateStore(config.tls().certDir(),
          CertificateStore.DEFAULT_POLL_INTERVAL, clock);
      if (webSocketTls == null) {
        webSocketTls = certificates::current;
      }
      // A certificate adds /tls/ws addresses: connected peers learn them by identify push.
      certificates.onChange(certificate -> {
        final Host current = host;
        if (current != null) {
          current.addressesChanged();
        }
      });
      startHost(loops);
      startCircuitRelay();
      startPubSub();
      startDiscovery(loops);
      startBitswap();
      startReplication();
      dialBootstrapPeers();
      if (config.http().disabled()) {
        JvmMetrics.builder().register(registry);
        LOG.info("HTTP listener disabled (METRICS_DISABLED)");
        certificates.start();
        startAutoTls();
        return;
      }
      scrapeExecutor = Executors.newSingleThreadExecutor(
          new DefaultThreadFactory("relay-metrics-scrape", true));
      final PinsRoute pinsRoute = new PinsRoute(startPinningService(),
          config.pinningService().tokens(), storageExecutor, responses);
      final ExportRoutes exportRoutes = exportRoutes();
      router = RelayRoutes.builder(responses, clock)
          .health(RelayVersion.VERSION, status, () -> metricsHttps)
          .multiaddrs(RelayVersion.VERSION, status, this::advertisedAddresses,
              () -> metricsHttps, config.deployment().deployedMode())
          .metrics(registry, scrapeExecutor)
          .pinning(syncEngine, config.http().apiToken())
          .dashboard(new DashboardStatusRoute(this::host, this::replication, syncEngine, pins,
              config.storage().dataDir(), quotaBytes(), storageExecutor, clock, responses))
          .gateway(new IpfsGatewayRoute(pins, new UnixFsReader(blockstore), storageExecutor,
              responses, gatewayMetrics, this::blockFile, config.gateway(),
              gatewayNetworkContent(), blockstore, CarPlanner.Limits.DEFAULT))
          .addTo(Router.builder())
          .getPrefix(RoutingRoute.PREFIX, new RoutingRoute(identity.peerId(),
              this::advertisedAddresses, cid -> blockstore.has(cid), this::connectedPeer,
              storageExecutor, responses))
          .route(HttpMethod.GET, PinsRoute.PATH, pinsRoute)
          .route(HttpMethod.POST, PinsRoute.PATH, pinsRoute)
          .prefix(HttpMethod.GET, PinsRoute.PATH + "/", pinsRoute)
          .prefix(HttpMethod.POST, PinsRoute.PATH + "/", pinsRoute)
          .prefix(HttpMethod.DELETE, PinsRoute.PATH + "/", pinsRoute)
          .get(ExportRoutes.EXPORT, exportRoutes.export())
          .streamed(HttpMethod.POST, ExportRoutes.IMPORT,
              refusedWhenFull(exportRoutes.importer(), "import"),
              ExportRoutes.MAX_IMPORT_BYTES, ExportRoutes.CAR_TOO_LARGE)
          .build();
      httpServer = new RelayHttpServer(config.http(), config.cors(), router, responses,
          httpMetrics, loops);
      // Start-up time matters (ready in <= 0.8 s): class loading for the first request and the
      // JVM collectors (~100 ms each on a cold JVM) run on the scrape thread while this thread
      // binds. Scrapes queue behind the registration on that single thread, so none misses it.
      final RelayHttpServer server = httpServer;
      scrapeExecutor.execute(() -> server.warmUp("/health"));
      scrapeExecutor.execute(() -> JvmMetrics.builder().register(registry));
      httpServer.start();
      if (config.https().enabled()) {
        // The listener comes up with the first certificate, now or later.
        certificates.onChange(certificate -> startHttps());
      }
      certificates.start();
      startAutoTls();
    } catch (final RuntimeException e) {
      close();
      throw e;
    }
  }

  /**
   * Settings of the AutoTLS client other than the environment's (timing, the ACME server's
   * trust); call before {@link #start()}.
   */
  public synchronized void useAutoTlsOptions(final AutoTlsOptions options) {
    this.autoTlsOptions = Objects.requireNonNull(options, "options");
  }

  /**
   * The AutoTLS client (issue: a {@code *.<zone>} certificate from the ACME server via the
   * broker), unless {@code disableAutoTLS}, and only in deployed mode (a public address the broker
   * can dial back) unless {@code RELAY_AUTOTLS_FORCE}. Returns at once.
   */
  private void startAutoTls() {
    if (config.tls().autoTlsDisabled()) {
      LOG.info("AutoTLS disabled (disableAutoTLS)");
      return;
    }
    if (!config.deployedMode() && !config.tls().autoTlsForced()) {
      LOG.info("AutoTLS not started: no public address (deployed mode: PUBLIC_IPV4, "
          + "PROXY_HOSTNAME or EXTERNAL_*_PORT; RELAY_AUTOTLS_FORCE=true runs it anyway)");
      return;
    }
    final AutoTlsOptions options = autoTlsOptions;
    final PeerIdAuthClient http = new PeerIdAuthClient(identity.privateKey(),
        java.net.http.HttpClient.newBuilder().connectTimeout(options.brokerTimeout()).build(),
        new SecureRandom(), clock, 4096);
    final BrokerClient broker = new BrokerClient(http, config.tls().brokerUrl(),
        "relay-pinner/" + RelayVersion.VERSION, options.brokerTimeout());
    final AcmeIssuer issuer = new AcmeIssuer(config.tls().effectiveAcmeDirectory(),
        config.storage().dataDir().resolve("autotls").resolve("acme-account-key.pem"), broker,
        options.acmeTimeout(), options.acmeTrust());
    final CertificateStore store = certificates;
    autoTls = new AutoTlsService(identity.autoTlsServingZone(), config.tls().certDir(), issuer,
        this::dialBackAddresses, store::checkNow, new AutoTlsEngine(options.engine(), clock));
    AutoTlsMetrics.register(registry, autoTls);
    LOG.info("AutoTLS: ACME directory {}, broker {}", config.tls().effectiveAcmeDirectory(),
        broker.endpoint());
    autoTls.start();
  }

  /**
   * What the broker dials back: the advertised TCP and WebSocket addresses on IPs (no TLS forms,
   * no peer id); public ones only in deployed mode, every one when forced without a deployment.
   */
  private List<Multiaddr> dialBackAddresses() {
    final List<Multiaddr> out = new ArrayList<>();
    for (final Multiaddr address : advertisedAddresses()) {
      final Multiaddr bare = address.withoutPeerId();
      final String text = bare.toString();
      final boolean ip = text.startsWith("/ip4/") || text.startsWith("/ip6/");
      final boolean plain = !text.contains("/tls") && (text.matches("/ip[46]/[^/]+/tcp/\\d+")
          || text.matches("/ip[46]/[^/]+/tcp/\\d+/ws"));
      if (ip && plain && (isDialable(bare) || !config.deployedMode()) && !out.contains(bare)) {
        out.add(bare);
      }
    }
    return out;
  }

  /**
   * Public and not a documentation address (RFC 5737 192.0.2/24, 198.51.100/24, 203.0.113/24;
   * RFC 3849 2001:db8::/32): no broker can dial those, so they are never offered (and a relay
   * configured with one, as tests are, never contacts the ACME server).
   */
  static boolean isDialable(final Multiaddr address) {
    if (!AdvertisedAddresses.isPublic(address)) {
      return false;
    }
    final String text = address.toString();
    return !(text.startsWith("/ip4/192.0.2.") || text.startsWith("/ip4/198.51.100.")
        || text.startsWith("/ip4/203.0.113.") || text.startsWith("/ip6/2001:db8:"));
  }

  /** The AutoTLS client, when it runs. */
  public Optional<AutoTlsService> autoTls() {
    return Optional.ofNullable(autoTls);
  }

  /**
   * Opens the stores: by default {@code <DATASTORE_PATH>/blocks} and
   * {@code <DATASTORE_PATH>/datastore.mv}, or the shared S3 bucket and PostgreSQL database
   * ({@link StoreUnavailableException} naming the one that cannot be reached). Local ones lock
   * its files: a second node on the same directory fails here) and the storage executor.
   */
  private void openStorage() {
    final Path dir = config.storage().dataDir();
    if (config.storage().s3().isPresent()) {
      blockstore = S3Blockstore.open(config.storage().s3().get());
      LOG.info("blockstore: S3 {}", config.storage().s3().get());
    } else {
      flatBlocks = new FlatFsBlockstore(dir.resolve("blocks"));
      blockstore = flatBlocks;
    }
    datastore = config.storage().postgres().isPresent()
        ? PostgresDatastore.open(config.storage().postgres().get())
        : new MvStoreDatastore(dir.resolve("datastore.mv"));
    StoreMetrics.register(registry, blockstore, datastore);
    startStoreProbe();
    DurabilityMetrics.register(registry, blockstore, datastore);
    pins = new PinStore(datastore, blockstore, CodecLinkResolver.standard());
    if (datastore instanceof PostgresDatastore shared) {
      coordination = PostgresCoordination.start(shared, identity.peerId().toBase58(),
          PostgresCoordination.DEFAULT_LEASE_TTL,
          ReplicationService.Config.DEFAULT.pinConcurrency(), clock);
    }
    storageExecutor = new ThreadPoolExecutor(STORAGE_THREADS, STORAGE_THREADS, 0,
        TimeUnit.MILLISECONDS, new ArrayBlockingQueue<>(STORAGE_QUEUE),
        new DefaultThreadFactory("relay-storage", true), new ThreadPoolExecutor.AbortPolicy());
    startStorageGc();
  }

  /**
   * With shared stores: every second, a store found down is asked again (a cheap call), so the
   * end of an outage is noticed even when nothing else calls it, and what waits for it
   * ({@link #whenStoresRecover}) runs at once.
   */
  private void startStoreProbe() {
    final List<Runnable> probes = new ArrayList<>();
    if (blockstore instanceof S3Blockstore s3) {
      probes.add(() -> {
        if (!s3.availability().up()) {
          s3.probe();
        }
      });
    }
    if (datastore instanceof PostgresDatastore postgres) {
      probes.add(() -> {
        if (!postgres.availability().up()) {
          postgres.probe();
        }
      });
    }
    if (probes.isEmpty()) {
      return;
    }
    storeProbe = new ScheduledThreadPoolExecutor(1,
        new DefaultThreadFactory("relay-store-probe", true));
    storeProbe.scheduleWithFixedDelay(() -> {
      for (final Runnable probe : probes) {
        try {
          probe.run();
        } catch (final StoreUnavailableException e) {
          // Still down: counted and logged (once per outage) by the store.
        }
      }
    }, 1, 1, TimeUnit.SECONDS);
  }

  /** Runs {@code action} each time an outage of a shared store ends. */
  private void whenStoresRecover(final Runnable action) {
    if (blockstore instanceof S3Blockstore s3) {
      s3.availability().onRecovered(action);
    }
    if (datastore instanceof PostgresDatastore postgres) {
      postgres.availability().onRecovered(action);
    }
  }

  /**
   * The quota ({@code RELAY_STORAGE_MAX_BYTES}, on flat files: S3 has no cheap byte count), the
   * gateway cache and GC: every {@code RELAY_GC_INTERVAL_MS} and under pressure.
   */
  private void startStorageGc() {
    final StorageLimits limits = config.storage().limits();
    final FlatFsBlockstore flat = flatBlocks;
    if (flat == null && limits.maxBytes() > 0) {
      LOG.warn("RELAY_STORAGE_MAX_BYTES is not enforced with RELAY_BLOCKSTORE=s3: bound the"
          + " bucket with the provider's quota");
    }
    final StorageQuota quota = new StorageQuota(flat == null ? 0 : limits.maxBytes(),
        flat == null ? () -> 0L : () -> flat.byteCount() + flat.stagedBytes(), () -> {
          final StorageGc gc = storageGc;
          if (gc != null) {
            gc.requestRunUnderPressure();
          }
        });
    final StorageGc gc = new StorageGc(pins, new GatewayCache(limits.gatewayCacheMaxBytes()),
        quota, clock, limits.gcGrace(), gcPolicy != null ? gcPolicy : coordination.gcPolicy(),
        new LogMembers(datastore));
    gcExecutor = new ScheduledThreadPoolExecutor(1, new DefaultThreadFactory("relay-gc", true));
    gcExecutor.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
    gc.executeOn(gcExecutor);
    // Deferred datastore writes (replicated entries' pins) become durable within this period.
    gcExecutor.scheduleWithFixedDelay(this::flushDatastore, DATASTORE_FLUSH.toMillis(),
        DATASTORE_FLUSH.toMillis(), TimeUnit.MILLISECONDS);
    if (!limits.gcInterval().isZero()) {
      gcExecutor.scheduleWithFixedDelay(gc::runOnce, limits.gcInterval().toMillis(),
          limits.gcInterval().toMillis(), TimeUnit.MILLISECONDS);
    }
    StorageMetrics.register(registry, gc);
    storageGc = gc;
    LOG.info("storage: quota {}, gateway cache {} bytes, GC every {} ms (grace {} ms)",
        quota.maxBytes() > 0 ? quota.maxBytes() + " bytes" : "none",
        limits.gatewayCacheMaxBytes(), limits.gcInterval().toMillis(),
        limits.gcGrace().toMillis());
  }

  /** Commits the datastore's deferred writes, if any (on the GC thread). */
  private void flushDatastore() {
    try {
      datastore.flush();
    } catch (final RuntimeException e) {
      LOG.warn("datastore flush failed: {}", e.toString());
    }
  }

  /**
   * Who may collect garbage; set before {@link #start}. Default: the coordination's, always with
   * the embedded stores, the GC-leader lease with shared ones ({@code GcLeaderPolicy}).
   */
  public synchronized RelayNode gcPolicy(final GcPolicy policy) {
    if (state != State.NEW) {
      throw new IllegalStateException("the GC policy is set before start");
    }
    this.gcPolicy = Objects.requireNonNull(policy, "policy");
    return this;
  }

  /** Garbage collection, the quota and the gateway cache of the running node. */
  public StorageGc storageGc() {
    final StorageGc current = storageGc;
    if (current == null) {
      throw new IllegalStateException("relay node is not running");
    }
    return current;
  }

  /** A raw block's file for zero-copy serving; empty when blocks are not flat files. */
  private Optional<FileChannel> blockFile(final Cid cid) {
    final FlatFsBlockstore flat = flatBlocks;
    return flat != null ? flat.openChannel(cid) : Optional.empty();
  }

  /**
   * The sync engine (spec 3.5) with its history from the datastore. Syncs run the OrbitDB
   * replication service once it is attached ({@link #startReplication()}).
   */
  private void startSyncEngine() {
    final SyncHistory history = new SyncHistory(datastore, SyncHistory.DEFAULT_MAX_ENTRIES);
    history.load();
    syncEngine = new SyncEngine(config.sync(), newDatabaseSyncer(), history, registry, clock);
  }

  /**
   * What does the work of one sync: the replication service's syncer, once the network is up (a
   * sync before that fails and is retried by the next trigger).
   */
  private DatabaseSyncer newDatabaseSyncer() {
    return context -> {
      final ReplicationService current = replication;
      if (current == null) {
        throw new IllegalStateException("replication is not running yet");
      }
      return current.syncer().sync(context);
    };
  }

  /**
   * Binds the HTTPS listener once a certificate is active (called on the certificate store's
   * thread); later certificates only change what new connections get. A failed bind is logged
   * and retried with the next certificate.
   */
  private synchronized void startHttps() {
    if (state != State.STARTED || httpsServer != null || router == null) {
      return;
    }
    final RelayHttpServer server = RelayHttpServer.https(config.http(), config.https().port(),
        certificates::current, config.cors(), router, responses, httpMetrics,
        sharedLoops != null ? sharedLoops : ownLoops);
    try {
      server.start();
    } catch (final RuntimeException e) {
      LOG.warn("HTTPS listener not started: {}", rootMessage(e));
      return;
    }
    httpsServer = server;
    metricsHttps = MetricsHttpsStatus.listening(httpsEndpoint, server.port());
  }

  /**
   * Starts libp2p: the IPv4 TCP listener must bind (a taken port stops the node); the IPv6 one is
   * best effort, since some hosts have no IPv6.
   */
  private void startHost(final EventLoops loops) {
    final Host started = new Host(identity.privateKey(), HostConfig.builder()
        .agentVersion("relay-pinner/" + RelayVersion.VERSION)
        .limits(config.network().connectionLimits())
        .webSocketTls(() -> webSocketTls.current()).build(), loops, clock);
    host = started;
    Libp2pMetrics.register(registry, started);
    final NetworkConfig network = config.network();
    bind(started, address(false, network.listenIpv4(), network.tcpPort(), ""), true);
    bind(started, address(false, network.listenIpv4(), network.wsPort(), "/ws"), true);
    if (!network.ipv6Disabled()) {
      bind(started, address(true, network.listenIpv6(), network.tcpPort(), ""), false);
      bind(started, address(true, network.listenIpv6(), network.wsPort(), "/ws"), false);
    }
  }

  /**
   * Circuit relay v2 (hop and stop) with the {@code RELAY_CIRCUIT_*} limits; reservations carry
   * the advertised addresses, which identify (and its pushes) now advertise too.
   */
  private void startCircuitRelay() {
    host.advertise(this::advertisedAddresses);
    CircuitRelayConfig limits = config.circuit().relay();
    if (config.deployment().proxyHostname().isPresent()) {
      // Behind a TLS proxy every browser arrives from the proxy's address: a share per IP would
      // cap all of them together.
      limits = limits.toBuilder().maxReservationsPerIp(CircuitRelayConfig.MAX_RESERVATIONS)
          .build();
    }
    circuitRelay = CircuitRelay.start(host, limits, clock, this::advertisedAddresses);
    CircuitRelayMetrics.register(registry, circuitRelay);
    // AutoNAT v1 server: in deployed mode it never dials private addresses.
    autoNat = AutoNat.start(host, AutoNatConfig.DEFAULT, clock,
        config.deployment().deployedMode() ? AdvertisedAddresses::isPublic : address -> true);
    CircuitRelayMetrics.register(registry, autoNat);
  }

  /**
   * Pubsub peer discovery on {@code PUBSUB_TOPICS}: the relay joins the topics (so it routes
   * browsers' announcements to each other) and announces its advertised addresses.
   */
  private void startDiscovery(final EventLoops loops) {
    if (config.circuit().discoveryTopics().isEmpty()) {
      return;
    }
    discovery = PubsubPeerDiscovery.start(pubsub, config.circuit().discoveryTopics(),
        identity.privateKey().publicKey(), this::advertisedAddresses, loops.group(),
        config.circuit().discoveryInterval());
    CircuitRelayMetrics.register(registry, discovery);
  }

  /** The circuit relay, once started. */
  public Optional<CircuitRelay> circuitRelay() {
    return Optional.ofNullable(circuitRelay);
  }

  /** Pubsub peer discovery, once started (absent when {@code PUBSUB_TOPICS} is empty). */
  public Optional<PubsubPeerDiscovery> discovery() {
    return Optional.ofNullable(discovery);
  }

  /**
   * Binds one listener. IPv4 listeners must bind (a taken port stops the node); IPv6 is best
   * effort, since some hosts have no IPv6.
   */
  private static void bind(final Host host, final Multiaddr address, final boolean required) {
    try {
      host.listen(address).get(BIND_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
    } catch (final ExecutionException | TimeoutException e) {
      if (required) {
        throw new UncheckedIOException(new IOException(
            "cannot listen on " + address + ": " + rootMessage(e), e));
      }
      LOG.warn("no listener on {}: {} (RELAY_DISABLE_IPV6=true silences this)", address,
          rootMessage(e));
    } catch (final InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while binding " + address, e);
    }
  }

  private static Multiaddr address(final boolean ipv6, final String host, final int port,
      final String suffix) {
    return Multiaddr.parse((ipv6 ? "/ip6/" : "/ip4/") + host + "/tcp/" + port + suffix);
  }

  private static String rootMessage(final Throwable error) {
    Throwable cause = error;
    while (cause.getCause() != null) {
      cause = cause.getCause();
    }
    return cause.getMessage() != null ? cause.getMessage() : cause.toString();
  }

  /** What the relay advertises now (spec 2.3): listen addresses and announced ones. */
  public List<Multiaddr> advertisedAddresses() {
    final Host current = host;
    if (current == null) {
      return List.of();
    }
    final List<Multiaddr> listen = current.listenAddresses();
    final ServerTlsSource tlsSource = webSocketTls;
    final boolean tls = tlsSource != null && tlsSource.current().isPresent();
    // The /tls/sni forms need a certificate for *.<zone> (AutoTLS, or an operator's for it).
    final CertificateStore store = certificates;
    final boolean sni = tls && store != null && store.certificate().map(this::coversZone)
        .orElse(false);
    final Advertised cached = advertisedCache;
    if (cached != null && cached.listen() == listen && cached.tls() == tls
        && cached.sni() == sni) {
      return cached.advertised();
    }
    final List<Multiaddr> computed = advertiser.compute(listen, tls,
        sni ? Optional.of(identity.autoTlsServingZone()) : Optional.empty());
    advertisedCache = new Advertised(listen, tls, sni, computed);
    return computed;
  }

  /** Whether the certificate is for {@code *.<zone>}; remembered per loaded certificate. */
  private boolean coversZone(final CertificateStore.LoadedCertificate certificate) {
    final ZoneCheck last = zoneCheck;
    if (last != null && last.certificate() == certificate) {
      return last.covers();
    }
    final boolean covers = AutoTlsService.covers(certificate.leaf(),
        identity.autoTlsServingZone());
    zoneCheck = new ZoneCheck(certificate, covers);
    return covers;
  }

  private record ZoneCheck(CertificateStore.LoadedCertificate certificate, boolean covers) {}

  private volatile ZoneCheck zoneCheck;

  /**
   * Where the WebSocket port gets its certificate (e.g. the certificate store watching
   * {@code RELAY_TLS_CERT_DIR}): asked for every accepted WebSocket connection and by
   * {@code /multiaddrs}, which lists {@code /tls/ws} addresses while it has one. Default: the
   * node's certificate store ({@code RELAY_TLS_CERT_DIR}); call before {@link #start()} to
   * replace it.
   */
  public void useWebSocketTls(final ServerTlsSource source) {
    this.webSocketTls = Objects.requireNonNull(source, "source");
  }

  /**
   * Gossipsub on the host, and the OrbitDB topic policy: follow every database topic peers
   * subscribe to, resubscribing the ones followed before the restart.
   */
  private void startPubSub() {
    pubsub = PubSub.start(host, GossipsubConfig.DEFAULT, clock, new SecureRandom());
    orbitDbTopics = new OrbitDbTopics(pubsub, datastore, storageExecutor,
        config.sync().topicPolicy(), OrbitDbTopics.Limits.DEFAULT, clock);
    // The one pubsub listener of replication: admitted topics, their messages and subscribers
    // (wired and started in startReplication, once bitswap is up).
    PubSubMetrics.register(registry, pubsub, orbitDbTopics);
  }

  /**
   * OrbitDB replication: replicas of the followed databases (blocks over bitswap), the heads
   * exchange, media pins; every trigger (follow, topic message, heads, a peer subscribing) queues
   * a sync on the engine. Then the topic policy starts, resubscribing persisted topics.
   */
  private void startReplication() {
    replicationExecutor = new ThreadPoolExecutor(STORAGE_THREADS, STORAGE_THREADS, 0,
        TimeUnit.MILLISECONDS, new ArrayBlockingQueue<>(REPLICATION_QUEUE),
        new DefaultThreadFactory("relay-replication", true),
        new ThreadPoolExecutor.AbortPolicy());
    final LogConfig d = LogConfig.DEFAULT;
    final LogConfig alone = new LogConfig(d.maxConcurrentFetches(), d.maxEntriesPerJoin(),
        d.maxDepth(), REPLICATION_FETCH_TIMEOUT);
    // Relays sharing the datastore each keep their own state of every log (what each verified,
    // its heads), and read each other's heads from the shared key.
    final LogConfig logConfig = datastore instanceof PostgresDatastore
        ? alone.withStateScope(identity.peerId().toBase58()) : alone;
    final Bitswap network = bitswap;
    // fetch, not get: a block reaches the store only after the log (or the identity cache)
    // verified it, so a refused entry is never stored or served.
    // With the quota reached, blocks not held are not fetched: the join keeps them on its
    // frontier and a later join takes them once GC made room (counted as refused).
    final StorageQuota quota = storageGc.quota();
    final io.relaypinner.orbitdb.BlockFetcher fetcher = cid -> {
      try {
        quota.checkRoom("replication", 1);
      } catch (final StorageFullException e) {
        return CompletableFuture.failedFuture(e);
      }
      return network.fetch(cid, REPLICATION_FETCH_TIMEOUT);
    };
    IdentityVerificationMetrics.register(registry, identityVerifiers);
    if (config.passkeys().origins().isEmpty()) {
      LOG.info("passkey identities: webauthn-varsig writers will be refused until"
          + " RELAY_WEBAUTHN_ORIGINS names the apps' origins");
    } else {
      LOG.info("passkey identities: relying parties {} (rpIds {})", config.passkeys().origins(),
          config.passkeys().toWebAuthnConfig().rpIds());
    }
    final ReplicaContext context = new ReplicaContext(blockstore, datastore, fetcher,
        new Identities(blockstore, fetcher, identityVerifiers, replicationExecutor,
            Identities.DEFAULT_CACHE_SIZE), replicationExecutor, logConfig, clock);
    // Media pins (the pinned-already check, each fetched block's links, the final pin) run on
    // the bitswap executor, next to the block writes they wait for: on the replication executor
    // they queued behind the joins of a writer's burst (1-2 s before the first media want).
    final NetworkPinner mediaPinner = new NetworkPinner(bitswap, pins,
        CodecLinkResolver.standard(), bitswapExecutor);
    final MediaPinQueue pinQueue = new MediaPinQueue(
        cid -> mediaPinner.pin(cid, NetworkPinner.Limits.DEFAULT), pins::isPinned,
        bitswapExecutor, ReplicationService.Config.DEFAULT.pinConcurrency());
    final OrbitDbTopics topics = orbitDbTopics;
    final ReplicationService service = new ReplicationService(
        new Libp2pReplicationNetwork(host, pubsub, bitswap, HeadsConfig.DEFAULT), blockstore,
        pins, new OrbitDbReplicas(context),
        new MediaCidExtractor(config.sync().mediaCidFields()), pinQueue, replicationExecutor,
        ReplicationService.Config.DEFAULT, InboxBudget.defaults(), topics::permits,
        topics::followAdmitted, clock);
    service.coordinate(coordination);
    pinQueue.shareWith(coordination.media());
    service.start(syncEngine);
    ReplicationMetrics.register(registry, service);
    replication = service;
    // Syncs and media pins an outage failed run again as soon as the store answers.
    final SyncEngine engine = syncEngine;
    whenStoresRecover(() -> {
      pinQueue.storeRecovered();
      engine.storeRecovered();
    });
    topics.start(service.topicListener(), service.admission());
  }

  /**
   * The Pinning Service API's state: requests from the datastore, unfinished ones restarted;
   * pins dial the request's origins, then fetch over bitswap and pin as the gateway does.
   */
  private PinningServiceEngine startPinningService() {
    final NetworkPinner pinner = new NetworkPinner(bitswap, pins, CodecLinkResolver.standard(),
        bitswapExecutor);
    final Host libp2p = host;
    final PinStore pinStore = pins;
    final StorageQuota quota = storageGc.quota();
    final PinningServiceEngine engine = new PinningServiceEngine(datastore, clock,
        new PinningServiceEngine.Pinner() {
          @Override
          public CompletableFuture<?> pin(final Cid cid, final List<Multiaddr> origins) {
            for (final Multiaddr origin : origins) {
              if (origin.peerId().isPresent()) {
                libp2p.dial(origin).whenComplete((connection, error) -> {
                  if (error != null) {
                    LOG.debug("pin origin {} not reached: {}", origin, rootMessage(error));
                  }
                });
              }
            }
            try {
              // At the quota a new pin fails at once (its request ends "failed").
              quota.checkRoom("pin", 1);
            } catch (final StorageFullException e) {
              return CompletableFuture.failedFuture(e);
            }
            return pinner.pin(cid, NetworkPinner.Limits.DEFAULT);
          }

          @Override
          public boolean isPinned(final Cid cid) {
            return pinStore.isPinned(cid);
          }

          @Override
          public void unpin(final Cid cid) {
            pinStore.unpin(cid);
          }
        }, () -> advertisedAddresses().stream().map(Multiaddr::toString).toList(),
        PinningServiceEngine.Limits.DEFAULT, responses.mapper());
    engine.load();
    PinningServiceMetrics.register(registry, engine);
    pinningService = engine;
    return engine;
  }

  /**
   * {@code GET /pinning/export} and {@code POST /pinning/import}: imports verify entries on the
   * replication executor, then queue a sync so the database is followed like an announced one.
   */
  /**
   * {@code route}, answered {@code 507 storage_full} instead while the storage quota is reached
   * (checked before the request does anything; counted under {@code what}).
   */
  private RouteHandler refusedWhenFull(final RouteHandler route, final String what) {
    final StorageQuota quota = storageGc.quota();
    return request -> {
      try {
        quota.checkRoom(what, 1);
      } catch (final StorageFullException e) {
        return CompletableFuture.completedFuture(responses.error(
            HttpResponseStatus.INSUFFICIENT_STORAGE, ErrorCodes.STORAGE_FULL, e.getMessage()));
      }
      return route.handle(request);
    };
  }

  /** {@code RELAY_STORAGE_MAX_BYTES} when one is enforced. */
  private Optional<Long> quotaBytes() {
    final long max = storageGc.quota().maxBytes();
    return max > 0 ? Optional.of(max) : Optional.empty();
  }

  /**
   * The gateway's network fallback: bitswap fetches capped at the cache budget, cached (not
   * pinned) in the {@link GatewayCache}; none when {@code RELAY_GATEWAY_CACHE_MAX_BYTES=0}.
   */
  private Optional<NetworkContent> gatewayNetworkContent() {
    final long budget = storageGc.cache().maxBytes();
    if (budget == 0) {
      LOG.info("/ipfs/ network fallback off (RELAY_GATEWAY_CACHE_MAX_BYTES=0)");
      return Optional.empty();
    }
    final BitswapNetworkContent fetcher = new BitswapNetworkContent(bitswap,
        new NetworkPinner(bitswap, pins, CodecLinkResolver.standard(), bitswapExecutor), budget);
    return Optional.of(new CachingNetworkContent(fetcher, blockstore,
        CodecLinkResolver.standard(), storageGc, storageExecutor,
        BitswapNetworkContent.MAX_BLOCKS));
  }

  private ExportRoutes exportRoutes() {
    final MediaCidExtractor media = new MediaCidExtractor(config.sync().mediaCidFields());
    return new ExportRoutes(
        new DatabaseExporter(blockstore, datastore, CodecLinkResolver.standard(),
            payload -> media.extract(payload).cids(), CarPlanner.Limits.DEFAULT),
        new DatabaseImporter(blockstore, datastore, pins, CodecLinkResolver.standard(),
            payload -> media.extract(payload).cids(), replicationExecutor,
            CarReader.Limits.DEFAULT, REPLICATION_FETCH_TIMEOUT, identityVerifiers,
            address -> Optional.ofNullable(replication)
                .flatMap(service -> service.replicas().replica(address))),
        blockstore, storageExecutor, responses, gatewayMetrics, config.http().apiToken(),
        address -> syncEngine.enqueue(address.toString(), SyncTrigger.HTTP));
  }

  /** The Pinning Service API's state, once started with HTTP. */
  public Optional<PinningServiceEngine> pinningService() {
    return Optional.ofNullable(pinningService);
  }

  /**
   * How this relay coordinates with others on shared stores (issue 24); its {@code gcPolicy()}
   * (the GC-leader lease there) guards {@link #storageGc()}. Local (owns everything, always
   * collects) with the embedded stores.
   */
  public Coordination coordination() {
    return coordination;
  }

  /** The replication service (for tests and diagnostics); empty before start. */
  public Optional<ReplicationService> replication() {
    return Optional.ofNullable(replication);
  }

  /**
   * Bitswap on the host: serves the blockstore to peers and fetches for the gateway fallback;
   * blockstore work runs on its own bounded executor.
   */
  private void startBitswap() {
    bitswapExecutor = new ThreadPoolExecutor(STORAGE_THREADS, STORAGE_THREADS, 0,
        TimeUnit.MILLISECONDS, new ArrayBlockingQueue<>(4 * STORAGE_QUEUE),
        new DefaultThreadFactory("relay-bitswap", true), new ThreadPoolExecutor.AbortPolicy());
    // Blocks bitswap stores are pins' and gateway fetches': the quota refuses new ones when full.
    bitswap = Bitswap.start(host, storageGc.quota().guard(blockstore, "bitswap"),
        bitswapExecutor, BitswapConfig.DEFAULT, clock);
    BitswapMetrics.register(registry, bitswap);
  }

  /**
   * {@code RELAY_BOOTSTRAP_PEERS}: TCP or WebSocket multiaddrs ending in {@code /p2p/<id>}.
   *
   * @throws InvalidConfigException naming the variable when an entry cannot be dialled
   */
  private static List<Multiaddr> parseBootstrapPeers(final List<String> entries) {
    final List<Multiaddr> peers = new ArrayList<>();
    for (final String text : entries) {
      final Multiaddr address;
      try {
        address = Multiaddr.parse(text);
      } catch (final MultiformatException e) {
        throw new InvalidConfigException("RELAY_BOOTSTRAP_PEERS", "RELAY_BOOTSTRAP_PEERS: \""
            + text + "\" is not a multiaddr (" + e.getMessage() + ")");
      }
      if (address.peerId().isEmpty()) {
        throw new InvalidConfigException("RELAY_BOOTSTRAP_PEERS", "RELAY_BOOTSTRAP_PEERS: \""
            + text + "\" does not end in /p2p/<peer id>");
      }
      peers.add(address);
    }
    return List.copyOf(peers);
  }

  /** Dials the bootstrap peers once, without waiting; failures are logged, not fatal. */
  private void dialBootstrapPeers() {
    for (final Multiaddr address : bootstrapPeers) {
      host.dial(address).whenComplete((connection, error) -> {
        if (error == null) {
          LOG.info("connected to bootstrap peer {}", address);
        } else {
          LOG.warn("cannot reach bootstrap peer {}: {}", address, rootMessage(error));
        }
      });
    }
  }

  /** A connected peer's addresses (identify's, else the connection's), for routing v1. */
  private Optional<List<Multiaddr>> connectedPeer(final io.relaypinner.multiformats.PeerId peer) {
    final Host current = host;
    if (current == null) {
      return Optional.empty();
    }
    return current.connection(peer).map(connection -> {
      final List<Multiaddr> known = current.peerStore().get(peer)
          .map(info -> info.addresses()).orElse(List.of());
      return known.isEmpty() ? List.of(connection.remoteAddress()) : known;
    });
  }

  /** Bitswap, once started. */
  public Optional<Bitswap> bitswap() {
    return Optional.ofNullable(bitswap);
  }

  /** Gossipsub, once started. */
  public Optional<PubSub> pubsub() {
    return Optional.ofNullable(pubsub);
  }

  /** The OrbitDB topic policy, once started (replication listens to it). */
  public Optional<OrbitDbTopics> orbitDbTopics() {
    return Optional.ofNullable(orbitDbTopics);
  }

  /** The sync engine, once started. */
  public Optional<SyncEngine> syncEngine() {
    return Optional.ofNullable(syncEngine);
  }

  /**
   * The TLS certificate of {@code RELAY_TLS_CERT_DIR}, once started: the HTTPS listener uses it,
   * and the WebSocket transport can take its server context from it too.
   */
  public synchronized Optional<CertificateStore> certificates() {
    return Optional.ofNullable(certificates);
  }

  /** The bound HTTPS port; empty while the HTTPS listener is not running. */
  public synchronized OptionalInt httpsPort() {
    final int port = httpsServer == null ? -1 : httpsServer.port();
    return port < 0 ? OptionalInt.empty() : OptionalInt.of(port);
  }

  /** The libp2p host, once started. */
  public Optional<Host> host() {
    return Optional.ofNullable(host);
  }

  /**
   * The node's block store, once started.
   *
   * @throws IllegalStateException before {@link #start()}
   */
  public synchronized Blockstore blockstore() {
    if (blockstore == null) {
      throw new IllegalStateException("storage is not open");
    }
    return blockstore;
  }

  /**
   * The node's pins, once started.
   *
   * @throws IllegalStateException before {@link #start()}
   */
  public PinStore pins() {
    final PinStore current = pins;
    if (current == null) {
      throw new IllegalStateException("storage is not open");
    }
    return current;
  }

  public NodeIdentity identity() {
    return identity;
  }

  /** What /health reports, read live from the host. */
  private final class LiveStatus implements NodeStatus {
    /**
     * Encoded once: the identity never changes, base58 costs microseconds, and the health
     * route's cache compares this string by identity (a new string per call made every
     * {@code /health} answer serialize its record again).
     */
    private final String peerId = identity.peerId().toBase58();

    @Override
    public String peerId() {
      return peerId;
    }

    @Override
    public String autoTlsServingZone() {
      return identity.autoTlsServingZone();
    }

    @Override
    public int activeConnections() {
      final Host current = host;
      return current == null ? 0 : current.connectionCount();
    }

    @Override
    public int multiaddrCount() {
      final Host current = host;
      return current == null ? 0 : advertisedAddresses().size();
    }

    /** The four possible answers, made once (compared by identity by the health route). */
    private final Map<String, String>[] storeStates = storeStates();

    @Override
    public Map<String, String> stores() {
      final StoreAvailability s3 = blockstore instanceof S3Blockstore b ? b.availability() : null;
      final StoreAvailability postgres =
          datastore instanceof PostgresDatastore d ? d.availability() : null;
      if (s3 == null && postgres == null) {
        return null;
      }
      return storeStates[(s3 == null || s3.up() ? 0 : 1)
          | (postgres == null || postgres.up() ? 0 : 2)];
    }

    @SuppressWarnings("unchecked")
    private Map<String, String>[] storeStates() {
      final boolean s3 = config.storage().s3().isPresent();
      final boolean postgres = config.storage().postgres().isPresent();
      final Map<String, String>[] states = new Map[4];
      for (int i = 0; i < 4; i++) {
        final Map<String, String> state = new java.util.LinkedHashMap<>();
        if (s3) {
          state.put("s3", (i & 1) == 0 ? "up" : "down");
        }
        if (postgres) {
          state.put("postgres", (i & 2) == 0 ? "up" : "down");
        }
        states[i] = java.util.Collections.unmodifiableMap(state);
      }
      return states;
    }
  }

  private EventLoops ownLoops() {
    ownLoops = EventLoops.create("relay-io");
    return ownLoops;
  }

  /** The bound HTTP port; empty when the listener is disabled or not running. */
  public OptionalInt httpPort() {
    final RelayHttpServer server = currentServer();
    final int port = server == null ? -1 : server.port();
    return port < 0 ? OptionalInt.empty() : OptionalInt.of(port);
  }

  /** The {@code metricsHttps} object (spec 2.2) as served now. */
  public MetricsHttpsStatus metricsHttps() {
    return metricsHttps;
  }

  public RelayConfig config() {
    return config;
  }

  private synchronized RelayHttpServer currentServer() {
    return httpServer;
  }

  /**
   * After the listener: storage work ends (bounded wait), then the stores close. Running storage
   * tasks are not interrupted at first: an interrupt during a datastore write closes the store's
   * file channel (ClosedByInterruptException) for everyone, so the stores could not be closed
   * cleanly. Only work still running after the wait is interrupted.
   */
  private void closeStorage() {
    if (storeProbe != null) {
      storeProbe.shutdownNow();
      storeProbe = null;
    }
    if (gcExecutor != null) {
      // No interrupt: a GC run reads the datastore, whose file channel an interrupt closes.
      gcExecutor.shutdown();
      try {
        if (!gcExecutor.awaitTermination(SHUTDOWN_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
          LOG.warn("GC did not stop within {} ms", SHUTDOWN_TIMEOUT.toMillis());
          gcExecutor.shutdownNow();
        }
      } catch (final InterruptedException e) {
        gcExecutor.shutdownNow();
        Thread.currentThread().interrupt();
      }
      gcExecutor = null;
    }
    storageGc = null;
    if (storageExecutor != null) {
      storageExecutor.shutdown();
      try {
        if (!storageExecutor.awaitTermination(SHUTDOWN_TIMEOUT.toMillis(),
            TimeUnit.MILLISECONDS)) {
          LOG.warn("storage work did not stop within {} ms", SHUTDOWN_TIMEOUT.toMillis());
          storageExecutor.shutdownNow();
        }
      } catch (final InterruptedException e) {
        storageExecutor.shutdownNow();
        Thread.currentThread().interrupt();
      }
      storageExecutor = null;
    }
    pins = null;
    if (datastore != null) {
      datastore.close();
      datastore = null;
    }
    if (blockstore != null) {
      if (blockstore instanceof AutoCloseable closeable) {
        try {
          closeable.close();
        } catch (final Exception e) {
          LOG.warn("closing the blockstore failed: {}", e.toString());
        }
      }
      blockstore = null;
      flatBlocks = null;
    }
  }

  /** Stops the listener, then the node's own loops, executors and stores; bounded wait. */
  @Override
  public synchronized void close() {
    if (state == State.CLOSED) {
      return;
    }
    state = State.CLOSED;
    if (httpServer != null) {
      httpServer.close();
      httpServer = null;
    }
    if (httpsServer != null) {
      httpsServer.close();
      httpsServer = null;
    }
    if (autoTls != null) {
      autoTls.close();
    }
    if (certificates != null) {
      certificates.close();
    }
    if (syncEngine != null) {
      // Before the host and the stores: running syncs may use both until they end.
      syncEngine.close();
    }
    if (replication != null) {
      replication.close();
    }
    coordination.close();
    if (discovery != null) {
      discovery.close();
      discovery = null;
    }
    if (circuitRelay != null) {
      circuitRelay.close();
      circuitRelay = null;
    }
    if (autoNat != null) {
      autoNat.close();
      autoNat = null;
    }
    if (pubsub != null) {
      pubsub.close();
      pubsub = null;
    }
    if (bitswap != null) {
      bitswap.close();
      bitswap = null;
    }
    if (host != null) {
      host.close();
      host = null;
    }
    if (ownLoops != null) {
      if (!ownLoops.shutdownGracefully(SHUTDOWN_TIMEOUT)) {
        LOG.warn("event loops did not stop within {} ms", SHUTDOWN_TIMEOUT.toMillis());
      }
      ownLoops = null;
    }
    if (scrapeExecutor != null) {
      scrapeExecutor.shutdownNow();
      try {
        scrapeExecutor.awaitTermination(SHUTDOWN_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
      } catch (final InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      scrapeExecutor = null;
    }
    if (replicationExecutor != null) {
      replicationExecutor.shutdownNow();
      try {
        replicationExecutor.awaitTermination(SHUTDOWN_TIMEOUT.toMillis(),
            TimeUnit.MILLISECONDS);
      } catch (final InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      replicationExecutor = null;
    }
    if (bitswapExecutor != null) {
      bitswapExecutor.shutdownNow();
      try {
        bitswapExecutor.awaitTermination(SHUTDOWN_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
      } catch (final InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      bitswapExecutor = null;
    }
    closeStorage();
    LOG.info("relay node stopped");
  }
}
