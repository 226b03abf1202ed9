package io.relaypinner.relay.node;

import static io.relaypinner.common.Failures.rootMessage;

import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.relaypinner.common.budget.IpRange;
import io.relaypinner.libp2p.host.ConnectionBudget;
import io.relaypinner.libp2p.host.Host;
import io.relaypinner.libp2p.host.HostConfig;
import io.relaypinner.libp2p.netty.EventLoops;
import io.relaypinner.libp2p.protocol.autonat.AutoNat;
import io.relaypinner.libp2p.protocol.kad.KadConfig;
import io.relaypinner.libp2p.protocol.kad.KadDht;
import io.relaypinner.libp2p.protocol.relay.CircuitRelay;
import io.relaypinner.libp2p.protocol.relay.CircuitRelayConfig;
import io.relaypinner.libp2p.pubsub.PubSub;
import io.relaypinner.libp2p.pubsub.discovery.PubsubPeerDiscovery;
import io.relaypinner.libp2p.transport.quic.QuicTransport;
import io.relaypinner.libp2p.transport.ws.ServerTlsSource;
import io.relaypinner.multiformats.Multiaddr;
import io.relaypinner.multiformats.PeerId;
import io.relaypinner.relay.RelayVersion;
import io.relaypinner.relay.api.AdvertisedAddresses;
import io.relaypinner.relay.config.DhtMode;
import io.relaypinner.relay.config.NetworkConfig;
import io.relaypinner.relay.config.RelayConfig;
import io.relaypinner.relay.identity.NodeIdentity;
import io.relaypinner.relay.network.CircuitRelayMetrics;
import io.relaypinner.relay.network.DhtMetrics;
import io.relaypinner.relay.network.DnsAddrResolver;
import io.relaypinner.relay.network.Libp2pMetrics;
import io.relaypinner.relay.network.NodeAddresses;
import io.relaypinner.relay.tls.CertificateStore;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.security.SecureRandom;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The node's libp2p side: the host and its listeners, circuit relay v2, the AutoNAT v1 server,
 * gossipsub, pubsub peer discovery, the Kad-DHT ({@code RELAY_DHT_MODE}), the bootstrap peers,
 * and what the relay advertises ({@link NodeAddresses}). It owns no executor: everything runs on
 * the event loops it is given (but for one short-lived thread resolving {@code /dnsaddr}
 * bootstrap addresses, DNS being blocking).
 */
public final class NetworkSubsystem extends Subsystem {
  private static final Logger LOG = LoggerFactory.getLogger(NetworkSubsystem.class);

  private final Host host;
  private final NodeAddresses addresses;
  private final List<Multiaddr> bootstrapPeers;
  private final CircuitRelay circuitRelay;
  private final Predicate<Multiaddr> dialable;
  private final AutoNat autoNat;
  private final PubSub pubsub;
  private final PubsubPeerDiscovery discovery;
  private final KadDht dht;
  private final DnsAddrResolver dnsAddr;

  /**
   * Starts libp2p: the IPv4 listeners (TCP, WebSocket, QUIC unless {@code RELAY_DISABLE_QUIC})
   * must bind (a taken port stops the node: {@link UncheckedIOException}, with what started
   * closed again); the IPv6 ones are best effort, since some hosts have no IPv6.
   *
   * @param advertiser the deployment's address rules ({@code RELAY_ANNOUNCE} already checked)
   * @param bootstrapPeers dialled by {@link #dialBootstrapPeers()}
   * @param webSocketTls the WebSocket port's certificate, asked per accepted connection
   * @param certificates the certificate store: the {@code /tls/sni} forms need its certificate,
   *     and a new one is pushed to connected peers (identify push)
   */
  public NetworkSubsystem(final RelayConfig config, final NodeIdentity identity,
      final AdvertisedAddresses advertiser, final List<Multiaddr> bootstrapPeers,
      final ServerTlsSource webSocketTls, final CertificateStore certificates,
      final EventLoops loops, final PrometheusRegistry registry, final Clock clock,
      final NodeTuning tuning) {
    this(config, identity, advertiser, bootstrapPeers, webSocketTls, certificates, loops,
        registry, clock, tuning, NodeBudget.ofThisJvm(config));
  }

  /**
   * As above, admitting libp2p connections from {@code budget}: its libp2p scope in all
   * ({@code RELAY_MAX_CONNECTIONS}) and its per-IP scopes ({@code RELAY_MAX_CONNECTIONS_PER_IP},
   * half-open connections included; {@code RELAY_TRUSTED_PROXIES} capped only in total); the
   * circuit relay's per-IP caps key addresses as the budget does.
   */
  public NetworkSubsystem(final RelayConfig config, final NodeIdentity identity,
      final AdvertisedAddresses advertiser, final List<Multiaddr> bootstrapPeers,
      final ServerTlsSource webSocketTls, final CertificateStore certificates,
      final EventLoops loops, final PrometheusRegistry registry, final Clock clock,
      final NodeTuning tuning, final NodeBudget budget) {
    this(config, identity, advertiser, bootstrapPeers, webSocketTls, certificates, loops,
        registry, clock, tuning, budget, DnsAddrResolver.system());
  }

  /**
   * As above, resolving {@code /dnsaddr} bootstrap addresses with {@code dnsAddr} (tests give a
   * resolver of their own).
   */
  public NetworkSubsystem(final RelayConfig config, final NodeIdentity identity,
      final AdvertisedAddresses advertiser, final List<Multiaddr> bootstrapPeers,
      final ServerTlsSource webSocketTls, final CertificateStore certificates,
      final EventLoops loops, final PrometheusRegistry registry, final Clock clock,
      final NodeTuning tuning, final NodeBudget budget, final DnsAddrResolver dnsAddr) {
    Objects.requireNonNull(config, "config");
    Objects.requireNonNull(identity, "identity");
    Objects.requireNonNull(webSocketTls, "webSocketTls");
    Objects.requireNonNull(budget, "budget");
    this.dnsAddr = Objects.requireNonNull(dnsAddr, "dnsAddr");
    this.bootstrapPeers = List.copyOf(bootstrapPeers);
    final Predicate<InetAddress> trustedProxy = trustedProxy(config);
    if (config.deployment().proxyHostname().isPresent()
        && config.budget().trustedProxies().isEmpty()) {
      LOG.warn("PROXY_HOSTNAME is set but RELAY_TRUSTED_PROXIES is not: connections through the "
          + "proxy all come from its address and share RELAY_MAX_CONNECTIONS_PER_IP ({}); set "
          + "RELAY_TRUSTED_PROXIES to the proxy's address", config.budget().maxConnectionsPerIp());
    }
    host = new Host(identity.privateKey(), HostConfig.builder()
        .agentVersion("relay-pinner/" + RelayVersion.VERSION)
        .limits(config.network().connectionLimits())
        .connectionBudget(new ConnectionBudget(budget.libp2p(), budget.libp2pIps(),
            budget::ipKey, trustedProxy))
        .inboundMemory(budget.memory(NodeBudget.Surface.LIBP2P))
        .webSocketTls(webSocketTls).build(), loops, clock);
    dialable = config.deployment().deployedMode() ? AdvertisedAddresses::isPublic
        : address -> true;
    addresses = new NodeAddresses(advertiser, host::listenAddresses, webSocketTls,
        certificates::certificate, identity.autoTlsServingZone(), config.deployedMode());
    // A certificate adds /tls/ws addresses: connected peers learn them by identify push.
    certificates.onChange(certificate -> host.addressesChanged());
    CircuitRelay relay = null;
    AutoNat nat = null;
    PubSub gossip = null;
    KadDht kad = null;
    try {
      Libp2pMetrics.register(registry, host);
      final NetworkConfig network = config.network();
      bind(address(false, network.listenIpv4(), network.tcpPort(), ""), true, tuning);
      bind(address(false, network.listenIpv4(), network.wsPort(), "/ws"), true, tuning);
      final boolean quic = quicListeners(network);
      if (quic) {
        bind(quicAddress(false, network.listenIpv4(), network.quicPort()), true, tuning);
      }
      if (!network.ipv6Disabled()) {
        bind(address(true, network.listenIpv6(), network.tcpPort(), ""), false, tuning);
        bind(address(true, network.listenIpv6(), network.wsPort(), "/ws"), false, tuning);
        if (quic) {
          bind(quicAddress(true, network.listenIpv6(), network.quicPort()), false, tuning);
        }
      }
      // Circuit relay v2 (hop and stop) with the RELAY_CIRCUIT_* limits; reservations carry the
      // advertised addresses, which identify (and its pushes) now advertise too.
      host.advertise(addresses::advertised);
      CircuitRelayConfig limits = config.circuit().relay();
      if (config.deployment().proxyHostname().isPresent()
          && config.budget().trustedProxies().isEmpty()) {
        // Behind a TLS proxy not named in RELAY_TRUSTED_PROXIES every browser arrives from the
        // proxy's address: a share per IP would cap all of them together.
        limits = limits.toBuilder().maxReservationsPerIp(CircuitRelayConfig.MAX_RESERVATIONS)
            .maxCircuitsPerIp(CircuitRelayConfig.MAX_CIRCUITS).build();
      }
      relay = CircuitRelay.start(host, limits, clock, addresses::advertised,
          CircuitRelay.ipKeys(budget::ipKey, trustedProxy), budget.circuitIps(limits));
      CircuitRelayMetrics.register(registry, relay);
      // AutoNAT v1 server: in deployed mode it never dials private addresses.
      if (config.network().autoNatDisabled()) {
        LOG.info("AutoNAT server off (RELAY_DISABLE_AUTONAT)");
      } else {
        nat = AutoNat.start(host, tuning.autoNat(), clock, dialable);
        CircuitRelayMetrics.register(registry, nat);
      }
      gossip = PubSub.start(host, tuning.gossipsub(), clock, new SecureRandom(),
          budget.gossipsubTopics(tuning.gossipsub().maxSharedTopics()));
      // Pubsub peer discovery on PUBSUB_TOPICS: the relay joins the topics (so it routes
      // browsers' announcements to each other) and announces its advertised addresses.
      if (config.circuit().discoveryTopics().isEmpty()) {
        discovery = null;
      } else {
        discovery = PubsubPeerDiscovery.start(gossip, config.circuit().discoveryTopics(),
            identity.privateKey().publicKey(), addresses::advertised, loops.group(),
            config.circuit().discoveryInterval());
        CircuitRelayMetrics.register(registry, discovery);
      }
      kad = startDht(config, budget, registry);
    } catch (final RuntimeException e) {
      if (kad != null) {
        kad.close();
      }
      if (gossip != null) {
        gossip.close();
      }
      if (nat != null) {
        nat.close();
      }
      if (relay != null) {
        relay.close();
      }
      host.close();
      throw e;
    }
    this.circuitRelay = relay;
    this.autoNat = nat;
    this.pubsub = gossip;
    this.dht = kad;
  }

  /**
   * Starts the Kad-DHT in the mode {@code RELAY_DHT_MODE} asks for ({@code auto}: server when
   * {@link #publiclyReachable}), its provider records in the budget's {@code kad_providers}
   * scope; null when the mode is {@code off}.
   */
  private KadDht startDht(final RelayConfig config, final NodeBudget budget,
      final PrometheusRegistry registry) {
    final DhtMode wanted = config.network().dhtMode();
    if (wanted == DhtMode.OFF) {
      LOG.info("Kad-DHT off (RELAY_DHT_MODE=off)");
      return null;
    }
    final KadDht.Mode mode;
    if (wanted == DhtMode.AUTO) {
      final boolean reachable = publiclyReachable(config, addresses.advertised());
      mode = reachable ? KadDht.Mode.SERVER : KadDht.Mode.CLIENT;
      LOG.info("RELAY_DHT_MODE=auto: {} mode ({})", reachable ? "server" : "client",
          reachable ? "deployed with a public advertised address"
              : "not deployed with a public advertised address");
    } else {
      mode = wanted == DhtMode.SERVER ? KadDht.Mode.SERVER : KadDht.Mode.CLIENT;
    }
    final KadDht kad = KadDht.start(host, KadConfig.DEFAULT, mode, budget.kadProviders(),
        addresses::advertised);
    DhtMetrics.register(registry, kad);
    if (bootstrapPeers.isEmpty()) {
      LOG.info("Kad-DHT has no bootstrap peers (RELAY_BOOTSTRAP_PEERS is empty or "
          + "RELAY_DISABLE_BOOTSTRAP is set): it only learns the peers that connect to the relay");
    }
    return kad;
  }

  /**
   * Whether {@code RELAY_DHT_MODE=auto} makes the relay a DHT server: it is deployed
   * ({@code PUBLIC_IPV4}, {@code PROXY_HOSTNAME} or an external port) and advertises at least one
   * public address. Decided once at start, from what the operator declared (the AutoNAT here is
   * a server only: the relay does not test its own reachability).
   */
  static boolean publiclyReachable(final RelayConfig config, final List<Multiaddr> advertised) {
    return config.deployedMode() && advertised.stream().anyMatch(AdvertisedAddresses::isPublic);
  }

  /**
   * Binds one listener. IPv4 listeners must bind (a taken port stops the node); IPv6 is best
   * effort, since some hosts have no IPv6.
   */
  private void bind(final Multiaddr address, final boolean required, final NodeTuning tuning) {
    try {
      host.listen(address).get(tuning.bindTimeout().toMillis(), TimeUnit.MILLISECONDS);
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

  /** Whether {@code address} is one of {@code RELAY_TRUSTED_PROXIES}. */
  static Predicate<InetAddress> trustedProxy(final RelayConfig config) {
    final List<IpRange> proxies = config.budget().trustedProxies();
    return address -> {
      for (final IpRange range : proxies) {
        if (range.contains(address)) {
          return true;
        }
      }
      return false;
    };
  }

  private static Multiaddr address(final boolean ipv6, final String host, final int port,
      final String suffix) {
    return Multiaddr.parse((ipv6 ? "/ip6/" : "/ip4/") + host + "/tcp/" + port + suffix);
  }

  private static Multiaddr quicAddress(final boolean ipv6, final String host, final int port) {
    return Multiaddr.parse((ipv6 ? "/ip6/" : "/ip4/") + host + "/udp/" + port + "/quic-v1");
  }

  /**
   * Whether the relay listens on QUIC: unless {@code RELAY_DISABLE_QUIC}, and only where its
   * native library loads (elsewhere the node runs on without QUIC, with one warning, rather than
   * refusing to start on a platform it otherwise serves).
   */
  private static boolean quicListeners(final NetworkConfig network) {
    if (network.quicDisabled()) {
      LOG.info("QUIC off (RELAY_DISABLE_QUIC)");
      return false;
    }
    if (!QuicTransport.isAvailable()) {
      LOG.warn("QUIC off: its native library did not load ({}); set RELAY_DISABLE_QUIC=true to "
          + "silence this", QuicTransport.unavailabilityCause().map(Throwable::toString)
          .orElse("?"));
      return false;
    }
    return true;
  }

  /**
   * Dials the bootstrap peers once, without waiting; failures are logged, not fatal.
   * {@code /dnsaddr} addresses are resolved first, on a short-lived thread (DNS blocks). With the
   * DHT on, once every dial has ended (and identify has told which peers speak the DHT) the routing
   * table is refreshed, so the relay knows its part of the DHT at once rather than at the first
   * periodic refresh.
   */
  public void dialBootstrapPeers() {
    if (bootstrapPeers.stream().noneMatch(DnsAddrResolver::isDnsAddr)) {
      dial(bootstrapPeers);
      return;
    }
    final Thread resolver = new Thread(() -> dial(dnsAddr.resolve(bootstrapPeers)),
        "relay-dnsaddr");
    resolver.setDaemon(true);
    resolver.start();
  }

  private void dial(final List<Multiaddr> peers) {
    final List<CompletableFuture<?>> dials = new ArrayList<>();
    for (final Multiaddr address : peers) {
      dials.add(host.dial(address).whenComplete((connection, error) -> {
        if (error == null) {
          LOG.info("connected to bootstrap peer {}", address);
        } else {
          LOG.warn("cannot reach bootstrap peer {}: {}", address, rootMessage(error));
        }
      }).thenCompose(host::identify).handle((ok, error) -> null));
    }
    if (dht != null && !peers.isEmpty()) {
      CompletableFuture.allOf(dials.toArray(CompletableFuture[]::new))
          .whenComplete((ok, error) -> dht.refresh());
    }
  }

  /** What the relay advertises now (spec 2.3): listen addresses and announced ones. */
  public List<Multiaddr> advertisedAddresses() {
    return addresses.advertised();
  }

  /** The advertising policy: the advertised list and the AutoTLS dial-back addresses. */
  public NodeAddresses addresses() {
    return addresses;
  }

  /** A connected peer's addresses (identify's, else the connection's), for routing v1. */
  public Optional<List<Multiaddr>> connectedPeer(final PeerId peer) {
    return host.connection(peer).map(connection -> {
      final List<Multiaddr> known = host.peerStore().get(peer)
          .map(info -> info.addresses()).orElse(List.of());
      return known.isEmpty() ? relayedAddresses(peer) : known;
    });
  }

  /**
   * Where a peer that announced no listen address (a browser) can be reached: through this
   * relay's circuit while it holds a reservation here, else nowhere. Never the connection's
   * remote address: that is a browser's own IP and port, which the answer (cached for five
   * minutes) would hand to anybody who asks.
   */
  private List<Multiaddr> relayedAddresses(final PeerId peer) {
    if (circuitRelay == null || circuitRelay.engine().reservation(peer).isEmpty()) {
      return List.of();
    }
    final List<Multiaddr> out = new ArrayList<>();
    for (final Multiaddr address : addresses.advertised()) {
      out.add(Multiaddr.parse(address.withPeerId(host.peerId()) + "/p2p-circuit/p2p/"
          + peer.toBase58()));
    }
    return out;
  }

  /**
   * Which addresses a peer may make this relay dial (AutoNAT dial-backs, pin origins): in
   * deployed mode public ones only, so nobody can point the relay at its own private network.
   */
  public Predicate<Multiaddr> dialable() {
    return dialable;
  }

  /** The libp2p host. */
  public Host host() {
    return host;
  }

  /** Gossipsub. */
  public PubSub pubsub() {
    return pubsub;
  }

  /** The circuit relay. */
  public CircuitRelay circuitRelay() {
    return circuitRelay;
  }

  /** The AutoNAT v1 server; empty with {@code RELAY_DISABLE_AUTONAT}. */
  public Optional<AutoNat> autoNat() {
    return Optional.ofNullable(autoNat);
  }

  /** Pubsub peer discovery; empty when {@code PUBSUB_TOPICS} is empty. */
  public Optional<PubsubPeerDiscovery> discovery() {
    return Optional.ofNullable(discovery);
  }

  /** The Kad-DHT; empty with {@code RELAY_DHT_MODE=off}. */
  public Optional<KadDht> dht() {
    return Optional.ofNullable(dht);
  }

  /**
   * Closes the DHT (its timers), discovery, the relay, AutoNAT, gossipsub, then the host (its
   * connections).
   */
  @Override
  protected void onStop() {
    if (dht != null) {
      dht.close();
    }
    if (discovery != null) {
      discovery.close();
    }
    circuitRelay.close();
    if (autoNat != null) {
      autoNat.close();
    }
    pubsub.close();
    host.close();
  }
}
