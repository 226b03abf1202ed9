package io.relaypinner.libp2p.host;

import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.Ticker;
import io.relaypinner.libp2p.crypto.PrivateKey;
import io.relaypinner.libp2p.multistream.ProtocolInstaller;
import io.relaypinner.libp2p.mux.yamux.YamuxSessionListener;
import io.relaypinner.libp2p.netty.EventLoops;
import io.relaypinner.libp2p.protocol.identify.IdentifyLocal;
import io.relaypinner.libp2p.protocol.identify.IdentifyProtocol;
import io.relaypinner.libp2p.protocol.identify.IdentifyPushProtocol;
import io.relaypinner.libp2p.protocol.identify.IdentifyResult;
import io.relaypinner.libp2p.protocol.ping.PingProtocol;
import io.relaypinner.libp2p.security.noise.NoiseProtocol;
import io.relaypinner.libp2p.transport.quic.QuicTransport;
import io.relaypinner.libp2p.transport.tcp.TcpTransport;
import io.relaypinner.libp2p.transport.ws.WebSocketTransport;
import io.relaypinner.multiformats.Multiaddr;
import io.relaypinner.multiformats.PeerId;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A libp2p node: TCP and WebSocket (plain, or TLS detected per connection) listeners and dials
 * upgraded to Noise + yamux connections, QUIC ({@code /quic-v1}: libp2p TLS, QUIC's own streams),
 * the protocols it answers ({@link #protocols()}), identify (on every new connection, and pushes
 * when our protocols change), ping, a peer store fed by identify, and a connection manager
 * enforcing {@link HostConfig#limits()} (counted in {@link #limitCounters()}).
 *
 * <p>Runs entirely on the given event loops; every method may be called from any thread and none
 * blocks except {@link #close()}.
 *
 * <p>Time: the {@link #clock()} (wall time) goes to engines and timestamps, the {@link #ticker()}
 * (monotonic nanoseconds, by default the event loops' own, the one their timers run on) to the
 * Netty side: the connection manager's rates and timeouts, the upgrade deadline, ping round trips
 * and {@link io.relaypinner.libp2p.stream.PeerStreams}. Nothing under the host reads the system
 * time itself, except {@link #close()}'s shutdown deadline.
 */
public final class Host implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(Host.class);
  /** Identify pushes are coalesced: one per second at most, as js-libp2p does. */
  private static final long PUSH_DEBOUNCE_MILLIS = 1_000;

  private final PrivateKey identity;
  private final PeerId peerId;
  private final HostConfig config;
  private final EventLoops loops;
  private final ProtocolRegistry protocols = new ProtocolRegistry();
  private final PeerStore peerStore;
  private final Clock clock;
  private final Ticker ticker;
  private final TcpTransport tcp;
  private final WebSocketTransport websocket;
  private final QuicTransport quic;
  private final ConnectionUpgrader upgrader;
  private final IdentifyProtocol identify;
  private final IdentifyPushProtocol identifyPush;
  private final PingProtocol ping;
  private final ConnectionManager manager;
  private final Collection<Connection> connections = ConcurrentHashMap.newKeySet();
  /** js-libp2p accepts one identify stream per connection at a time: share the running one. */
  private final Map<Connection, CompletableFuture<IdentifyResult>> identifying =
      new ConcurrentHashMap<>();
  /** A bound listener of either transport. */
  private record BoundListener(Multiaddr bound, Supplier<List<Multiaddr>> addresses,
      AutoCloseable closer) {}

  private final List<BoundListener> listeners = new CopyOnWriteArrayList<>();
  private final List<HostListener> hostListeners = new CopyOnWriteArrayList<>();
  private final AtomicBoolean pushScheduled = new AtomicBoolean();
  private volatile List<Multiaddr> listenAddresses = List.of();
  /** What identify advertises: the listen addresses unless {@link #advertise} replaced them. */
  private volatile Supplier<List<Multiaddr>> advertised = () -> listenAddresses;
  /** The addresses of the last identify (push) decision, to push only on a real change. */
  private List<Multiaddr> lastAdvertised = List.of();
  private volatile boolean closed;

  public Host(final PrivateKey identity, final HostConfig config, final EventLoops loops,
      final Clock clock) {
    this(identity, config, loops, clock, YamuxSessionListener.NOOP);
  }

  /**
   * @param sessionListener observes every connection's yamux streams (counts, limits, metrics)
   */
  public Host(final PrivateKey identity, final HostConfig config, final EventLoops loops,
      final Clock clock, final YamuxSessionListener sessionListener) {
    this(identity, config, loops, clock, sessionListener, loops.group().ticker());
  }

  /**
   * @param sessionListener observes every connection's yamux streams (counts, limits, metrics)
   * @param ticker the Netty side's time ({@link #ticker()}); the event loops' ticker unless a
   *     test drives time itself
   */
  public Host(final PrivateKey identity, final HostConfig config, final EventLoops loops,
      final Clock clock, final YamuxSessionListener sessionListener, final Ticker ticker) {
    this.identity = identity;
    this.peerId = identity.publicKey().peerId();
    this.config = config;
    this.loops = loops;
    this.clock = Objects.requireNonNull(clock, "clock");
    this.ticker = Objects.requireNonNull(ticker, "ticker");
    this.peerStore = new PeerStore(config.peerStoreCapacity());
    this.tcp = new TcpTransport(loops);
    this.websocket = new WebSocketTransport(loops, config.upgradeTimeout(),
        config.webSocketClientTls());
    this.manager = new ConnectionManager(config.limits(), config.connectionBudget().orElseGet(
        () -> ConnectionBudget.standalone(config.limits().maxConnections())), clock, ticker,
        config.inboundMemory().orElse(null));
    this.quic = new QuicTransport(loops, identity, config.quic(),
        config.limits().maxStreamsPerConnection(), clock, refused -> {
          manager.counters().hit(LimitCounters.Limit.BAD_CERTIFICATE);
          LOG.debug("refused a QUIC peer's certificate: {}", refused.getMessage());
        }, () -> manager.counters().hit(LimitCounters.Limit.QUIC_DATAGRAM_DROPPED));
    final NoiseProtocol noise = new NoiseProtocol(identity, config.noise(), new SecureRandom());
    this.upgrader = new ConnectionUpgrader(noise, config.effectiveYamux(), config.multistream(),
        protocols, sessionListener, config.upgradeTimeout(), clock, ticker, new UpgradeListener(),
        manager);
    final IdentifyLocal local = IdentifyLocal.of(identity.publicKey(), config.agentVersion(),
        () -> advertised.get(), protocols::protocols);
    this.identify = new IdentifyProtocol(local, config.identify());
    this.identifyPush = new IdentifyPushProtocol(local, config.identify());
    this.ping = new PingProtocol(config.ping(), ticker);
    registerBuiltInProtocols();
  }

  private void registerBuiltInProtocols() {
    protocols.register(IdentifyProtocol.PROTOCOL_ID, (stream, protocol) ->
        identify.installResponder(stream, Connection.of(stream).map(c -> c.remoteAddress())
            .orElse(null)));
    protocols.register(IdentifyPushProtocol.PROTOCOL_ID, (stream, protocol) -> {
      final Connection connection = Connection.of(stream).orElseThrow();
      identifyPush.installResponder(stream, connection.remotePeer())
          .whenComplete((update, error) -> {
            if (error == null) {
              identified(connection, update);
            } else {
              LOG.debug("identify push from {} failed: {}", connection.remotePeer(),
                  error.toString());
            }
          });
    });
    protocols.register(PingProtocol.PROTOCOL_ID, (stream, protocol) ->
        ping.installResponder(stream));
    protocols.onChange(this::schedulePush);
  }

  public PeerId peerId() {
    return peerId;
  }

  public PrivateKey identity() {
    return identity;
  }

  public HostConfig config() {
    return config;
  }

  /** The wall clock of this host's engines (bans, timestamps); what protocols on it should use. */
  public Clock clock() {
    return clock;
  }

  /**
   * The monotonic time of this host's Netty side; what classes on it that measure elapsed time
   * ({@link io.relaypinner.libp2p.stream.PeerStreams}, bitswap's network pins) read instead of
   * the system's.
   */
  public Ticker ticker() {
    return ticker;
  }

  /** The protocols this host answers; register application protocols here. */
  public ProtocolRegistry protocols() {
    return protocols;
  }

  public PeerStore peerStore() {
    return peerStore;
  }

  public EventLoops eventLoops() {
    return loops;
  }

  public void addListener(final HostListener listener) {
    hostListeners.add(listener);
  }

  /**
   * Binds every configured listen address; completes when all are bound. A QUIC address where
   * QUIC cannot run ({@link QuicTransport#isAvailable()}) is skipped with one warning: the host
   * starts without it.
   */
  public CompletableFuture<Void> start() {
    final List<CompletableFuture<Multiaddr>> binds = new ArrayList<>();
    for (final Multiaddr address : config.listenAddresses()) {
      if (QuicTransport.handles(address) && !QuicTransport.isAvailable()) {
        LOG.warn("not listening on {}: QUIC is off, its native library did not load ({})",
            address, QuicTransport.unavailabilityCause().map(Throwable::toString).orElse("?"));
        continue;
      }
      binds.add(listen(address));
    }
    return CompletableFuture.allOf(binds.toArray(CompletableFuture[]::new));
  }

  /**
   * Binds one more listen address, TCP ({@code /ip4|ip6/<host>/tcp/<port>}), WebSocket
   * ({@code .../tcp/<port>/ws}) or QUIC ({@code /ip4|ip6/<host>/udp/<port>/quic-v1}), port 0 for
   * an ephemeral one, and completes with the bound address.
   */
  public CompletableFuture<Multiaddr> listen(final Multiaddr address) {
    if (closed) {
      return CompletableFuture.failedFuture(new IllegalStateException("host is closed"));
    }
    final CompletableFuture<BoundListener> bound;
    if (QuicTransport.handles(address)) {
      bound = quic.listen(address, upgrader.quicInbound(), upgrader.quicStreams())
          .thenApply(listener ->
              new BoundListener(listener.boundAddress(), listener::listenAddresses, listener));
    } else if (WebSocketTransport.handles(address)) {
      bound = websocket.listen(address, config.webSocketTls(), manager::admitInbound,
          channel -> upgrader.upgrade(channel, Direction.INBOUND, Optional.empty(),
              new CompletableFuture<>(), WebSocketTransport.transportSuffix(channel)))
          .thenApply(listener ->
              new BoundListener(listener.boundAddress(), listener::listenAddresses, listener));
    } else {
      bound = tcp.listen(address, upgrader.inbound()).thenApply(listener ->
          new BoundListener(listener.boundAddress(), listener::listenAddresses, listener));
    }
    return bound.thenApply(listener -> {
      listeners.add(listener);
      refreshListenAddresses();
      LOG.info("libp2p listening on {}/p2p/{}", listener.bound(), peerId);
      return listener.bound();
    });
  }

  private synchronized void refreshListenAddresses() {
    final List<Multiaddr> addresses = new ArrayList<>();
    for (final BoundListener listener : listeners) {
      addresses.addAll(listener.addresses().get());
    }
    listenAddresses = List.copyOf(addresses);
    addressesChanged();
  }

  /**
   * Replaces what identify and identify push advertise as our listen addresses (default: the
   * bound {@link #listenAddresses()}), e.g. with public and announced addresses. Called on event
   * loops for every identify message: it must be cheap, thread-safe and non-blocking.
   */
  public void advertise(final Supplier<List<Multiaddr>> addresses) {
    this.advertised = Objects.requireNonNull(addresses, "addresses");
    addressesChanged();
  }

  /**
   * Tells the host that what it advertises may have changed (a listener bound, a certificate
   * arrived, a public address was learned): when the list differs from the last one, every
   * connected peer that speaks identify push gets one (coalesced, at most one per second).
   */
  public void addressesChanged() {
    final List<Multiaddr> now = List.copyOf(advertised.get());
    synchronized (this) {
      if (now.equals(lastAdvertised)) {
        return;
      }
      lastAdvertised = now;
    }
    schedulePush();
  }

  /** The bound addresses peers can dial (wildcards expanded), without {@code /p2p}. */
  public List<Multiaddr> listenAddresses() {
    return listenAddresses;
  }

  /** The bound listeners' addresses as configured (with the real ports). */
  public List<Multiaddr> boundAddresses() {
    return listeners.stream().map(BoundListener::bound).toList();
  }

  /**
   * Dials {@code address} ({@code /ip4|ip6/.../tcp/...} or {@code .../udp/<port>/quic-v1},
   * optionally ending in {@code /p2p/<id>}, which Noise or TLS then verifies) and completes with
   * the upgraded connection.
   */
  public CompletableFuture<Connection> dial(final Multiaddr address) {
    if (closed) {
      return CompletableFuture.failedFuture(new IllegalStateException("host is closed"));
    }
    final Optional<PeerId> expected = address.peerId();
    if (expected.isPresent() && expected.get().equals(peerId)) {
      return CompletableFuture.failedFuture(
          new IllegalArgumentException("cannot dial ourselves: " + address));
    }
    final CompletableFuture<Connection> result = new CompletableFuture<>();
    if (QuicTransport.handles(address)) {
      quic.dial(address, upgrader.quicOutbound(), upgrader.quicStreams(), config.dialTimeout())
          .whenComplete((channel, error) -> {
            if (error != null) {
              result.completeExceptionally(error);
            } else {
              channel.eventLoop().execute(() -> upgrader.quicEstablished(channel,
                  Direction.OUTBOUND, expected, result));
            }
          });
    } else if (WebSocketTransport.handles(address)) {
      websocket.dial(address, config.dialTimeout()).whenComplete((channel, error) -> {
        if (error != null) {
          result.completeExceptionally(error);
        } else {
          manager.trackOutbound(channel);
          channel.eventLoop().execute(() -> upgrader.upgrade(channel, Direction.OUTBOUND,
              expected, result, WebSocketTransport.transportSuffix(channel)));
        }
      });
    } else {
      tcp.dial(address, upgrader.outbound(expected, result), config.dialTimeout())
          .whenComplete((channel, error) -> {
            if (error != null) {
              result.completeExceptionally(error);
            }
          });
    }
    return result.thenApply(connection -> {
      peerStore.addAddress(connection.remotePeer(), address.withoutPeerId());
      return connection;
    });
  }

  /** Open connections. */
  public Collection<Connection> connections() {
    return List.copyOf(connections);
  }

  public int connectionCount() {
    return connections.size();
  }

  /** Established connections by direction. */
  public int connectionCount(final Direction direction) {
    return (int) connections.stream().filter(c -> c.direction() == direction).count();
  }

  /**
   * Transport connections open now, established or still in their handshake (what
   * {@link ConnectionLimits#maxConnections()} counts).
   */
  public int openTransportConnections() {
    return manager.openChannels();
  }

  /** How often each limit of {@link HostConfig#limits()} was hit, by limit. */
  public LimitCounters limitCounters() {
    return manager.counters();
  }

  /** Faults of remote peers and the bans they earned ({@link ConnectionLimits#peerFaults()}). */
  public PeerBanEngine bans() {
    return manager.bans();
  }

  /** An open connection to {@code peer}, if there is one. */
  public Optional<Connection> connection(final PeerId peer) {
    for (final Connection connection : connections) {
      if (connection.remotePeer().equals(peer) && connection.isOpen()) {
        return Optional.of(connection);
      }
    }
    return Optional.empty();
  }

  /**
   * Opens a stream to {@code connection}'s peer for the first of {@code protocolIds} it has. When
   * the peer's identify listed one of them, that one is selected optimistically
   * ({@link Connection#newLazyStream}): what {@code installer}'s handlers write goes out with the
   * proposal, a round trip sooner, as go-libp2p does for protocols its peerstore knows. Otherwise
   * the list is negotiated in order.
   */
  public CompletableFuture<Stream> newStream(final Connection connection,
      final List<String> protocolIds, final ProtocolInstaller installer) {
    final Optional<String> known = knownProtocol(connection.remotePeer(), protocolIds);
    return known.isPresent()
        ? connection.newLazyStream(known.get(), installer)
        : connection.newStream(protocolIds, installer);
  }

  /** The first of {@code protocolIds} that {@code peer}'s last identify listed, if any. */
  public Optional<String> knownProtocol(final PeerId peer, final List<String> protocolIds) {
    final List<String> listed = peerStore.get(peer).map(PeerStore.PeerInfo::protocols)
        .orElse(List.of());
    for (final String protocol : protocolIds) {
      if (listed.contains(protocol)) {
        return Optional.of(protocol);
      }
    }
    return Optional.empty();
  }

  /** One ping on a fresh stream; completes with the round-trip time. */
  public CompletableFuture<Duration> ping(final Connection connection) {
    final CompletableFuture<Duration> rtt = new CompletableFuture<>();
    connection.newStream(List.of(PingProtocol.PROTOCOL_ID), (stream, protocol) ->
        ping.pingOnce(stream).whenComplete((value, error) -> {
          if (error != null) {
            rtt.completeExceptionally(error);
          } else {
            rtt.complete(value);
          }
        })).whenComplete((stream, error) -> {
          if (error != null) {
            rtt.completeExceptionally(error);
          }
        });
    return rtt;
  }

  /**
   * Runs identify against {@code connection}'s peer and records the answer. A call while an
   * identify of the same connection is running gets that one's result.
   */
  public CompletableFuture<IdentifyResult> identify(final Connection connection) {
    final CompletableFuture<IdentifyResult> fresh = new CompletableFuture<>();
    final CompletableFuture<IdentifyResult> running = identifying.putIfAbsent(connection, fresh);
    if (running != null) {
      return running.copy();
    }
    fresh.whenComplete((answer, error) -> identifying.remove(connection, fresh));
    startIdentify(connection, fresh);
    return fresh.copy();
  }

  private void startIdentify(final Connection connection,
      final CompletableFuture<IdentifyResult> result) {
    connection.newStream(List.of(IdentifyProtocol.PROTOCOL_ID), (stream, protocol) ->
        identify.installInitiator(stream, connection.remotePeer())
            .whenComplete((answer, error) -> {
              if (error != null) {
                result.completeExceptionally(error);
              } else {
                identified(connection, answer);
                result.complete(answer);
              }
            })).whenComplete((stream, error) -> {
              if (error != null) {
                result.completeExceptionally(error);
              }
            });
  }

  private void identified(final Connection connection, final IdentifyResult result) {
    peerStore.update(connection.remotePeer(), result.publicKey().orElse(null),
        result.listenAddrs().isEmpty() ? null : result.listenAddrs(),
        result.protocols().isEmpty() ? null : result.protocols(),
        result.agentVersion().orElse(null));
    for (final HostListener listener : hostListeners) {
      try {
        listener.peerIdentified(connection, result);
      } catch (final RuntimeException e) {
        LOG.warn("host listener failed on identify of {}", connection.remotePeer(), e);
      }
    }
  }

  private void schedulePush() {
    if (closed || !pushScheduled.compareAndSet(false, true)) {
      return;
    }
    loops.group().schedule(() -> {
      pushScheduled.set(false);
      for (final Connection connection : connections) {
        final boolean supportsPush = peerStore.get(connection.remotePeer())
            .map(info -> info.protocols().contains(IdentifyPushProtocol.PROTOCOL_ID))
            .orElse(false);
        if (supportsPush && connection.isOpen()) {
          connection.newStream(List.of(IdentifyPushProtocol.PROTOCOL_ID),
              (stream, protocol) -> identifyPush.installInitiator(stream))
              .whenComplete((stream, error) -> {
                if (error != null) {
                  LOG.debug("identify push to {} failed: {}", connection.remotePeer(),
                      error.toString());
                }
              });
        }
      }
    }, PUSH_DEBOUNCE_MILLIS, TimeUnit.MILLISECONDS);
  }

  /** Closes every listener and connection. Does not shut down the event loops (not ours). */
  @Override
  public void close() {
    closed = true;
    for (final BoundListener listener : listeners) {
      try {
        listener.closer().close();
      } catch (final Exception e) {
        LOG.warn("closing listener {} failed: {}", listener.bound(), e.toString());
      }
    }
    listeners.clear();
    final List<Supplier<Future<?>>> closes = new ArrayList<>();
    for (final Connection connection : connections) {
      closes.add(connection::close);
    }
    closeAll(closes, Duration.ofSeconds(2));
  }

  /**
   * Starts every close at once, then waits for them together at most {@code timeout} (not
   * {@code timeout} per connection, one after another). A shutdown deadline: real time on
   * purpose, however the host's ticker runs (a mock ticker must not make close wait forever).
   */
  static void closeAll(final List<Supplier<Future<?>>> closes, final Duration timeout) {
    final List<Future<?>> closing = new ArrayList<>();
    for (final Supplier<Future<?>> close : closes) {
      closing.add(close.get());
    }
    final long deadline = System.nanoTime() + timeout.toNanos();
    for (final Future<?> future : closing) {
      final long left = deadline - System.nanoTime();
      if (left <= 0 || !future.awaitUninterruptibly(left, TimeUnit.NANOSECONDS)) {
        LOG.debug("host close: not every connection closed within {}", timeout);
        return;
      }
    }
  }

  private final class UpgradeListener implements ConnectionUpgrader.Listener {
    @Override
    public void established(final Connection connection) {
      if (closed) {
        connection.close();
        return;
      }
      connections.add(connection);
      peerStore.connected(connection.remotePeer());
      LOG.debug("connection opened: {}", connection);
      connection.closeFuture().addListener(f -> {
        connections.remove(connection);
        peerStore.disconnected(connection.remotePeer());
        LOG.debug("connection closed: {}", connection);
        for (final HostListener listener : hostListeners) {
          notify(() -> listener.connectionClosed(connection), connection);
        }
      });
      for (final HostListener listener : hostListeners) {
        notify(() -> listener.connectionOpened(connection), connection);
      }
      identify(connection).whenComplete((result, error) -> {
        if (error != null) {
          LOG.debug("identify of {} failed: {}", connection.remotePeer(), error.toString());
        }
      });
    }

    @Override
    public void failed(final Direction direction, final Multiaddr remote, final Throwable cause) {
      LOG.debug("{} connection upgrade with {} failed: {}", direction, remote, cause.toString());
    }

    private void notify(final Runnable call, final Connection connection) {
      try {
        call.run();
      } catch (final RuntimeException e) {
        LOG.warn("host listener failed for {}", connection, e);
      }
    }
  }
}
