package io.relaypinner.relay;

import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.relaypinner.libp2p.netty.EventLoops;
import io.relaypinner.libp2p.protocol.kad.Reprovider;
import io.relaypinner.libp2p.transport.ws.ServerTlsSource;
import io.relaypinner.multiformats.Multiaddr;
import io.relaypinner.relay.api.AdvertisedAddresses;
import io.relaypinner.relay.api.NodeStatus;
import io.relaypinner.relay.autotls.AutoTlsOptions;
import io.relaypinner.relay.config.InvalidConfigException;
import io.relaypinner.relay.config.MetricsHttpsEndpoint;
import io.relaypinner.relay.config.RelayConfig;
import io.relaypinner.relay.http.HttpResponses;
import io.relaypinner.relay.identity.NodeIdentity;
import io.relaypinner.relay.network.PinnedContent;
import io.relaypinner.relay.network.PinnedProviding;
import io.relaypinner.relay.node.BudgetMetrics;
import io.relaypinner.relay.node.ContentSubsystem;
import io.relaypinner.relay.node.HttpSubsystem;
import io.relaypinner.relay.node.LiveStatus;
import io.relaypinner.relay.node.NetworkSubsystem;
import io.relaypinner.relay.node.NodeBudget;
import io.relaypinner.relay.node.NodeTuning;
import io.relaypinner.relay.node.ReplicationSubsystem;
import io.relaypinner.relay.node.RunState;
import io.relaypinner.relay.node.StorageSubsystem;
import io.relaypinner.relay.node.Subsystem;
import io.relaypinner.relay.storage.GcPolicy;
import io.relaypinner.relay.tls.CertificateStore;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One running relay, wired from a {@link RelayConfig} as five subsystems started in this order:
 * {@link StorageSubsystem storage} (the block store, pins and sync history under
 * {@code DATASTORE_PATH}, or the shared stores; quota and GC), {@link NetworkSubsystem network}
 * (libp2p, circuit relay, AutoNAT, gossipsub, discovery), {@link ContentSubsystem content}
 * (bitswap, network pins, the Pinning Service API), {@link ReplicationSubsystem replication}
 * (OrbitDB topics, the sync engine of spec 3.5, replicas, media pins), then the bootstrap peers
 * are dialled and {@link HttpSubsystem http} starts (the listener of spec 1 with
 * {@code /health}, {@code /multiaddrs}, {@code /metrics}, the pinning routes of spec 4.4-4.5 and
 * the gateway {@code /ipfs/} of spec 4.6, HTTPS and AutoTLS).
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
 * <p>One lifecycle: {@link #close()} stops the started subsystems in reverse start order (what
 * uses the others ends first), then closes them in that order (their executors, bounded each;
 * the stores last). The registry belongs to the caller and holds this node's metrics only (one
 * registry per node: registering twice fails). Event loops are created by the node unless shared
 * loops are passed in, which the node then never shuts down.
 */
public final class RelayNode implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(RelayNode.class);

  private enum State { NEW, STARTED, CLOSED }

  private final RelayConfig config;
  private final NodeIdentity identity;
  private final PrometheusRegistry registry;
  private final Clock clock;
  private final EventLoops sharedLoops;
  private final NodeTuning tuning;
  private final AdvertisedAddresses advertiser;
  private final List<Multiaddr> bootstrapPeers;
  private final MetricsHttpsEndpoint httpsEndpoint;
  private final HttpResponses responses;
  private final NodeStatus status;
  private final NodeBudget budget;
  /** The started subsystems (and own event loops), in start order. */
  private final List<Subsystem> started = new ArrayList<>();

  private State state = State.NEW;
  /** This run in {@code <DATASTORE_PATH>/run-state}: marked stopped at the end of a clean close. */
  private RunState runState;
  private AutoTlsOptions autoTlsOptions = AutoTlsOptions.DEFAULT;
  /** Set by {@link #gcPolicy}; null: the coordination's (always alone, the leader shared). */
  private GcPolicy gcPolicy;
  /** Null unless set by useWebSocketTls: then the certificate store. */
  private ServerTlsSource webSocketTls;
  private volatile StorageSubsystem storage;
  private volatile NetworkSubsystem network;
  private volatile ContentSubsystem content;
  private volatile ReplicationSubsystem replication;
  private volatile HttpSubsystem http;
  /** Null when the DHT is off. */
  private volatile PinnedProviding providing;

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
    this(config, identity, registry, clock, sharedLoops, NodeTuning.DEFAULT);
  }

  /**
   * A node with other built-in choices than {@link NodeTuning#DEFAULT} (tests, benchmarks).
   *
   * @throws InvalidConfigException when a setting is bad for this identity
   */
  public RelayNode(final RelayConfig config, final NodeIdentity identity,
      final PrometheusRegistry registry, final Clock clock, final EventLoops sharedLoops,
      final NodeTuning tuning) {
    this.config = Objects.requireNonNull(config, "config");
    this.identity = Objects.requireNonNull(identity, "identity");
    this.tuning = Objects.requireNonNull(tuning, "tuning");
    this.status = new LiveStatus(identity, config.storage(), () -> network, () -> storage);
    this.bootstrapPeers = config.network().bootstrapAddresses();
    this.advertiser = new AdvertisedAddresses(identity.peerId(), config.deployment(),
        config.network().announce());
    this.registry = Objects.requireNonNull(registry, "registry");
    this.clock = Objects.requireNonNull(clock, "clock");
    this.sharedLoops = sharedLoops;
    this.httpsEndpoint = MetricsHttpsEndpoint.resolve(config, identity.autoTlsServingZone());
    this.responses = HttpResponses.withMapperBuiltInBackground();
    this.budget = NodeBudget.ofThisJvm(config);
  }

  /** The node's one resource budget (docs/hardening.md "The budget"). */
  public NodeBudget budget() {
    return budget;
  }

  /**
   * Starts the subsystems and returns once the HTTP listener (unless {@code METRICS_DISABLED})
   * is bound.
   *
   * @throws java.io.UncheckedIOException when a listener cannot bind (the node is then closed)
   * @throws IllegalStateException when called twice or after {@link #close()}
   */
  public synchronized void start() {
    if (state != State.NEW) {
      throw new IllegalStateException("relay node is " + state.name().toLowerCase(Locale.ROOT));
    }
    state = State.STARTED;
    final String peerId = identity.peerId().toBase58();
    // One store for WSS on the WebSocket port and the HTTPS listener; the HTTP side owns it.
    final CertificateStore certificates = new CertificateStore(config.tls().certDir(),
        CertificateStore.DEFAULT_POLL_INTERVAL, clock);
    try {
      BudgetMetrics.register(registry, budget);
      storage = add(StorageSubsystem.open(config.storage(), peerId, registry, clock, tuning,
          gcPolicy));
      // After the stores: they lock the data directory, so a second node on it fails above
      // without marking the first one's run.
      runState = RunState.begin(config.storage().dataDir(), clock);
      runState.register(registry);
      final EventLoops loops = sharedLoops != null ? sharedLoops : ownLoops();
      network = add(new NetworkSubsystem(config, identity, advertiser, bootstrapPeers,
          webSocketTls != null ? webSocketTls : certificates::current, certificates, loops,
          registry, clock, tuning, budget));
      content = add(new ContentSubsystem(storage, network.host(), registry, clock, tuning,
          budget));
      replication = add(new ReplicationSubsystem(config, peerId, storage, network, content,
          registry, clock, tuning, budget));
      // GET_PROVIDERS for a root the relay has pinned lists the relay (server mode).
      network.dht().ifPresent(dht -> dht.holds(new PinnedContent(storage.pins())));
      // Every pinned root is announced (ADD_PROVIDER) and re-provided in region batches, as many
      // as a 64th of the heap holds.
      final Reprovider.Settings provideDefaults = Reprovider.Settings.defaults();
      final Reprovider.Settings provideSettings = new Reprovider.Settings(
          provideDefaults.interval(), provideDefaults.batchDelay(),
          PinnedProviding.maxKeysFor(Runtime.getRuntime().maxMemory()),
          provideDefaults.maxLookups(), provideDefaults.maxSends(),
          provideDefaults.sendsPerSecond());
      providing = network.dht().map(dht -> PinnedProviding.start(dht, storage.pins(),
          provideSettings, registry)).orElse(null);
      network.dialBootstrapPeers();
      http = add(new HttpSubsystem(new HttpSubsystem.Settings(config, identity, status,
          httpsEndpoint, responses, autoTlsOptions), certificates, storage, network, content,
          replication, loops, registry, clock, tuning, budget));
    } catch (final RuntimeException e) {
      if (http == null) {
        certificates.close();
      }
      close();
      throw e;
    }
  }

  private <T extends Subsystem> T add(final T subsystem) {
    started.add(subsystem);
    return subsystem;
  }

  /** The node's own event loops, shut down (bounded) after the host and before the stores. */
  private EventLoops ownLoops() {
    final EventLoops loops = EventLoops.create("relay-io");
    add(new Subsystem() {
      @Override
      protected void onStop() {
        if (!loops.shutdownGracefully(tuning.shutdownTimeout())) {
          LOG.warn("event loops did not stop within {} ms", tuning.shutdownTimeout().toMillis());
        }
      }
    });
    return loops;
  }

  /**
   * Settings of the AutoTLS client other than the environment's (timing, the ACME server's
   * trust); call before {@link #start()}.
   */
  public synchronized void useAutoTlsOptions(final AutoTlsOptions options) {
    this.autoTlsOptions = Objects.requireNonNull(options, "options");
  }

  /**
   * Where the WebSocket port gets its certificate (e.g. the certificate store watching
   * {@code RELAY_TLS_CERT_DIR}): asked for every accepted WebSocket connection and by
   * {@code /multiaddrs}, which lists {@code /tls/ws} addresses while it has one. Default: the
   * node's certificate store ({@code RELAY_TLS_CERT_DIR}); call before {@link #start()} to
   * replace it.
   */
  public synchronized void useWebSocketTls(final ServerTlsSource source) {
    this.webSocketTls = Objects.requireNonNull(source, "source");
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

  /** The stores, pins, quota, GC and coordination. */
  public StorageSubsystem storage() {
    return running(storage);
  }

  /** The libp2p host, circuit relay, AutoNAT, gossipsub, discovery, advertised addresses. */
  public NetworkSubsystem network() {
    return running(network);
  }

  /** Bitswap, the network pinner, the gateway fallback, the Pinning Service API. */
  public ContentSubsystem content() {
    return running(content);
  }

  /** OrbitDB topics, the sync engine and the replication service. */
  public ReplicationSubsystem replication() {
    return running(replication);
  }

  /** The HTTP and HTTPS listeners, the certificate store and AutoTLS. */
  public HttpSubsystem http() {
    return running(http);
  }

  /** @throws IllegalStateException before {@link #start()} got that far */
  private static <T extends Subsystem> T running(final T subsystem) {
    if (subsystem == null) {
      throw new IllegalStateException("relay node is not running");
    }
    return subsystem;
  }

  /** What {@code /health} reports, read live. */
  public NodeStatus status() {
    return status;
  }

  public NodeIdentity identity() {
    return identity;
  }

  public RelayConfig config() {
    return config;
  }

  /**
   * Stops the started subsystems in reverse start order (HTTP first, so nothing new arrives; the
   * sync engine before the host and the stores, since running syncs use both), then closes them
   * in the same order (their executors; the stores last). Each step is bounded; idempotent.
   */
  @Override
  public synchronized void close() {
    if (state == State.CLOSED) {
      return;
    }
    state = State.CLOSED;
    if (providing != null) {
      providing.close();
    }
    for (int i = started.size() - 1; i >= 0; i--) {
      step(started.get(i), Subsystem::stop);
    }
    for (int i = started.size() - 1; i >= 0; i--) {
      step(started.get(i), Subsystem::close);
    }
    if (runState != null) {
      runState.end();
    }
    LOG.info("relay node stopped");
  }

  /** One step of the shutdown: a failure is logged and the next subsystems still close. */
  private static void step(final Subsystem subsystem, final Consumer<Subsystem> action) {
    try {
      action.accept(subsystem);
    } catch (final RuntimeException e) {
      LOG.warn("closing {} failed", subsystem.getClass().getSimpleName(), e);
    }
  }
}
