package io.relaypinner.relay.node;

import io.relaypinner.common.budget.IpPrefix;
import io.relaypinner.common.budget.KeyedScopes;
import io.relaypinner.common.budget.LimitListener;
import io.relaypinner.common.budget.Limits;
import io.relaypinner.common.budget.Resource;
import io.relaypinner.common.budget.Scope;
import io.relaypinner.libp2p.protocol.relay.CircuitRelayConfig;
import io.relaypinner.libp2p.protocol.relay.CircuitRelayEngine;
import io.relaypinner.relay.config.ImportConfig;
import io.relaypinner.relay.config.RelayConfig;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * The node's one resource budget (docs/hardening.md "The budget"): a tree of {@link Scope}s
 * every surface takes what it holds from, sized from the heap the JVM really has
 * ({@link Runtime#maxMemory()}), so the launcher's {@code -Xmx160m} and an operator's larger
 * heap both stay safe.
 *
 * <pre>
 * system                          memory: SYSTEM_MEMORY_SHARE of the heap
 * ├── libp2p                      connections: RELAY_MAX_CONNECTIONS (half-open included)
 * │   └── ip (keyed)              connections: RELAY_MAX_CONNECTIONS_PER_IP (IPv4 /32, IPv6 /64)
 * ├── http                        connections: RELAY_HTTP_MAX_CONNECTIONS
 * │   └── ip (keyed)              connections: RELAY_MAX_CONNECTIONS_PER_IP
 * ├── one scope per {@link Surface}: memory, its share of the heap
 * ├── import (the IMPORT surface)  work: RELAY_IMPORT_SLOTS; disk: RELAY_IMPORT_STAGING_MAX_BYTES
 * │   └── import_ip (keyed)       work: 1 (an import per client IP key)
 * └── circuit_relay
 *     ├── circuit_ip (keyed)      streams: RELAY_MAX_CIRCUITS_PER_IP (circuits)
 *     └── reservation_ip (keyed)  work: 64 (reservations)
 * </pre>
 *
 * <p>Every refused reservation is counted by scope kind and resource
 * ({@code relay_resource_limit_hits_total{scope,resource}}); {@link #hits()} is what the metric
 * reads.
 */
public final class NodeBudget {
  /** Of the heap, what everything peers and clients size may hold together. */
  public static final double SYSTEM_MEMORY_SHARE = 0.5;
  /** Distinct IP keys held at once per transport (each is held by an open connection). */
  public static final int MAX_IP_KEYS = 65_536;
  /** Imports one client IP key may run at once. */
  public static final int IMPORTS_PER_CLIENT = 1;

  /** The memory surfaces and their share of the heap (they overlap: the system caps the sum). */
  public enum Surface {
    /** CAR plans and the network fallback's blocks in flight. */
    GATEWAY(0.20),
    /** Import parsing (the body itself is staged on disk). */
    IMPORT(0.05),
    /** HTTP request bodies aggregated before their route runs. */
    HTTP(0.10),
    /** libp2p inbound queues, pubsub and bitswap messages. */
    LIBP2P(0.25),
    /**
     * Replication: each followed database's replica and session, the identity cache, fetched
     * entries and heads in flight.
     */
    REPLICATION(0.30);

    private final double share;

    Surface(final double share) {
      this.share = share;
    }

    public double share() {
      return share;
    }

    public String label() {
      return name().toLowerCase(Locale.ROOT);
    }
  }

  /**
   * @param maxConnections libp2p connections in all ({@code RELAY_MAX_CONNECTIONS})
   * @param maxConnectionsPerIp libp2p, and separately HTTP, connections per IP key
   *     ({@code RELAY_MAX_CONNECTIONS_PER_IP})
   * @param httpMaxConnections HTTP connections in all ({@code RELAY_HTTP_MAX_CONNECTIONS})
   * @param prefix how an address becomes an IP key
   * @param importSlots imports at once, all clients together ({@code RELAY_IMPORT_SLOTS})
   * @param importStagingBytes bytes all imports together may stage on disk
   *     ({@code RELAY_IMPORT_STAGING_MAX_BYTES})
   */
  public record Sizes(int maxConnections, int maxConnectionsPerIp, int httpMaxConnections,
      IpPrefix prefix, int importSlots, long importStagingBytes) {
    public Sizes {
      Objects.requireNonNull(prefix, "prefix");
    }

    /** The import's sizes at their defaults ({@link ImportConfig#DEFAULT}). */
    public Sizes(final int maxConnections, final int maxConnectionsPerIp,
        final int httpMaxConnections, final IpPrefix prefix) {
      this(maxConnections, maxConnectionsPerIp, httpMaxConnections, prefix,
          ImportConfig.DEFAULT.slots(), ImportConfig.DEFAULT.stagingBytes());
    }
  }

  private final long maxHeap;
  private final Sizes sizes;
  private final Map<String, LongAdder> hits = new ConcurrentHashMap<>();
  private final Scope system;
  private final Scope libp2p;
  private final KeyedScopes libp2pIps;
  private final Scope http;
  private final KeyedScopes httpIps;
  private final Map<Surface, Scope> surfaces = new EnumMap<>(Surface.class);
  private final KeyedScopes importClients;
  private volatile Scope gatewayFallback;
  private volatile Scope circuitRelay;
  private volatile Scope gossipsubTopics;
  private volatile Scope kadProviders;
  private volatile CircuitRelayEngine.IpScopes circuitIps;
  private final LimitListener listener;

  /**
   * @param maxHeap the heap the JVM really has ({@code Runtime.getRuntime().maxMemory()})
   * @param also told of every refusal too, after it is counted (tests, logs)
   */
  public NodeBudget(final long maxHeap, final Sizes sizes, final LimitListener also) {
    this.maxHeap = maxHeap;
    this.sizes = sizes;
    final LimitListener listener = (scope, resource) -> {
      hits.computeIfAbsent(scope.kind() + '\0' + resource.label(), k -> new LongAdder())
          .increment();
      also.limitHit(scope, resource);
    };
    this.listener = listener;
    this.system = Scope.root("system", Limits.NONE.with(Resource.MEMORY,
        (long) (maxHeap * SYSTEM_MEMORY_SHARE)), listener);
    this.libp2p = system.child("libp2p", "libp2p",
        Limits.NONE.with(Resource.CONNECTIONS, sizes.maxConnections()));
    this.libp2pIps = new KeyedScopes(libp2p, "ip",
        Limits.NONE.with(Resource.CONNECTIONS, sizes.maxConnectionsPerIp()), MAX_IP_KEYS,
        listener);
    this.http = system.child("http", "http",
        Limits.NONE.with(Resource.CONNECTIONS, sizes.httpMaxConnections()));
    this.httpIps = new KeyedScopes(http, "http_ip",
        Limits.NONE.with(Resource.CONNECTIONS, sizes.maxConnectionsPerIp()), MAX_IP_KEYS,
        listener);
    for (final Surface s : Surface.values()) {
      Limits limits = Limits.NONE.with(Resource.MEMORY, (long) (maxHeap * s.share()));
      if (s == Surface.IMPORT) {
        limits = limits.with(Resource.WORK, sizes.importSlots())
            .with(Resource.DISK, sizes.importStagingBytes());
      }
      surfaces.put(s, system.child(s.label(), s.label(), limits));
    }
    this.importClients = new KeyedScopes(surfaces.get(Surface.IMPORT), "import_ip",
        Limits.NONE.with(Resource.WORK, IMPORTS_PER_CLIENT), MAX_IP_KEYS, listener);
  }

  /** Sized from this JVM's heap. */
  public static NodeBudget ofThisJvm(final Sizes sizes) {
    return new NodeBudget(Runtime.getRuntime().maxMemory(), sizes, LimitListener.NONE);
  }

  /**
   * Sized from this JVM's heap and {@code config}'s {@code RELAY_MAX_CONNECTIONS},
   * {@code RELAY_MAX_CONNECTIONS_PER_IP}, {@code RELAY_HTTP_MAX_CONNECTIONS} and prefix lengths.
   */
  public static NodeBudget ofThisJvm(final RelayConfig config) {
    return ofThisJvm(new Sizes(config.network().maxConnections(),
        config.budget().maxConnectionsPerIp(), config.budget().httpMaxConnections(),
        config.budget().prefix(), config.imports().slots(), config.imports().stagingBytes()));
  }

  public long maxHeap() {
    return maxHeap;
  }

  public Sizes sizes() {
    return sizes;
  }

  public Scope system() {
    return system;
  }

  /** libp2p connections in all; its children are the per-IP scopes. */
  public Scope libp2p() {
    return libp2p;
  }

  public KeyedScopes libp2pIps() {
    return libp2pIps;
  }

  /** HTTP connections in all; its children are the per-IP scopes. */
  public Scope http() {
    return http;
  }

  public KeyedScopes httpIps() {
    return httpIps;
  }

  /** The key of {@code address} in the per-IP scopes. */
  public String ipKey(final InetAddress address) {
    return sizes.prefix().key(address);
  }

  /** The memory scope of {@code surface}. */
  public Scope memory(final Surface surface) {
    return surfaces.get(surface);
  }

  /**
   * Imports ({@code POST /pinning/import}): the {@link Surface#IMPORT} scope, which also holds
   * the import slots ({@link Resource#WORK}, {@code RELAY_IMPORT_SLOTS}) and the staging area's
   * bytes ({@link Resource#DISK}, {@code RELAY_IMPORT_STAGING_MAX_BYTES}).
   */
  public Scope imports() {
    return surfaces.get(Surface.IMPORT);
  }

  /**
   * One scope per client IP key under {@link #imports()} ({@link #IMPORTS_PER_CLIENT} import
   * each): one client cannot hold every slot.
   */
  public KeyedScopes importClients() {
    return importClients;
  }

  /**
   * The gateway's network fallback: bytes fetched for requests and in flight, all requests
   * together ({@link Resource#DISK}, at most {@code maxBytes}, the gateway cache's budget). Made
   * on the first call; later calls return it.
   */
  public synchronized Scope gatewayFallback(final long maxBytes) {
    if (gatewayFallback == null) {
      gatewayFallback = system.child("gateway_fallback", "gateway_fallback",
          Limits.NONE.with(Resource.DISK, maxBytes));
    }
    return gatewayFallback;
  }

  /**
   * Circuit relay's per-IP caps: keyed scopes under a {@code circuit_relay} scope, circuits as
   * {@link Resource#STREAMS} of {@code circuit_ip} ({@code config.maxCircuitsPerIp()},
   * {@code RELAY_MAX_CIRCUITS_PER_IP}) and reservations as {@link Resource#WORK} of
   * {@code reservation_ip} ({@code config.maxReservationsPerIp()}). Made on the first call;
   * later calls return them.
   */
  public synchronized CircuitRelayEngine.IpScopes circuitIps(final CircuitRelayConfig config) {
    if (circuitIps == null) {
      circuitRelay = system.child("circuit_relay", "circuit_relay", Limits.NONE);
      circuitIps = CircuitRelayEngine.IpScopes.of(circuitRelay, config, listener);
    }
    return circuitIps;
  }

  /**
   * Gossipsub's shared topic pool: peers' subscriptions beyond their guaranteed ones, all peers
   * together, one {@link Resource#WORK} each (at most {@code maxSharedTopics}), under the
   * {@link Surface#LIBP2P} surface. Made on the first call; later calls return it.
   */
  public synchronized Scope gossipsubTopics(final int maxSharedTopics) {
    if (gossipsubTopics == null) {
      gossipsubTopics = surfaces.get(Surface.LIBP2P).child("gossipsub_topics",
          "gossipsub_topics", Limits.NONE.with(Resource.WORK, maxSharedTopics));
    }
    return gossipsubTopics;
  }

  /**
   * The Kad-DHT's provider records ({@link Resource#MEMORY}, their estimated bytes), under the
   * {@link Surface#LIBP2P} surface and at most {@value #KAD_PROVIDERS_SHARE_PERCENT}% of it, so
   * that records other nodes store on us cannot take the memory of connections and streams. Made
   * on the first call; later calls return it.
   */
  public synchronized Scope kadProviders() {
    if (kadProviders == null) {
      kadProviders = surfaces.get(Surface.LIBP2P).child("kad_providers", "kad_providers",
          Limits.NONE.with(Resource.MEMORY,
              (long) (maxHeap * Surface.LIBP2P.share()) * KAD_PROVIDERS_SHARE_PERCENT / 100));
    }
    return kadProviders;
  }

  /** The share of the libp2p surface's memory provider records may hold. */
  public static final int KAD_PROVIDERS_SHARE_PERCENT = 25;

  /** The scopes of fixed identity (not keyed), for metrics: read at every scrape. */
  public List<Scope> fixedScopes() {
    final List<Scope> out = new ArrayList<>(List.of(system, libp2p, http));
    for (final Surface s : Surface.values()) {
      out.add(surfaces.get(s));
    }
    if (gatewayFallback != null) {
      out.add(gatewayFallback);
    }
    if (circuitRelay != null) {
      out.add(circuitRelay);
    }
    if (gossipsubTopics != null) {
      out.add(gossipsubTopics);
    }
    if (kadProviders != null) {
      out.add(kadProviders);
    }
    return out;
  }

  /** Refusals so far by scope kind and resource, as {@code kind\0resource}. */
  public Map<String, LongAdder> hits() {
    return hits;
  }

  /** Refusals so far of {@code resource} by scopes of {@code kind}. */
  public long hits(final String kind, final Resource resource) {
    final LongAdder n = hits.get(kind + '\0' + resource.label());
    return n == null ? 0 : n.sum();
  }
}
