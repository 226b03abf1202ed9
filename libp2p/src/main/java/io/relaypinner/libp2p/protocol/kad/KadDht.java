package io.relaypinner.libp2p.protocol.kad;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.ScheduledFuture;
import io.relaypinner.common.budget.Scope;
import io.relaypinner.libp2p.core.ProtocolViolationException;
import io.relaypinner.libp2p.host.Connection;
import io.relaypinner.libp2p.host.Host;
import io.relaypinner.libp2p.host.HostListener;
import io.relaypinner.libp2p.host.PeerStore;
import io.relaypinner.libp2p.netty.ActivatedHandler;
import io.relaypinner.libp2p.netty.SingleMessageReader;
import io.relaypinner.libp2p.netty.UvarintFrameDecoder;
import io.relaypinner.libp2p.protocol.identify.IdentifyResult;
import io.relaypinner.multiformats.Multiaddr;
import io.relaypinner.multiformats.MultiaddrProtocol;
import io.relaypinner.multiformats.PeerId;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Kademlia DHT {@value KadConfig#PROTOCOL_ID} (libp2p/specs kad-dht/README.md) on a
 * {@link Host}: the engines ({@link RoutingTable}, {@link ProviderStore}, {@link KadServerEngine},
 * {@link KadClient}) bound to streams.
 *
 * <p>In {@link Mode#SERVER} the protocol is registered, so identify advertises it and other nodes
 * put us in their routing tables and send us requests; in {@link Mode#CLIENT} it is not (as
 * go-libp2p-kad-dht's client mode), and we only ask. Either way peers whose identify lists the
 * protocol are offered to the routing table.
 *
 * <p>Server streams: {@link KadServerHandler}. Client requests open one stream per request
 * (as js does), read one answer of at most {@link KadConfig#maxResponseSize} within
 * {@link KadConfig#requestTimeout}, and close it.
 */
public final class KadDht implements AutoCloseable {
  /** Whether we answer requests. */
  public enum Mode { CLIENT, SERVER }

  private static final Logger LOG = LoggerFactory.getLogger(KadDht.class);
  /** Addresses of one peer tried when it must be dialled. */
  private static final int MAX_DIAL_ADDRESSES = 3;

  private final Host host;
  private final KadConfig config;
  private final Mode mode;
  private final Supplier<List<Multiaddr>> advertised;
  private final RoutingTable table;
  private final ProviderStore store;
  private final KadServerEngine server;
  private final KadClient client;
  private final List<ScheduledFuture<?>> maintenance = new ArrayList<>();
  private final Random random = new Random();

  private KadDht(final Host host, final KadConfig config, final Mode mode,
      final Scope providerMemory, final Supplier<List<Multiaddr>> advertised) {
    this.host = host;
    this.config = config;
    this.mode = mode;
    this.advertised = advertised;
    this.table = new RoutingTable(host.peerId(), config.k(), host.clock());
    this.store = new ProviderStore(config, host.clock(), providerMemory);
    this.server = new KadServerEngine(config, host.clock(), table, store, this::addresses,
        advertised);
    this.client = new KadClient(config, table, store, this::request, this::schedule,
        this::addresses);
  }

  /**
   * Starts the DHT on {@code host}.
   *
   * @param providerMemory where provider records reserve their bytes (a scope of the node budget)
   * @param advertised the addresses to announce in provider records and our own FIND_NODE
   *     answer, best first (browser-dialable ones first)
   */
  public static KadDht start(final Host host, final KadConfig config, final Mode mode,
      final Scope providerMemory, final Supplier<List<Multiaddr>> advertised) {
    final KadDht dht = new KadDht(Objects.requireNonNull(host, "host"),
        Objects.requireNonNull(config, "config"), Objects.requireNonNull(mode, "mode"),
        Objects.requireNonNull(providerMemory, "providerMemory"),
        Objects.requireNonNull(advertised, "advertised"));
    if (mode == Mode.SERVER) {
      host.protocols().register(KadConfig.PROTOCOL_ID, (stream, protocol) -> {
        KadServerHandler.install(stream, dht.server,
            Connection.of(stream).orElseThrow().remotePeer());
      });
    }
    host.addListener(dht.new Listener());
    for (final Connection connection : host.connections()) {
      host.peerStore().get(connection.remotePeer()).ifPresent(dht::identified);
    }
    final long expiry = Duration.ofHours(1).toMillis();
    dht.maintenance.add(host.eventLoops().group().scheduleAtFixedRate(dht.store::expire, expiry,
        expiry, TimeUnit.MILLISECONDS));
    final long refresh = config.refreshInterval().toMillis();
    dht.maintenance.add(host.eventLoops().group().scheduleAtFixedRate(() -> dht.refresh(),
        refresh, refresh, TimeUnit.MILLISECONDS));
    LOG.info("kad-dht {} started in {} mode", KadConfig.PROTOCOL_ID,
        mode.name().toLowerCase(java.util.Locale.ROOT));
    return dht;
  }

  public Mode mode() {
    return mode;
  }

  public RoutingTable table() {
    return table;
  }

  public ProviderStore providers() {
    return store;
  }

  public KadServerEngine server() {
    return server;
  }

  public KadClient client() {
    return client;
  }

  /**
   * Dials {@code peers} (each {@code .../p2p/<id>}); identify then offers those that speak the
   * protocol to the routing table. Completes, never exceptionally, when every dial has ended.
   */
  public CompletableFuture<Void> bootstrap(final List<Multiaddr> peers) {
    final List<CompletableFuture<?>> dials = new ArrayList<>();
    for (final Multiaddr peer : peers) {
      dials.add(host.dial(peer).thenCompose(host::identify).handle((ok, error) -> {
        if (error != null) {
          LOG.info("kad-dht bootstrap peer {} unreachable: {}", peer, error.toString());
        }
        return null;
      }));
    }
    return CompletableFuture.allOf(dials.toArray(CompletableFuture[]::new));
  }

  /** Refreshes the routing table now (also done every {@link KadConfig#refreshInterval}). */
  public CompletableFuture<Void> refresh() {
    return client.refresh(random).exceptionally(error -> {
      LOG.debug("kad-dht refresh failed: {}", error.toString());
      return null;
    });
  }

  /** The k closest peers to {@code key} that answered. */
  public CompletableFuture<KadLookup.Result> closestPeers(final byte[] key) {
    return client.closestPeers(key);
  }

  /** Providers of {@code multihash} (its bytes), stopping at {@code wanted}. */
  public CompletableFuture<KadLookup.Result> findProviders(final byte[] multihash,
      final int wanted) {
    return client.findProviders(multihash, wanted);
  }

  /**
   * Which keys (multihash bytes) we hold: GET_PROVIDERS for them lists us
   * ({@link KadServerEngine#holds}).
   */
  public void holds(final java.util.function.Predicate<byte[]> holds) {
    server.holds(holds);
  }

  /**
   * A {@link Reprovider} on this DHT: our id with the advertised addresses (at most
   * {@link KadConfig#maxProviderAddresses}, read at each send), the host's clock and event loops.
   * Not started: the owner adds its keys, calls {@link Reprovider#start} and closes it before
   * the DHT.
   */
  public Reprovider reprovider(final Reprovider.Settings settings) {
    return new Reprovider(client, config, host.clock(), this::schedule, this::self, settings);
  }

  private KadPeer self() {
    final List<Multiaddr> addresses = advertised.get();
    return new KadPeer(host.peerId(), addresses.size() <= config.maxProviderAddresses()
        ? addresses : addresses.subList(0, config.maxProviderAddresses()));
  }

  /** Announces us as a provider of {@code multihash} with the advertised addresses. */
  public CompletableFuture<KadClient.ProvideResult> provide(final byte[] multihash) {
    return client.provide(multihash, self());
  }

  /** Every counter of the engines, prefixed {@code server_}, {@code client_}, {@code table_}. */
  public Map<String, Long> counters() {
    final Map<String, Long> out = new TreeMap<>();
    server.counters().forEach((k, v) -> out.put("server_" + k, v));
    client.counters().forEach((k, v) -> out.put("client_" + k, v));
    table.counters().forEach((k, v) -> out.put("table_" + k, v));
    store.counters().forEach((k, v) -> out.put("providers_" + k, v));
    return out;
  }

  @Override
  public void close() {
    if (mode == Mode.SERVER) {
      host.protocols().unregister(KadConfig.PROTOCOL_ID);
    }
    maintenance.forEach(f -> f.cancel(false));
  }

  private List<Multiaddr> addresses(final PeerId peer) {
    return host.peerStore().get(peer).map(PeerStore.PeerInfo::addresses).orElse(List.of());
  }

  private Runnable schedule(final Runnable task, final Duration delay) {
    final ScheduledFuture<?> future = host.eventLoops().group().schedule(task, delay.toNanos(),
        TimeUnit.NANOSECONDS);
    return () -> future.cancel(false);
  }

  private void identified(final PeerStore.PeerInfo info) {
    if (info.protocols().contains(KadConfig.PROTOCOL_ID)) {
      client.peerSeen(new KadPeer(info.peerId(), info.addresses()));
    } else if (!info.protocols().isEmpty()) {
      table.remove(info.peerId());
    }
  }

  /** Sends {@code request} to {@code peer} on a fresh stream; see the class comment. */
  private CompletableFuture<KadMessage> request(final KadPeer peer, final KadMessage request) {
    final CompletableFuture<KadMessage> answer = new CompletableFuture<>();
    connect(peer).thenCompose(connection -> host.newStream(connection,
        List.of(KadConfig.PROTOCOL_ID), (stream, protocol) -> stream.pipeline().addLast(
            new UvarintFrameDecoder(config.maxResponseSize()),
            new ClientHandler(request, answer)))).whenComplete((stream, error) -> {
              if (error != null) {
                answer.completeExceptionally(error);
              }
            });
    return answer;
  }

  private CompletableFuture<Connection> connect(final KadPeer peer) {
    final var open = host.connection(peer.id());
    if (open.isPresent()) {
      return CompletableFuture.completedFuture(open.get());
    }
    final Set<Multiaddr> candidates = new LinkedHashSet<>();
    for (final Multiaddr address : peer.addresses()) {
      if (dialable(address)) {
        candidates.add(address.withoutPeerId());
      }
    }
    for (final Multiaddr address : addresses(peer.id())) {
      if (dialable(address)) {
        candidates.add(address.withoutPeerId());
      }
    }
    final List<Multiaddr> list = new ArrayList<>(candidates);
    return dial(peer.id(), list.subList(0, Math.min(MAX_DIAL_ADDRESSES, list.size())), 0);
  }

  private CompletableFuture<Connection> dial(final PeerId peer, final List<Multiaddr> addresses,
      final int index) {
    if (index >= addresses.size()) {
      return CompletableFuture.failedFuture(new java.io.IOException("no dialable address of "
          + peer));
    }
    return host.dial(addresses.get(index).withPeerId(peer)).handle((c, e) -> c)
        .thenCompose(c -> c != null ? CompletableFuture.completedFuture(c)
            : dial(peer, addresses, index + 1));
  }

  /** TCP and WebSocket over IP or DNS: what the host can dial. */
  private static boolean dialable(final Multiaddr address) {
    final var first = address.components().isEmpty() ? null
        : address.components().get(0).protocol();
    return (first == MultiaddrProtocol.IP4 || first == MultiaddrProtocol.IP6
        || first == MultiaddrProtocol.DNS4 || first == MultiaddrProtocol.DNS6
        || first == MultiaddrProtocol.DNS) && address.has(MultiaddrProtocol.TCP)
        && !address.has(MultiaddrProtocol.P2P_CIRCUIT);
  }

  /** Learns DHT servers from identify. */
  private final class Listener implements HostListener {
    @Override
    public void peerIdentified(final Connection connection, final IdentifyResult result) {
      host.peerStore().get(connection.remotePeer()).ifPresent(KadDht.this::identified);
    }
  }

  /** One outbound request and its answer. */
  private final class ClientHandler extends ActivatedHandler {
    private final KadMessage request;
    private final CompletableFuture<KadMessage> answer;
    private final Deadline timeout;

    ClientHandler(final KadMessage request, final CompletableFuture<KadMessage> answer) {
      this.request = request;
      this.answer = answer;
      this.timeout = deadline(() -> fail(new TimeoutException("kad request timed out")));
    }

    private boolean expectsAnswer() {
      return request.type() != KadMessage.Type.ADD_PROVIDER;
    }

    @Override
    protected void onActivated(final ChannelHandlerContext ctx) {
      timeout.expireIn(config.requestTimeout().toNanos());
      ctx.writeAndFlush(SingleMessageReader.frame(ctx.alloc(), KadCodec.toProto(request)))
          .addListener((ChannelFutureListener) f -> {
            if (!f.isSuccess()) {
              fail(f.cause());
            } else if (!expectsAnswer()) {
              answer.complete(request);
              ctx.close();
            }
          });
    }

    @Override
    public void channelRead(final ChannelHandlerContext ctx, final Object msg) {
      if (!(msg instanceof ByteBuf frame)) {
        ReferenceCountUtil.release(msg);
        return;
      }
      try {
        answer.complete(KadCodec.decode(ByteBufUtil.getBytes(frame), config.codecLimits()));
      } catch (final ProtocolViolationException e) {
        answer.completeExceptionally(e);
      } finally {
        frame.release();
      }
      ctx.close();
    }

    @Override
    protected void onInactive(final ChannelHandlerContext ctx) {
      fail(new java.io.IOException("kad stream closed before the answer"));
    }

    private void fail(final Throwable cause) {
      if (answer.completeExceptionally(cause)) {
        ctx().close();
      }
    }

    @Override
    public void exceptionCaught(final ChannelHandlerContext ctx, final Throwable cause) {
      fail(cause);
    }
  }
}
