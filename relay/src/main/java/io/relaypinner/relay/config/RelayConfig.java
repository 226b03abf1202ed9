package io.relaypinner.relay.config;

import io.relaypinner.common.budget.IpPrefix;
import io.relaypinner.common.budget.IpRange;
import io.relaypinner.libp2p.host.ConnectionLimits;
import io.relaypinner.libp2p.protocol.relay.CircuitRelayConfig;
import io.relaypinner.relay.config.EnvReader.Value;
import io.relaypinner.relay.pubsub.TopicPolicy;
import io.relaypinner.stores.PostgresStoreConfig;
import io.relaypinner.stores.S3StoreConfig;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * Every setting of one relay, immutable. Implements the environment table of CONTRACT.md (which
 * completes spec 1, 4 and 8); {@link #fromEnvironment} is the only place in the code base that
 * reads environment variables, and the CLI maps its options onto the {@link Builder}.
 *
 * <p>Rules: booleans are {@code true/1/yes/on} or {@code false/0/no/off} in any case; durations
 * are milliseconds; lists are comma-separated with items trimmed and empty items dropped; values
 * are trimmed and an empty value counts as unset; when a variable and its alias are both set, the
 * primary name wins. A bad value fails with an {@link InvalidConfigException} naming the variable.
 * Unknown variables are ignored.
 */
public record RelayConfig(
    StorageConfig storage,
    IdentityConfig identity,
    NetworkConfig network,
    DeploymentConfig deployment,
    HttpConfig http,
    HttpsConfig https,
    CorsConfig cors,
    TlsConfig tls,
    SyncConfig sync,
    GatewayConfig gateway,
    LoggingConfig logging,
    CircuitConfig circuit,
    PasskeyConfig passkeys,
    PinningServiceConfig pinningService,
    BudgetConfig budget,
    ImportConfig imports) {

  /** The embedded defaults: what {@code ./relay-pinner} runs with an empty environment. */
  public static final RelayConfig DEFAULT = builder().build();

  public RelayConfig {
    Objects.requireNonNull(storage, "storage");
    Objects.requireNonNull(identity, "identity");
    Objects.requireNonNull(network, "network");
    Objects.requireNonNull(deployment, "deployment");
    Objects.requireNonNull(http, "http");
    Objects.requireNonNull(https, "https");
    Objects.requireNonNull(cors, "cors");
    Objects.requireNonNull(tls, "tls");
    Objects.requireNonNull(sync, "sync");
    Objects.requireNonNull(gateway, "gateway");
    Objects.requireNonNull(logging, "logging");
    Objects.requireNonNull(circuit, "circuit");
    Objects.requireNonNull(passkeys, "passkeys");
    Objects.requireNonNull(pinningService, "pinningService");
    Objects.requireNonNull(budget, "budget");
    Objects.requireNonNull(imports, "imports");
  }

  /** Spec 4.2: any of {@code PROXY_HOSTNAME}, {@code PUBLIC_IPV4} or an external port is set. */
  public boolean deployedMode() {
    return deployment.deployedMode();
  }

  /** {@code RELAY_STORAGE_MAX_BYTES}, {@code RELAY_GATEWAY_CACHE_MAX_BYTES}, GC timing. */
  private static StorageLimits storageLimits(final EnvReader in) {
    final StorageLimits d = StorageLimits.DEFAULT;
    final String bytes = Checks.intExpectation(0, StorageLimits.MAX_BYTES) + " (bytes)";
    return new StorageLimits(
        in.get("RELAY_STORAGE_MAX_BYTES").map(v -> EnvReader.integer(v, 0,
            StorageLimits.MAX_BYTES, bytes + ", 0 = no quota")).orElse(d.maxBytes()),
        in.get("RELAY_GATEWAY_CACHE_MAX_BYTES").map(v -> EnvReader.integer(v, 0,
            StorageLimits.MAX_BYTES, bytes)).orElse(d.gatewayCacheMaxBytes()),
        in.get("RELAY_GC_INTERVAL_MS").map(v -> EnvReader.millis(v, 0,
            StorageLimits.MAX_GC_MS)).orElse(d.gcInterval()),
        in.get("RELAY_GC_GRACE_MS").map(v -> EnvReader.millis(v, 0,
            StorageLimits.MAX_GC_MS)).orElse(d.gcGrace()));
  }

  /**
   * {@code RELAY_MAX_CONNECTIONS_PER_IP}, {@code RELAY_HTTP_MAX_CONNECTIONS},
   * {@code RELAY_IPV4_PREFIX_LENGTH}, {@code RELAY_IPV6_PREFIX_LENGTH},
   * {@code RELAY_TRUSTED_PROXIES}.
   */
  private static BudgetConfig budget(final EnvReader in) {
    final BudgetConfig d = BudgetConfig.DEFAULT;
    final String count = Checks.intExpectation(1, BudgetConfig.MAX_CONNECTIONS);
    final int perIp = in.get("RELAY_MAX_CONNECTIONS_PER_IP").map(v -> (int) EnvReader.integer(v,
        1, BudgetConfig.MAX_CONNECTIONS, count)).orElse(d.maxConnectionsPerIp());
    final int http = in.get("RELAY_HTTP_MAX_CONNECTIONS").map(v -> (int) EnvReader.integer(v,
        1, BudgetConfig.MAX_CONNECTIONS, count)).orElse(d.httpMaxConnections());
    final int v4 = in.get("RELAY_IPV4_PREFIX_LENGTH").map(v -> (int) EnvReader.integer(v, 1, 32,
        Checks.intExpectation(1, 32))).orElse(d.prefix().ipv4Bits());
    final int v6 = in.get("RELAY_IPV6_PREFIX_LENGTH").map(v -> (int) EnvReader.integer(v, 1, 128,
        Checks.intExpectation(1, 128))).orElse(d.prefix().ipv6Bits());
    final List<IpRange> proxies = new ArrayList<>();
    final Optional<Value> trusted = in.get("RELAY_TRUSTED_PROXIES");
    EnvReader.list(trusted).ifPresent(items -> {
      for (final String item : items) {
        try {
          proxies.add(IpRange.parse(item));
        } catch (final IllegalArgumentException e) {
          throw InvalidConfigException.badValue(trusted.get().variable(), item,
              "IP addresses or CIDR ranges (numeric), comma-separated");
        }
      }
    });
    return new BudgetConfig(perIp, http, new IpPrefix(v4, v6), proxies);
  }

  public static Builder builder() {
    return new Builder();
  }

  /**
   * A builder holding this configuration's values. The TLS directory is carried over as it is, so
   * a data directory changed on the builder does not move it.
   */
  public Builder toBuilder() {
    final Builder b = new Builder();
    b.dataDir = storage.dataDir();
    b.s3 = storage.s3().orElse(null);
    b.postgres = storage.postgres().orElse(null);
    b.storageLimits = storage.limits();
    b.privateKeyHex = identity.privateKeyHex().orElse(null);
    b.listenIpv4 = network.listenIpv4();
    b.listenIpv6 = network.listenIpv6();
    b.ipv6Disabled = network.ipv6Disabled();
    b.tcpPort = network.tcpPort();
    b.wsPort = network.wsPort();
    b.quicPort = network.quicPort();
    b.quicDisabled = network.quicDisabled();
    b.bootstrapPeers = network.bootstrapPeers();
    b.bootstrapDisabled = network.bootstrapDisabled();
    b.announce = network.announce();
    b.maxConnections = network.maxConnections();
    b.maxStreamsPerConnection = network.maxStreamsPerConnection();
    b.handshakeTimeout = network.handshakeTimeout();
    b.idleTimeout = network.idleTimeout();
    b.maxPeerInboundBytesPerSec = network.maxPeerInboundBytesPerSec();
    b.autoNatDisabled = network.autoNatDisabled();
    b.dhtMode = network.dhtMode();
    b.budget = budget;
    b.publicIpv4 = deployment.publicIpv4().orElse(null);
    b.publicIpv6 = deployment.publicIpv6().orElse(null);
    b.proxyHostname = deployment.proxyHostname().orElse(null);
    b.externalTcpPort = boxed(deployment.externalTcpPort());
    b.externalWsPort = boxed(deployment.externalWsPort());
    b.externalWebrtcPort = boxed(deployment.externalWebrtcPort());
    b.externalQuicPort = boxed(deployment.externalQuicPort());
    b.externalMetricsPort = boxed(deployment.externalMetricsPort());
    b.externalMetricsHttpsPort = boxed(deployment.externalMetricsHttpsPort());
    b.metricsHost = http.host();
    b.metricsPort = http.port();
    b.metricsDisabled = http.disabled();
    b.apiToken = http.apiToken().orElse(null);
    b.pinningServiceTokens = pinningService.tokens();
    b.importTimeout = imports.timeout();
    b.importSlots = imports.slots();
    b.importStagingMaxBytes = imports.stagingMaxBytes();
    b.httpIdleTimeout = http.idleTimeout();
    b.httpMaxInitialLineLength = http.maxInitialLineLength();
    b.httpMaxHeaderSize = http.maxHeaderSize();
    b.httpMaxBodySize = http.maxBodySize();
    b.metricsHttpsEnabled = https.enabled();
    b.metricsHttpsPort = https.port();
    b.metricsHttpsPublicHost = https.publicHost().orElse(null);
    b.corsOrigins = cors.allowedOrigins();
    b.corsAllowHeaders = cors.allowHeaders();
    b.corsMaxAgeSeconds = cors.maxAgeSeconds();
    b.tlsCertDir = tls.certDir();
    b.autoTlsDomain = tls.autoTlsDomain();
    b.autoTlsDisabled = tls.autoTlsDisabled();
    b.autoTlsStaging = tls.staging();
    b.autoTlsAcmeDirectory = tls.acmeDirectory().orElse(null);
    b.autoTlsBrokerUrl = tls.brokerUrl();
    b.autoTlsForced = tls.autoTlsForced();
    b.pinningSyncTimeout = sync.pinningSyncTimeout();
    b.syncCooldown = sync.syncCooldown();
    b.syncSlots = sync.slots();
    b.mediaCidFields = sync.mediaCidFields();
    b.orbitDbAllow = List.copyOf(sync.topicPolicy().allow());
    b.orbitDbDeny = List.copyOf(sync.topicPolicy().deny());
    b.gatewayMode = gateway.mode();
    b.ipfsFallbackTimeout = gateway.fallbackTimeout();
    b.logLevel = logging.level();
    b.logFormat = logging.format();
    b.loggerLevels = new LinkedHashMap<>(logging.loggerLevels());
    b.circuitRelay = circuit.relay().toBuilder();
    b.discoveryTopics = circuit.discoveryTopics();
    b.discoveryInterval = circuit.discoveryInterval();
    b.webauthnOrigins = passkeys.origins();
    b.webauthnRpIds = passkeys.rpIds();
    b.webauthnRequireLowS = passkeys.requireLowS();
    return b;
  }

  private static Integer boxed(final OptionalInt value) {
    return value.isPresent() ? value.getAsInt() : null;
  }

  /**
   * Reads every variable of CONTRACT.md's table from {@code env} (normally
   * {@code System.getenv()} merged over an {@code --env-file} by the CLI).
   *
   * @throws InvalidConfigException naming the first variable with a bad value
   */
  public static RelayConfig fromEnvironment(final Map<String, String> env) {
    final EnvReader in = new EnvReader(Objects.requireNonNull(env, "env"));
    final Builder b = builder();

    in.get("DATASTORE_PATH", "RELAY_DATASTORE_PATH").map(EnvReader::path).ifPresent(b::dataDir);
    in.get("RELAY_PRIV_KEY").map(Value::text).ifPresent(b::privateKeyHex);
    StoreSettings.s3(in).ifPresent(b::s3);
    StoreSettings.postgres(in).ifPresent(b::postgres);
    b.storageLimits(storageLimits(in));

    in.get("RELAY_LISTEN_IPV4").map(v -> Checks.ipv4(v.variable(), v.text()))
        .ifPresent(b::listenIpv4);
    in.get("RELAY_LISTEN_IPV6").map(v -> Checks.ipv6(v.variable(), v.text()))
        .ifPresent(b::listenIpv6);
    in.get("RELAY_DISABLE_IPV6").map(EnvReader::bool).ifPresent(b::ipv6Disabled);
    in.get("RELAY_TCP_PORT").map(EnvReader::port).ifPresent(b::tcpPort);
    in.get("RELAY_WS_PORT").map(EnvReader::port).ifPresent(b::wsPort);
    in.get("RELAY_QUIC_PORT").map(EnvReader::port).ifPresent(b::quicPort);
    in.get("RELAY_DISABLE_QUIC").map(EnvReader::bool).ifPresent(b::quicDisabled);
    multiaddrs(in.get("RELAY_BOOTSTRAP_PEERS")).ifPresent(b::bootstrapPeers);
    in.get("RELAY_DISABLE_BOOTSTRAP").map(EnvReader::bool).ifPresent(b::bootstrapDisabled);
    // RELAY_DISABLE_DHT (orbitdb-relay's switch) is applied, and checked against it, by
    // JsRelayEnvironment.
    in.get("RELAY_DHT_MODE").map(v -> DhtMode.parse(v.variable(), v.text()))
        .ifPresent(b::dhtMode);
    multiaddrs(in.get("RELAY_ANNOUNCE", JsRelayEnvironment.announceAlias(in)))
        .ifPresent(b::announce);
    in.get("RELAY_MAX_CONNECTIONS").map(v -> (int) EnvReader.integer(v, 1,
        NetworkConfig.MAX_MAX_CONNECTIONS,
        Checks.intExpectation(1, NetworkConfig.MAX_MAX_CONNECTIONS))).ifPresent(b::maxConnections);
    b.budget(budget(in));
    in.get("RELAY_MAX_STREAMS_PER_CONNECTION").map(v -> (int) EnvReader.integer(v, 1,
        NetworkConfig.MAX_STREAMS_PER_CONNECTION,
        Checks.intExpectation(1, NetworkConfig.MAX_STREAMS_PER_CONNECTION)))
        .ifPresent(b::maxStreamsPerConnection);
    in.get("RELAY_HANDSHAKE_TIMEOUT_MS").map(v -> EnvReader.millis(v,
        NetworkConfig.MIN_HANDSHAKE_TIMEOUT_MS, NetworkConfig.MAX_HANDSHAKE_TIMEOUT_MS))
        .ifPresent(b::handshakeTimeout);
    in.get("RELAY_IDLE_TIMEOUT_MS").map(v -> EnvReader.millis(v, 0,
        NetworkConfig.MAX_IDLE_TIMEOUT_MS)).ifPresent(b::idleTimeout);
    in.get("RELAY_MAX_PEER_INBOUND_BYTES_PER_SEC").map(v -> EnvReader.integer(v, 0,
        NetworkConfig.MAX_PEER_INBOUND_BYTES_PER_SEC,
        Checks.intExpectation(0, NetworkConfig.MAX_PEER_INBOUND_BYTES_PER_SEC)))
        .ifPresent(b::maxPeerInboundBytesPerSec);

    in.get("PUBLIC_IPV4").map(v -> Checks.ipv4(v.variable(), v.text())).ifPresent(b::publicIpv4);
    in.get("PUBLIC_IPV6").map(v -> Checks.ipv6(v.variable(), v.text())).ifPresent(b::publicIpv6);
    in.get("PROXY_HOSTNAME").map(v -> Checks.hostname(v.variable(), v.text()))
        .ifPresent(b::proxyHostname);
    in.get("EXTERNAL_RELAY_TCP_PORT", "EXTERNAL_TCP_PORT").map(EnvReader::publicPort).ifPresent(b::externalTcpPort);
    in.get("EXTERNAL_RELAY_WS_PORT", "EXTERNAL_WS_PORT").map(EnvReader::publicPort).ifPresent(b::externalWsPort);
    in.get("EXTERNAL_RELAY_WEBRTC_PORT", "EXTERNAL_WEBRTC_PORT").map(EnvReader::publicPort)
        .ifPresent(b::externalWebrtcPort);
    in.get("EXTERNAL_RELAY_QUIC_PORT", "EXTERNAL_QUIC_PORT").map(EnvReader::publicPort)
        .ifPresent(b::externalQuicPort);
    in.get("EXTERNAL_METRICS_PORT").map(EnvReader::publicPort).ifPresent(b::externalMetricsPort);
    in.get("EXTERNAL_METRICS_HTTPS_PORT").map(EnvReader::publicPort)
        .ifPresent(b::externalMetricsHttpsPort);

    in.get("METRICS_HOST").map(v -> Checks.host(v.variable(), v.text())).ifPresent(b::metricsHost);
    in.get("METRICS_PORT").map(EnvReader::port).ifPresent(b::metricsPort);
    in.get("METRICS_DISABLED").map(EnvReader::bool).ifPresent(b::metricsDisabled);
    in.get("RELAY_API_TOKEN").map(Value::text).ifPresent(b::apiToken);
    final List<String> pinTokens = new ArrayList<>();
    EnvReader.list(in.get("RELAY_PINNING_SERVICE_TOKENS")).ifPresent(pinTokens::addAll);
    in.get("RELAY_PINNING_SERVICE_TOKENS_FILE").map(EnvReader::path)
        .ifPresent(file -> pinTokens.addAll(PinningServiceConfig.readFile(file)));
    b.pinningServiceTokens(pinTokens);
    in.get("METRICS_HTTPS_ENABLED").map(EnvReader::bool).ifPresent(b::metricsHttpsEnabled);
    in.get("METRICS_HTTPS_PORT").map(EnvReader::port).ifPresent(b::metricsHttpsPort);
    in.get("METRICS_HTTPS_PUBLIC_HOST").map(v -> Checks.hostname(v.variable(), v.text()))
        .ifPresent(b::metricsHttpsPublicHost);

    EnvReader.list(in.get("METRICS_CORS_ORIGIN")).ifPresent(b::corsOrigins);
    EnvReader.list(in.get("METRICS_CORS_ALLOW_HEADERS")).ifPresent(b::corsAllowHeaders);
    in.get("METRICS_CORS_MAX_AGE").map(v -> EnvReader.integer(v, 0,
        CorsConfig.MAX_MAX_AGE_SECONDS,
        "a number of seconds (an integer in 0-" + CorsConfig.MAX_MAX_AGE_SECONDS + ")"))
        .ifPresent(b::corsMaxAgeSeconds);

    in.get("RELAY_TLS_CERT_DIR").map(EnvReader::path).ifPresent(b::tlsCertDir);
    in.get("RELAY_AUTOTLS_DOMAIN").map(v -> Checks.hostname(v.variable(), v.text()))
        .ifPresent(b::autoTlsDomain);
    // As the JavaScript relay: any value disables AutoTLS; false/0 (and no/off) keep it on.
    in.get("disableAutoTLS").map(v -> !EnvReader.isFalse(v)).ifPresent(b::autoTlsDisabled);
    in.get("STAGING").map(EnvReader::bool).ifPresent(b::autoTlsStaging);
    in.get("RELAY_AUTOTLS_ACME_DIRECTORY").map(v -> EnvReader.url(v))
        .ifPresent(b::autoTlsAcmeDirectory);
    in.get("RELAY_AUTOTLS_BROKER_URL").map(v -> EnvReader.url(v)).ifPresent(b::autoTlsBrokerUrl);
    in.get("RELAY_AUTOTLS_FORCE").map(EnvReader::bool).ifPresent(b::autoTlsForced);

    in.get("RELAY_PINNING_SYNC_TIMEOUT_MS").map(v -> EnvReader.millis(v, 1,
        SyncConfig.MAX_TIMEOUT_MS)).ifPresent(b::pinningSyncTimeout);
    in.get("RELAY_ORBITDB_SYNC_COOLDOWN_MS").map(v -> EnvReader.millis(v, 0,
        SyncConfig.MAX_COOLDOWN_MS)).ifPresent(b::syncCooldown);
    in.get("RELAY_SYNC_SLOTS").map(v -> (int) EnvReader.integer(v, 1, SyncConfig.MAX_SLOTS,
        Checks.intExpectation(1, SyncConfig.MAX_SLOTS))).ifPresent(b::syncSlots);
    in.get("RELAY_IMPORT_TIMEOUT_MS").map(v -> EnvReader.millis(v, 1,
        ImportConfig.MAX_TIMEOUT_MS)).ifPresent(b::importTimeout);
    in.get("RELAY_IMPORT_SLOTS").map(v -> (int) EnvReader.integer(v, 1, ImportConfig.MAX_SLOTS,
        Checks.intExpectation(1, ImportConfig.MAX_SLOTS))).ifPresent(b::importSlots);
    in.get("RELAY_IMPORT_STAGING_MAX_BYTES").map(v -> EnvReader.integer(v, 0, Long.MAX_VALUE,
        ImportConfig.stagingExpectation())).ifPresent(b::importStagingMaxBytes);
    EnvReader.list(in.get("RELAY_MEDIA_CID_FIELDS")).ifPresent(b::mediaCidFields);
    EnvReader.list(in.get("RELAY_ORBITDB_ALLOW")).ifPresent(b::orbitDbAllow);
    EnvReader.list(in.get("RELAY_ORBITDB_DENY")).ifPresent(b::orbitDbDeny);

    in.get("RELAY_IPFS_GATEWAY_MODE").map(v -> GatewayMode.parse(v.variable(), v.text()))
        .ifPresent(b::gatewayMode);
    in.get("RELAY_IPFS_FALLBACK_TIMEOUT_MS", "RELAY_IPFS_CAT_TIMEOUT_MS").map(v -> EnvReader.millis(v, 1,
        GatewayConfig.MAX_FALLBACK_TIMEOUT_MS)).ifPresent(b::ipfsFallbackTimeout);

    in.get("RELAY_CIRCUIT_HOP_TIMEOUT_MS").map(v -> EnvReader.millis(v, 1,
        CircuitConfig.MAX_HOP_TIMEOUT_MS)).ifPresent(b::circuitHopTimeout);
    in.get("RELAY_CIRCUIT_MAX_RESERVATIONS").map(v -> (int) EnvReader.integer(v, 0,
        CircuitRelayConfig.MAX_RESERVATIONS,
        Checks.intExpectation(0, CircuitRelayConfig.MAX_RESERVATIONS) + ", 0 = unlimited"))
        .ifPresent(b::circuitMaxReservations);
    in.get("RELAY_MAX_CIRCUITS_PER_IP").map(v -> (int) EnvReader.integer(v, 1,
        CircuitRelayConfig.MAX_CIRCUITS, Checks.intExpectation(1, CircuitRelayConfig.MAX_CIRCUITS)))
        .ifPresent(b::circuitMaxCircuitsPerIp);
    in.get("RELAY_CIRCUIT_RESERVATION_TTL_MS").map(v -> EnvReader.millis(v, 0,
        CircuitConfig.MAX_TTL_MS)).ifPresent(b::circuitReservationTtl);
    in.get("RELAY_CIRCUIT_DEFAULT_DATA_LIMIT_BYTES").map(v -> EnvReader.integer(v, 0,
        Long.MAX_VALUE, "a number of bytes, 0 = unlimited")).ifPresent(b::circuitDataLimit);
    in.get("RELAY_CIRCUIT_DEFAULT_DURATION_LIMIT_MS").map(v -> EnvReader.millis(v, 0,
        CircuitConfig.MAX_DURATION_MS)).ifPresent(b::circuitDurationLimit);
    EnvReader.list(in.get("PUBSUB_TOPICS", "VITE_PUBSUB_TOPICS")).ifPresent(b::discoveryTopics);
    EnvReader.list(in.get("RELAY_WEBAUTHN_ORIGINS")).ifPresent(b::webauthnOrigins);
    EnvReader.list(in.get("RELAY_WEBAUTHN_RP_IDS")).ifPresent(b::webauthnRpIds);
    in.get("RELAY_WEBAUTHN_REQUIRE_LOW_S").map(EnvReader::bool)
        .ifPresent(b::webauthnRequireLowS);

    in.get("LOG_LEVEL").map(v -> LogLevel.parse(v.variable(), v.text())).ifPresent(b::logLevel);
    in.get("LOG_FORMAT").map(v -> LogFormat.parse(v.variable(), v.text()))
        .ifPresent(b::logFormat);
    // orbitdb-relay's variables that are not ours by name: applied, or start-up refused.
    JsRelayEnvironment.apply(in, b);
    return b.build();
  }

  /** Checked here too so that a bad item names the variable it came from (maybe an alias). */
  private static Optional<List<String>> multiaddrs(final Optional<Value> value) {
    return EnvReader.list(value).map(items -> Checks.multiaddrs(value.get().variable(), items));
  }

  /**
   * Collects settings; {@link #build()} validates them. Setters taking an object accept
   * {@code null} for "unset, use the default".
   */
  public static final class Builder {
    private Path dataDir = Path.of("./relay-data");
    private S3StoreConfig s3;
    private PostgresStoreConfig postgres;
    private StorageLimits storageLimits = StorageLimits.DEFAULT;
    private String privateKeyHex;
    private String listenIpv4 = "0.0.0.0";
    private String listenIpv6 = "::";
    private boolean ipv6Disabled;
    private int tcpPort = 9091;
    private int wsPort = 9092;
    private int quicPort = NetworkConfig.DEFAULT_QUIC_PORT;
    private boolean quicDisabled;
    private List<String> bootstrapPeers = List.of();
    private boolean bootstrapDisabled;
    private List<String> announce = List.of();
    private int maxConnections = ConnectionLimits.DEFAULT.maxConnections();
    private int maxStreamsPerConnection = ConnectionLimits.DEFAULT.maxStreamsPerConnection();
    private Duration handshakeTimeout = ConnectionLimits.DEFAULT.handshakeTimeout();
    private Duration idleTimeout = ConnectionLimits.DEFAULT.idleTimeout();
    private long maxPeerInboundBytesPerSec = ConnectionLimits.DEFAULT.peerInboundBytesPerSecond();
    private BudgetConfig budget = BudgetConfig.DEFAULT;
    private String publicIpv4;
    private String publicIpv6;
    private String proxyHostname;
    private Integer externalTcpPort;
    private Integer externalWsPort;
    private Integer externalWebrtcPort;
    private Integer externalQuicPort;
    private Integer externalMetricsPort;
    private Integer externalMetricsHttpsPort;
    private String metricsHost = "0.0.0.0";
    private int metricsPort = 9090;
    private boolean metricsDisabled;
    private String apiToken;
    private List<String> pinningServiceTokens = List.of();
    private Duration importTimeout = ImportConfig.DEFAULT_TIMEOUT;
    private int importSlots = ImportConfig.DEFAULT_SLOTS;
    private long importStagingMaxBytes;
    private Duration httpIdleTimeout = HttpConfig.DEFAULT_IDLE_TIMEOUT;
    private int httpMaxInitialLineLength = HttpConfig.DEFAULT_MAX_INITIAL_LINE_LENGTH;
    private int httpMaxHeaderSize = HttpConfig.DEFAULT_MAX_HEADER_SIZE;
    private int httpMaxBodySize = HttpConfig.DEFAULT_MAX_BODY_SIZE;
    private boolean metricsHttpsEnabled;
    private int metricsHttpsPort = 9443;
    private String metricsHttpsPublicHost;
    private List<String> corsOrigins = List.of(CorsConfig.ANY_ORIGIN);
    private List<String> corsAllowHeaders = CorsConfig.DEFAULT_ALLOW_HEADERS;
    private long corsMaxAgeSeconds = CorsConfig.DEFAULT_MAX_AGE_SECONDS;
    private Path tlsCertDir;
    private String autoTlsDomain = TlsConfig.DEFAULT_AUTOTLS_DOMAIN;
    private boolean autoTlsDisabled;
    private boolean autoTlsStaging;
    private java.net.URI autoTlsAcmeDirectory;
    private java.net.URI autoTlsBrokerUrl = TlsConfig.DEFAULT_BROKER_URL;
    private boolean autoTlsForced;
    private Duration pinningSyncTimeout = Duration.ofMillis(30_000);
    private Duration syncCooldown = Duration.ofMillis(60_000);
    private int syncSlots = 2;
    private List<String> mediaCidFields = SyncConfig.DEFAULT_MEDIA_CID_FIELDS;
    private List<String> orbitDbAllow = List.of();
    private List<String> orbitDbDeny = List.of();
    private GatewayMode gatewayMode = GatewayMode.PINNED_FIRST;
    private Duration ipfsFallbackTimeout = Duration.ofMillis(60_000);
    private LogLevel logLevel = LogLevel.INFO;
    private Map<String, LogLevel> loggerLevels = new LinkedHashMap<>();
    private boolean autoNatDisabled;
    private DhtMode dhtMode = NetworkConfig.DEFAULT_DHT_MODE;
    private LogFormat logFormat = LogFormat.TEXT;
    private CircuitRelayConfig.Builder circuitRelay = CircuitRelayConfig.DEFAULT.toBuilder();
    private List<String> discoveryTopics = List.of(CircuitConfig.DEFAULT_DISCOVERY_TOPIC);
    private Duration discoveryInterval = CircuitConfig.DEFAULT_DISCOVERY_INTERVAL;
    private List<String> webauthnOrigins = List.of();
    private List<String> webauthnRpIds = List.of();
    private boolean webauthnRequireLowS;

    private Builder() {}

    /** {@code RELAY_WEBAUTHN_REQUIRE_LOW_S}: refuse P-256 passkey signatures with high S. */
    public Builder webauthnRequireLowS(final boolean value) {
      this.webauthnRequireLowS = value;
      return this;
    }

    /** {@code RELAY_WEBAUTHN_ORIGINS}: relying-party origins of passkey identities. */
    public Builder webauthnOrigins(final List<String> value) {
      this.webauthnOrigins = value == null ? List.of() : value;
      return this;
    }

    /** {@code RELAY_WEBAUTHN_RP_IDS}: relying-party ids; empty = the origins' hosts. */
    public Builder webauthnRpIds(final List<String> value) {
      this.webauthnRpIds = value == null ? List.of() : value;
      return this;
    }

    /** {@code DATASTORE_PATH}; default {@code ./relay-data}. */
    public Builder dataDir(final Path value) {
      this.dataDir = value == null ? Path.of("./relay-data") : value;
      return this;
    }

    /** {@code RELAY_BLOCKSTORE=s3} with these settings; null for flat files (the default). */
    public Builder s3(final S3StoreConfig value) {
      this.s3 = value;
      return this;
    }

    /** {@code RELAY_DATASTORE=postgres} with these settings; null for MVStore (the default). */
    public Builder postgres(final PostgresStoreConfig value) {
      this.postgres = value;
      return this;
    }

    /** {@code RELAY_STORAGE_MAX_BYTES} and its companions; null for the defaults. */
    public Builder storageLimits(final StorageLimits value) {
      this.storageLimits = value == null ? StorageLimits.DEFAULT : value;
      return this;
    }

    /** {@code RELAY_PRIV_KEY}, hex. */
    public Builder privateKeyHex(final String value) {
      this.privateKeyHex = value;
      return this;
    }

    public Builder listenIpv4(final String value) {
      this.listenIpv4 = value == null ? "0.0.0.0" : value;
      return this;
    }

    public Builder listenIpv6(final String value) {
      this.listenIpv6 = value == null ? "::" : value;
      return this;
    }

    public Builder ipv6Disabled(final boolean value) {
      this.ipv6Disabled = value;
      return this;
    }

    public Builder tcpPort(final int value) {
      this.tcpPort = value;
      return this;
    }

    public Builder wsPort(final int value) {
      this.wsPort = value;
      return this;
    }

    /** {@code RELAY_QUIC_PORT}: the QUIC v1 (UDP) port; default 9094, 0 = ephemeral. */
    public Builder quicPort(final int value) {
      this.quicPort = value;
      return this;
    }

    /** {@code RELAY_DISABLE_QUIC}: no QUIC listeners. */
    public Builder quicDisabled(final boolean value) {
      this.quicDisabled = value;
      return this;
    }

    public Builder bootstrapPeers(final List<String> value) {
      this.bootstrapPeers = value == null ? List.of() : value;
      return this;
    }

    public Builder bootstrapDisabled(final boolean value) {
      this.bootstrapDisabled = value;
      return this;
    }

    public Builder announce(final List<String> value) {
      this.announce = value == null ? List.of() : value;
      return this;
    }

    /**
     * {@code RELAY_MAX_CONNECTIONS_PER_IP}, {@code RELAY_HTTP_MAX_CONNECTIONS}, the IP key's
     * prefix lengths and {@code RELAY_TRUSTED_PROXIES}; default {@link BudgetConfig#DEFAULT}.
     */
    public Builder budget(final BudgetConfig value) {
      this.budget = value == null ? BudgetConfig.DEFAULT : value;
      return this;
    }

    /** {@code RELAY_MAX_CONNECTIONS}; default 1024. */
    public Builder maxConnections(final int value) {
      this.maxConnections = value;
      return this;
    }

    /** {@code RELAY_MAX_STREAMS_PER_CONNECTION}; default 256. */
    public Builder maxStreamsPerConnection(final int value) {
      this.maxStreamsPerConnection = value;
      return this;
    }

    /** {@code RELAY_HANDSHAKE_TIMEOUT_MS}; default 10 s. */
    public Builder handshakeTimeout(final Duration value) {
      this.handshakeTimeout = value == null ? ConnectionLimits.DEFAULT.handshakeTimeout() : value;
      return this;
    }

    /** {@code RELAY_IDLE_TIMEOUT_MS}; default 5 min, zero = never. */
    public Builder idleTimeout(final Duration value) {
      this.idleTimeout = value == null ? ConnectionLimits.DEFAULT.idleTimeout() : value;
      return this;
    }

    /** {@code RELAY_MAX_PEER_INBOUND_BYTES_PER_SEC}; default 32 MiB/s, 0 = unlimited. */
    public Builder maxPeerInboundBytesPerSec(final long value) {
      this.maxPeerInboundBytesPerSec = value;
      return this;
    }

    public Builder publicIpv4(final String value) {
      this.publicIpv4 = value;
      return this;
    }

    public Builder publicIpv6(final String value) {
      this.publicIpv6 = value;
      return this;
    }

    public Builder proxyHostname(final String value) {
      this.proxyHostname = value;
      return this;
    }

    public Builder externalTcpPort(final Integer value) {
      this.externalTcpPort = value;
      return this;
    }

    public Builder externalWsPort(final Integer value) {
      this.externalWsPort = value;
      return this;
    }

    public Builder externalWebrtcPort(final Integer value) {
      this.externalWebrtcPort = value;
      return this;
    }

    public Builder externalQuicPort(final Integer value) {
      this.externalQuicPort = value;
      return this;
    }

    public Builder externalMetricsPort(final Integer value) {
      this.externalMetricsPort = value;
      return this;
    }

    public Builder externalMetricsHttpsPort(final Integer value) {
      this.externalMetricsHttpsPort = value;
      return this;
    }

    public Builder metricsHost(final String value) {
      this.metricsHost = value == null ? "0.0.0.0" : value;
      return this;
    }

    /** {@code METRICS_PORT}; 0 = ephemeral. */
    public Builder metricsPort(final int value) {
      this.metricsPort = value;
      return this;
    }

    public Builder metricsDisabled(final boolean value) {
      this.metricsDisabled = value;
      return this;
    }

    /** {@code RELAY_PINNING_SERVICE_TOKENS} and the tokens of its file. */
    public Builder pinningServiceTokens(final List<String> value) {
      this.pinningServiceTokens = value == null ? List.of() : List.copyOf(value);
      return this;
    }

    /** {@code RELAY_API_TOKEN}. */
    public Builder apiToken(final String value) {
      this.apiToken = value;
      return this;
    }

    /** Not an environment variable; tests shorten it. Default 60 s. */
    public Builder httpIdleTimeout(final Duration value) {
      this.httpIdleTimeout = value == null ? HttpConfig.DEFAULT_IDLE_TIMEOUT : value;
      return this;
    }

    /** Not an environment variable. Default 8 KiB. */
    public Builder httpMaxInitialLineLength(final int value) {
      this.httpMaxInitialLineLength = value;
      return this;
    }

    /** Not an environment variable. Default 16 KiB. */
    public Builder httpMaxHeaderSize(final int value) {
      this.httpMaxHeaderSize = value;
      return this;
    }

    /** Not an environment variable. Default 64 KiB. */
    public Builder httpMaxBodySize(final int value) {
      this.httpMaxBodySize = value;
      return this;
    }

    public Builder metricsHttpsEnabled(final boolean value) {
      this.metricsHttpsEnabled = value;
      return this;
    }

    public Builder metricsHttpsPort(final int value) {
      this.metricsHttpsPort = value;
      return this;
    }

    public Builder metricsHttpsPublicHost(final String value) {
      this.metricsHttpsPublicHost = value;
      return this;
    }

    /** {@code METRICS_CORS_ORIGIN}: {@code ["*"]} or exact origins. */
    public Builder corsOrigins(final List<String> value) {
      this.corsOrigins = value == null ? List.of(CorsConfig.ANY_ORIGIN) : value;
      return this;
    }

    public Builder corsAllowHeaders(final List<String> value) {
      this.corsAllowHeaders = value == null ? CorsConfig.DEFAULT_ALLOW_HEADERS : value;
      return this;
    }

    public Builder corsMaxAgeSeconds(final long value) {
      this.corsMaxAgeSeconds = value;
      return this;
    }

    /** {@code RELAY_TLS_CERT_DIR}; {@code null} = {@code <data dir>/tls}. */
    public Builder tlsCertDir(final Path value) {
      this.tlsCertDir = value;
      return this;
    }

    public Builder autoTlsDomain(final String value) {
      this.autoTlsDomain = value == null ? TlsConfig.DEFAULT_AUTOTLS_DOMAIN : value;
      return this;
    }

    public Builder autoTlsDisabled(final boolean value) {
      this.autoTlsDisabled = value;
      return this;
    }

    /** {@code STAGING}: Let's Encrypt staging unless an ACME directory is set. */
    public Builder autoTlsStaging(final boolean value) {
      this.autoTlsStaging = value;
      return this;
    }

    /** {@code RELAY_AUTOTLS_ACME_DIRECTORY}; null: Let's Encrypt. */
    public Builder autoTlsAcmeDirectory(final java.net.URI value) {
      this.autoTlsAcmeDirectory = value;
      return this;
    }

    /** {@code RELAY_AUTOTLS_BROKER_URL}; null: the libp2p.direct broker. */
    public Builder autoTlsBrokerUrl(final java.net.URI value) {
      this.autoTlsBrokerUrl = value == null ? TlsConfig.DEFAULT_BROKER_URL : value;
      return this;
    }

    /** {@code RELAY_AUTOTLS_FORCE}: AutoTLS also outside deployed mode. */
    public Builder autoTlsForced(final boolean value) {
      this.autoTlsForced = value;
      return this;
    }

    public Builder pinningSyncTimeout(final Duration value) {
      this.pinningSyncTimeout = value == null ? Duration.ofMillis(30_000) : value;
      return this;
    }

    public Builder syncCooldown(final Duration value) {
      this.syncCooldown = value == null ? Duration.ofMillis(60_000) : value;
      return this;
    }

    public Builder syncSlots(final int value) {
      this.syncSlots = value;
      return this;
    }

    /** {@code RELAY_IMPORT_TIMEOUT_MS}: the whole import upload's deadline; default 10 min. */
    public Builder importTimeout(final Duration value) {
      this.importTimeout = value == null ? ImportConfig.DEFAULT_TIMEOUT : value;
      return this;
    }

    /** {@code RELAY_IMPORT_SLOTS}: imports at once (one per client address); default 2. */
    public Builder importSlots(final int value) {
      this.importSlots = value;
      return this;
    }

    /**
     * {@code RELAY_IMPORT_STAGING_MAX_BYTES}: bytes all imports together may stage on disk;
     * default 0, {@code RELAY_IMPORT_SLOTS} x 128 MiB.
     */
    public Builder importStagingMaxBytes(final long value) {
      this.importStagingMaxBytes = value;
      return this;
    }

    /**
     * {@code RELAY_MEDIA_CID_FIELDS}: replaces the built-in list; the item {@code default} stands
     * for the built-in list, so {@code default,coverCid} adds one field.
     */
    /** {@code RELAY_ORBITDB_ALLOW}: the only databases followed (addresses or manifest CIDs). */
    public Builder orbitDbAllow(final List<String> value) {
      this.orbitDbAllow = value == null ? List.of() : List.copyOf(value);
      return this;
    }

    /** {@code RELAY_ORBITDB_DENY}: databases never followed (addresses or manifest CIDs). */
    public Builder orbitDbDeny(final List<String> value) {
      this.orbitDbDeny = value == null ? List.of() : List.copyOf(value);
      return this;
    }

    public Builder mediaCidFields(final List<String> value) {
      this.mediaCidFields = value == null ? SyncConfig.DEFAULT_MEDIA_CID_FIELDS : value;
      return this;
    }

    public Builder gatewayMode(final GatewayMode value) {
      this.gatewayMode = value == null ? GatewayMode.PINNED_FIRST : value;
      return this;
    }

    public Builder ipfsFallbackTimeout(final Duration value) {
      this.ipfsFallbackTimeout = value == null ? Duration.ofMillis(60_000) : value;
      return this;
    }

    public Builder logLevel(final LogLevel value) {
      this.logLevel = value == null ? LogLevel.INFO : value;
      return this;
    }

    /**
     * The level of one logger category over {@code LOG_LEVEL} (orbitdb-relay's logging switches);
     * null removes it.
     */
    public Builder loggerLevel(final String logger, final LogLevel value) {
      if (value == null) {
        loggerLevels.remove(logger);
      } else {
        loggerLevels.put(Objects.requireNonNull(logger, "logger"), value);
      }
      return this;
    }

    /** The sync timeout set so far ({@link JsRelayEnvironment} compares with it). */
    Duration pinningSyncTimeout() {
      return pinningSyncTimeout;
    }

    /** {@code RELAY_DISABLE_AUTONAT}: no AutoNAT v1 server. */
    /** {@code RELAY_DHT_MODE}; {@code null} = the default ({@link DhtMode#CLIENT}). */
    public Builder dhtMode(final DhtMode value) {
      this.dhtMode = value == null ? NetworkConfig.DEFAULT_DHT_MODE : value;
      return this;
    }

    public DhtMode dhtMode() {
      return dhtMode;
    }

    public Builder autoNatDisabled(final boolean value) {
      this.autoNatDisabled = value;
      return this;
    }

    public Builder logFormat(final LogFormat value) {
      this.logFormat = value == null ? LogFormat.TEXT : value;
      return this;
    }

    /** {@code RELAY_CIRCUIT_HOP_TIMEOUT_MS}; default 300 s. */
    public Builder circuitHopTimeout(final Duration value) {
      circuitRelay.hopTimeout(value == null ? CircuitRelayConfig.DEFAULT_HOP_TIMEOUT : value);
      return this;
    }

    /** {@code RELAY_CIRCUIT_MAX_RESERVATIONS}; default 10,000, 0 = unlimited. */
    public Builder circuitMaxReservations(final int value) {
      circuitRelay.maxReservations(value);
      return this;
    }

    /**
     * {@code RELAY_MAX_CIRCUITS_PER_IP}: circuits open at once whose source connection or
     * destination reservation comes from one IP key (the node budget's {@code circuit_ip}
     * scopes); default 32.
     */
    public Builder circuitMaxCircuitsPerIp(final int value) {
      circuitRelay.maxCircuitsPerIp(value);
      return this;
    }

    /** {@code RELAY_CIRCUIT_RESERVATION_TTL_MS}; default 20 h, 0 = while connected. */
    public Builder circuitReservationTtl(final Duration value) {
      circuitRelay.reservationTtl(value == null ? CircuitRelayConfig.DEFAULT_RESERVATION_TTL
          : value);
      return this;
    }

    /** {@code RELAY_CIRCUIT_DEFAULT_DATA_LIMIT_BYTES}; default 10 GiB, 0 = unlimited. */
    public Builder circuitDataLimit(final long value) {
      circuitRelay.defaultDataLimit(value);
      return this;
    }

    /** {@code RELAY_CIRCUIT_DEFAULT_DURATION_LIMIT_MS}; default 20 min, 0 = unlimited. */
    public Builder circuitDurationLimit(final Duration value) {
      circuitRelay.defaultDurationLimit(value == null ? CircuitRelayConfig.DEFAULT_DURATION_LIMIT
          : value);
      return this;
    }

    /** Not an environment variable: the caps per IP, on circuits, and the message size. */
    public Builder circuitRelay(final CircuitRelayConfig value) {
      circuitRelay = (value == null ? CircuitRelayConfig.DEFAULT : value).toBuilder();
      return this;
    }

    /** {@code PUBSUB_TOPICS} (alias {@code VITE_PUBSUB_TOPICS}); empty = no discovery. */
    public Builder discoveryTopics(final List<String> value) {
      this.discoveryTopics = value == null ? List.of(CircuitConfig.DEFAULT_DISCOVERY_TOPIC)
          : value;
      return this;
    }

    /** Not an environment variable; default 5 s as the JavaScript relay. */
    public Builder discoveryInterval(final Duration value) {
      this.discoveryInterval = value == null ? CircuitConfig.DEFAULT_DISCOVERY_INTERVAL : value;
      return this;
    }

    /**
     * Validates and builds.
     *
     * @throws InvalidConfigException naming the first bad setting's environment variable
     */
    public RelayConfig build() {
      return new RelayConfig(
          new StorageConfig(dataDir, Optional.ofNullable(s3), Optional.ofNullable(postgres),
              storageLimits),
          new IdentityConfig(Optional.ofNullable(privateKeyHex)),
          new NetworkConfig(listenIpv4, listenIpv6, ipv6Disabled, tcpPort, wsPort, quicPort,
              quicDisabled,
              bootstrapPeers, bootstrapDisabled, announce, maxConnections,
              maxStreamsPerConnection, handshakeTimeout, idleTimeout, maxPeerInboundBytesPerSec,
              autoNatDisabled, dhtMode),
          new DeploymentConfig(Optional.ofNullable(publicIpv4), Optional.ofNullable(publicIpv6),
              Optional.ofNullable(proxyHostname), optional(externalTcpPort),
              optional(externalWsPort), optional(externalWebrtcPort), optional(externalQuicPort),
              optional(externalMetricsPort), optional(externalMetricsHttpsPort)),
          new HttpConfig(metricsHost, metricsPort, metricsDisabled, Optional.ofNullable(apiToken),
              httpIdleTimeout, httpMaxInitialLineLength, httpMaxHeaderSize, httpMaxBodySize),
          new HttpsConfig(metricsHttpsEnabled, metricsHttpsPort,
              Optional.ofNullable(metricsHttpsPublicHost)),
          new CorsConfig(corsOrigins, corsAllowHeaders, corsMaxAgeSeconds),
          new TlsConfig(tlsCertDir != null ? tlsCertDir : dataDir.resolve("tls"), autoTlsDomain,
              autoTlsDisabled, autoTlsStaging, Optional.ofNullable(autoTlsAcmeDirectory),
              autoTlsBrokerUrl, autoTlsForced),
          new SyncConfig(pinningSyncTimeout, syncCooldown, syncSlots,
              expandMediaFields(mediaCidFields), topicPolicy()),
          new GatewayConfig(gatewayMode, ipfsFallbackTimeout),
          new LoggingConfig(logLevel, logFormat, loggerLevels),
          new CircuitConfig(buildCircuitRelay(), discoveryTopics, discoveryInterval),
          new PasskeyConfig(webauthnOrigins, webauthnRpIds, webauthnRequireLowS),
          new PinningServiceConfig(pinningServiceTokens),
          budget,
          new ImportConfig(importTimeout, importSlots, importStagingMaxBytes));
    }

    private CircuitRelayConfig buildCircuitRelay() {
      try {
        return circuitRelay.build();
      } catch (final IllegalArgumentException e) {
        throw new InvalidConfigException("RELAY_CIRCUIT_*", e.getMessage());
      }
    }

    private TopicPolicy topicPolicy() {
      final List<String> allow;
      try {
        allow = List.copyOf(TopicPolicy.of(orbitDbAllow, List.of()).allow());
      } catch (final IllegalArgumentException e) {
        throw InvalidConfigException.badValue("RELAY_ORBITDB_ALLOW", String.join(",",
            orbitDbAllow), "OrbitDB addresses /orbitdb/<CID> or manifest CIDs, comma-separated");
      }
      try {
        return TopicPolicy.of(allow, orbitDbDeny);
      } catch (final IllegalArgumentException e) {
        throw InvalidConfigException.badValue("RELAY_ORBITDB_DENY", String.join(",",
            orbitDbDeny), "OrbitDB addresses /orbitdb/<CID> or manifest CIDs, comma-separated");
      }
    }

    private static OptionalInt optional(final Integer value) {
      return value == null ? OptionalInt.empty() : OptionalInt.of(value);
    }

    private static List<String> expandMediaFields(final List<String> fields) {
      final List<String> out = new ArrayList<>();
      for (final String field : fields) {
        if (field.equals(SyncConfig.DEFAULT_FIELDS_TOKEN)) {
          SyncConfig.DEFAULT_MEDIA_CID_FIELDS.stream().filter(f -> !out.contains(f))
              .forEach(out::add);
        } else if (!out.contains(field)) {
          out.add(field);
        }
      }
      return out;
    }
  }
}
