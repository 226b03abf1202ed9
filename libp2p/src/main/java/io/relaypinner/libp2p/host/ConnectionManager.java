package io.relaypinner.libp2p.host;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufHolder;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.quic.QuicChannel;
import io.netty.util.AttributeKey;
import io.netty.util.concurrent.Ticker;
import io.relaypinner.common.budget.KeyedScopes;
import io.relaypinner.common.budget.Reservation;
import io.relaypinner.common.budget.Resource;
import io.relaypinner.common.budget.Scope;
import io.relaypinner.libp2p.core.BadPeerException;
import io.relaypinner.libp2p.core.ProtocolViolationException;
import io.relaypinner.libp2p.host.LimitCounters.Limit;
import io.relaypinner.libp2p.multistream.ProtocolInstaller;
import io.relaypinner.libp2p.mux.yamux.YamuxSessionListener;
import io.relaypinner.libp2p.mux.yamux.YamuxStreamChannel;
import io.relaypinner.multiformats.PeerId;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.time.Clock;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Enforces {@link ConnectionLimits} for one {@link Host} and counts every hit in
 * {@link LimitCounters}: the connection caps at accept (taken from its {@link ConnectionBudget}:
 * in all and per IP key, half-open connections included), the handshake deadline's start, per
 * connection stream caps (total, per protocol, floods), the idle timeout and the per-peer inbound
 * byte rate. Per-connection state lives on the connection's event loop. Elapsed time (rates,
 * the idle timeout, a stalled budget) is measured on the host's {@link Ticker}, bans on its
 * {@link Clock}.
 */
final class ConnectionManager {
  private static final Logger LOG = LoggerFactory.getLogger(ConnectionManager.class);
  /** When a channel was accepted or dialled (the manager's ticker): the handshake start. */
  static final AttributeKey<Long> STARTED_NANOS =
      AttributeKey.valueOf(ConnectionManager.class, "started");
  private static final AttributeKey<ConnectionState> STATE =
      AttributeKey.valueOf(ConnectionManager.class, "state");
  /** A QUIC connection's peer byte budget, charged by each of its streams. */
  private static final AttributeKey<PeerBudget> QUIC_BUDGET =
      AttributeKey.valueOf(ConnectionManager.class, "quicBudget");
  /** Set once a channel's handshake outcome was counted (or it succeeded): count once. */
  private static final AttributeKey<Boolean> SETTLED =
      AttributeKey.valueOf(ConnectionManager.class, "settled");

  private final ConnectionLimits limits;
  private final Ticker ticker;
  private final ConnectionBudget budget;
  private final LimitCounters counters = new LimitCounters();
  /** For metrics and tests only: admission is the budget's. */
  private final AtomicInteger openOutbound = new AtomicInteger();
  private final AtomicInteger openInbound = new AtomicInteger();
  private final Map<PeerId, PeerBudget> budgets = new ConcurrentHashMap<>();
  private final Map<PeerId, PeerInboundQueue> queues = new ConcurrentHashMap<>();
  /** Every established connection by peer: closed together when the peer is banned. */
  private final Map<PeerId, Set<Connection>> connections = new ConcurrentHashMap<>();
  private final PeerBanEngine bans;
  /** All peers' decoded messages together: every peer's budget charges this one too. */
  private final PeerInboundQueue nodeQueue;

  /**
   * @param clock the bans' time ({@link PeerBanEngine})
   * @param ticker elapsed time of rates and timeouts; the one the connections' event loops run
   *     their timers on
   */
  ConnectionManager(final ConnectionLimits limits, final Clock clock, final Ticker ticker) {
    this(limits, ConnectionBudget.standalone(limits.maxConnections()), clock, ticker);
  }

  /**
   * @param budget where connections are admitted from (its caps replace
   *     {@link ConnectionLimits#maxConnections()})
   * @param clock the bans' time ({@link PeerBanEngine})
   * @param ticker elapsed time of rates and timeouts; the one the connections' event loops run
   *     their timers on
   */
  ConnectionManager(final ConnectionLimits limits, final ConnectionBudget budget,
      final Clock clock, final Ticker ticker) {
    this(limits, budget, clock, ticker, null);
  }

  /**
   * @param inboundMemory where the node-wide inbound queue reserves its bytes (the node
   *     budget's libp2p memory surface), or null
   */
  ConnectionManager(final ConnectionLimits limits, final ConnectionBudget budget,
      final Clock clock, final Ticker ticker, final Scope inboundMemory) {
    this.limits = limits;
    this.budget = budget;
    this.ticker = ticker;
    this.bans = new PeerBanEngine(limits, clock);
    this.nodeQueue = PeerInboundQueue.node(limits.nodeQueuedMessages(), limits.nodeQueuedBytes(),
        counters, ticker, inboundMemory);
  }

  LimitCounters counters() {
    return counters;
  }

  PeerBanEngine bans() {
    return bans;
  }

  /**
   * Records a fault of {@code connection}'s peer; when it bans the peer, every connection of the
   * peer is closed (one log line).
   */
  void fault(final Connection connection, final PeerBanEngine.Fault fault) {
    final PeerId peer = connection.remotePeer();
    if (!bans.fault(peer, ip(connection.channel()), fault) || !limits.banning()) {
      return;
    }
    counters.hit(Limit.PEER_BANNED);
    LOG.info("banning peer {} ({}) until {}: more than {} faults, the last {}", peer,
        connection.remoteAddress(), bans.bannedUntil(peer), limits.peerFaults(), fault.label());
    final Set<Connection> open = connections.get(peer);
    if (open != null) {
      for (final Connection each : open) {
        each.close();
      }
    }
  }

  /**
   * Called when the handshake of an inbound connection identified its peer: true (counted, and
   * the caller fails the upgrade) when that peer is banned.
   */
  boolean refuseBanned(final Channel channel, final PeerId peer) {
    if (!limits.banning() || !bans.isBanned(peer)) {
      return false;
    }
    channel.attr(SETTLED).set(Boolean.TRUE);
    counters.hit(Limit.BANNED_PEER);
    LOG.debug("closing {}: peer {} is banned", channel.remoteAddress(), peer);
    return true;
  }

  private static String ip(final Channel channel) {
    final InetAddress address = address(channel);
    return address == null ? null : address.getHostAddress();
  }

  private static InetAddress address(final Channel channel) {
    final InetSocketAddress inet = remoteSocket(channel);
    return inet == null ? null : inet.getAddress();
  }

  /**
   * The remote's IP and port: the channel's remote address, or for a QUIC connection (whose
   * remote address is a connection id) the UDP peer's.
   */
  static InetSocketAddress remoteSocket(final Channel channel) {
    final SocketAddress remote = channel instanceof QuicChannel quic
        ? quic.remoteSocketAddress() : channel.remoteAddress();
    return remote instanceof InetSocketAddress inet ? inet : null;
  }

  /** Transport channels open now (upgrading or established), both directions. */
  int openChannels() {
    return openInbound.get() + openOutbound.get();
  }

  /** Inbound transport channels open now (upgrading or established). */
  int openInboundChannels() {
    return openInbound.get();
  }

  /**
   * Called for every accepted channel before anything is read: false (the channel closed and
   * counted) when its IP key already holds its share of the budget's connections
   * ({@code max_connections_per_ip}), or the host holds all of them ({@code max_connections}).
   * The connection holds one from here to its close, half-open or established. Starts the
   * handshake deadline, which covers everything up to a ready yamux session (TLS, WebSocket,
   * multistream, Noise, muxer). An accepted channel that closes before its handshake finished is
   * counted once: as {@code handshake_timeout} when the deadline closed it, else as
   * {@code handshake_failed}.
   */
  boolean admitInbound(final Channel channel) {
    channel.attr(STARTED_NANOS).set(ticker.nanoTime());
    final InetAddress address = address(channel);
    if (limits.banning() && bans.trackedIps() > 0) {
      if (address != null && bans.isBanned(address.getHostAddress())) {
        return refuse(channel, Limit.BANNED_IP);
      }
    }
    final KeyedScopes.Handle ipScope;
    final Scope scope;
    if (budget.capsPerIp(address)) {
      ipScope = budget.ips().open(budget.ipKey().apply(address));
      if (ipScope == null) {
        // As many distinct IP keys as the budget tracks hold connections: the host is full.
        return refuse(channel, Limit.MAX_CONNECTIONS);
      }
      scope = ipScope.scope();
    } else {
      ipScope = null;
      scope = budget.transport();
    }
    final Reservation held = scope.reserve(Resource.CONNECTIONS, 1);
    if (held == null) {
      // Which scope refused (for the label): the IP's when it is the one at its limit.
      final boolean perIp = ipScope != null && scope.available(Resource.CONNECTIONS) == 0;
      if (ipScope != null) {
        ipScope.close();
      }
      return refuse(channel, perIp ? Limit.MAX_CONNECTIONS_PER_IP : Limit.MAX_CONNECTIONS);
    }
    openInbound.incrementAndGet();
    final ScheduledFuture<?> deadline = channel.eventLoop().schedule(() ->
        settle(channel, new UpgradeTimeoutException("connection handshake did not finish within "
            + limits.handshakeTimeout().toMillis() + " ms")),
        limits.handshakeTimeout().toNanos(), TimeUnit.NANOSECONDS);
    channel.closeFuture().addListener(f -> {
      deadline.cancel(false);
      held.close();
      if (ipScope != null) {
        ipScope.close();
      }
      openInbound.decrementAndGet();
      settle(channel, null);
    });
    return true;
  }

  private boolean refuse(final Channel channel, final Limit limit) {
    channel.attr(SETTLED).set(Boolean.TRUE);
    counters.hit(limit);
    LOG.debug("refusing {}: {}", channel.remoteAddress(), limit.label());
    channel.close();
    return false;
  }

  /**
   * Counts the failed handshake of {@code channel} unless already counted or established, and
   * closes it; {@code cause} null means "closed before the handshake finished".
   */
  private void settle(final Channel channel, final Throwable cause) {
    if (channel.attr(SETTLED).setIfAbsent(Boolean.TRUE) != null) {
      return;
    }
    if (cause instanceof UpgradeTimeoutException) {
      counters.hit(Limit.HANDSHAKE_TIMEOUT);
      LOG.debug("closing {}: {}", channel.remoteAddress(), cause.getMessage());
    } else if (cause == null || cause instanceof BadPeerException) {
      counters.hit(Limit.HANDSHAKE_FAILED);
    }
    channel.close();
  }

  /**
   * Called for every dialled channel: never refused, nor capped per IP (our own dials: bootstrap
   * peers, pin origins, AutoNAT dial-backs, each bounded where it is made). It holds one of the
   * transport's connections while there is one free, so inbound admission sees it in the total
   * as before; dialled while the transport is full, it goes ahead without holding one (not
   * counted as a refusal).
   */
  void trackOutbound(final Channel channel) {
    channel.attr(STARTED_NANOS).set(ticker.nanoTime());
    final Reservation held = budget.transport().available(Resource.CONNECTIONS) > 0
        ? budget.transport().reserve(Resource.CONNECTIONS, 1) : null;
    openOutbound.incrementAndGet();
    channel.closeFuture().addListener(f -> {
      if (held != null) {
        held.close();
      }
      openOutbound.decrementAndGet();
    });
  }

  /** A handshake failed (and the channel is being closed): counted if the remote's fault. */
  void upgradeFailed(final Channel channel, final Throwable cause) {
    settle(channel, cause);
  }

  /**
   * The per-connection state, created when the muxer is installed: it observes the yamux session
   * ({@code user} is told everything too).
   */
  YamuxSessionListener newConnectionState(final Channel channel,
      final YamuxSessionListener user) {
    final ConnectionState state = new ConnectionState(channel, user);
    channel.attr(STATE).set(state);
    return state;
  }

  /**
   * Counts a stream of a connection that multiplexes itself (QUIC) against its connection's
   * state (the idle timeout), from now until it closes (yamux counts its own), and charges what
   * it reads to the peer's inbound byte rate once the connection is established.
   */
  void trackStream(final Channel stream) {
    final ConnectionState state = stream.parent() == null ? null
        : stream.parent().attr(STATE).get();
    if (state != null) {
      state.opened();
      stream.closeFuture().addListener(f -> state.closed());
    }
    final PeerBudget budget = stream.parent() == null ? null
        : stream.parent().attr(QUIC_BUDGET).get();
    if (budget != null) {
      stream.pipeline().addFirst("inbound-budget", new InboundBudget(budget));
    }
  }

  /** Adds the idle timer and the inbound byte budget once the peer is known. */
  void established(final Connection connection) {
    connection.channel().attr(SETTLED).setIfAbsent(Boolean.TRUE);
    final ConnectionState state = connection.channel().attr(STATE).get();
    if (state != null) {
      state.startIdleTimer();
    }
    final PeerId remote = connection.remotePeer();
    connection.setFaultSink(fault -> fault(connection, fault));
    connections.computeIfAbsent(remote, p -> ConcurrentHashMap.newKeySet()).add(connection);
    connection.closeFuture().addListener(f -> connections.computeIfPresent(remote,
        (key, set) -> set.remove(connection) && set.isEmpty() ? null : set));
    final PeerInboundQueue queue = queues.compute(remote, (key, existing) -> {
      final PeerInboundQueue q = existing != null ? existing
          : new PeerInboundQueue(limits.peerQueuedMessages(), limits.peerQueuedBytes(), counters,
              nodeQueue);
      q.users++;
      return q;
    });
    connection.setInboundQueue(queue);
    watchStall(connection, queue);
    connection.closeFuture().addListener(f -> queues.computeIfPresent(remote, (key, q) ->
        --q.users == 0 ? null : q));
    if (limits.peerInboundBytesPerSecond() > 0) {
      final PeerId peer = connection.remotePeer();
      final PeerBudget budget = budgets.compute(peer, (key, existing) -> {
        final PeerBudget b = existing != null ? existing
            : new PeerBudget(limits.peerInboundBytesPerSecond(), limits.peerInboundBurstBytes(),
                ticker);
        b.users++;
        return b;
      });
      if (connection.channel() instanceof QuicChannel) {
        // QUIC's bytes flow in its stream channels, not the connection's: each stream charges
        // the peer's bucket and pauses itself (trackStream); QUIC flow control slows the peer.
        connection.channel().attr(QUIC_BUDGET).set(budget);
      } else {
        connection.channel().pipeline().addFirst("inbound-budget", new InboundBudget(budget));
      }
      connection.closeFuture().addListener(f -> budgets.computeIfPresent(peer, (key, b) ->
          --b.users == 0 ? null : b));
    }
  }

  /**
   * Closes {@code connection} (a fault of its peer) once the peer's budget of decoded messages
   * has stayed full for {@link ConnectionLimits#peerQueueFullTimeout()}: it sends faster than it
   * is served, and pausing its streams alone keeps its backlog (and the node budget it charges)
   * full. Checked on the connection's event loop at a quarter of the timeout.
   */
  private void watchStall(final Connection connection, final PeerInboundQueue queue) {
    final long timeout = limits.peerQueueFullTimeout().toNanos();
    final ScheduledFuture<?> check = connection.channel().eventLoop().scheduleAtFixedRate(() -> {
      if (queue.fullForNanos(ticker.nanoTime()) >= timeout && connection.isOpen()) {
        counters.hit(Limit.PEER_QUEUE_STALLED);
        LOG.debug("closing {}: its inbound budget stayed full for {} ms", connection,
            limits.peerQueueFullTimeout().toMillis());
        // The fault first: whoever sees the connection close finds its cause already counted.
        fault(connection, PeerBanEngine.Fault.INBOUND_QUEUE_FULL);
        connection.close();
      }
    }, timeout / 4, timeout / 4, TimeUnit.NANOSECONDS);
    connection.closeFuture().addListener(f -> check.cancel(false));
  }

  /**
   * Wraps the host's protocol installer: a stream beyond its protocol's limit on its connection is
   * reset right after negotiation (as js-libp2p's registrar does).
   */
  ProtocolInstaller limitProtocols(final ProtocolInstaller installer) {
    return (stream, protocol) -> {
      final ConnectionState state = stream.parent() == null ? null
          : stream.parent().attr(STATE).get();
      if (state != null && !state.admitOpenRate()) {
        counters.hit(Limit.STREAM_OPEN_RATE);
        LOG.debug("resetting a {} stream from {}: more than {} streams a second", protocol,
            stream.parent().remoteAddress(), limits.streamOpensPerSecond());
        reset(stream);
        Connection.reportFault(stream, PeerBanEngine.Fault.STREAM_OVER_LIMIT);
        return;
      }
      if (state != null && !state.admitProtocol(stream, protocol)) {
        counters.hit(Limit.MAX_PROTOCOL_STREAMS);
        LOG.debug("resetting a {} stream from {}: limit per connection reached", protocol,
            stream.parent().remoteAddress());
        // Backpressure, not misbehaviour: an honest js-libp2p peer talking to a slow relay (a
        // shared store) keeps more streams of one protocol open than the limit. Reset and count
        // it, but it is no fault: banning for it banned honest writers (bench/scale-out.sh).
        // The open *rate* above stays a fault.
        reset(stream);
        return;
      }
      installer.install(stream, protocol);
    };
  }

  private static void reset(final Channel stream) {
    if (stream instanceof YamuxStreamChannel yamux) {
      yamux.reset();
    } else {
      stream.close();
    }
  }

  /** One connection's streams, for the stream limits and the idle timeout. */
  private final class ConnectionState implements YamuxSessionListener {
    private final Channel channel;
    private final YamuxSessionListener user;
    private final Map<String, Integer> perProtocol = new HashMap<>();
    private int streams;
    private long rejected;
    private long lastChangeNanos = ticker.nanoTime();
    private ScheduledFuture<?> idleTimer;
    /** Inbound stream opens left in the bucket, and when it was last refilled. */
    private double openTokens = 2.0 * limits.streamOpensPerSecond();
    private long openRefillNanos = ticker.nanoTime();

    ConnectionState(final Channel channel, final YamuxSessionListener user) {
      this.channel = channel;
      this.user = user;
    }

    void startIdleTimer() {
      final long idle = limits.idleTimeout().toNanos();
      if (idle <= 0) {
        return;
      }
      final long period = Math.max(TimeUnit.MILLISECONDS.toNanos(10), idle / 4);
      idleTimer = channel.eventLoop().scheduleAtFixedRate(this::checkIdle, period, period,
          TimeUnit.NANOSECONDS);
      channel.closeFuture().addListener(f -> idleTimer.cancel(false));
    }

    private void checkIdle() {
      if (streams == 0 && ticker.nanoTime() - lastChangeNanos >= limits.idleTimeout().toNanos()
          && channel.isActive()) {
        counters.hit(Limit.IDLE_TIMEOUT);
        LOG.debug("closing {}: no stream for {} ms", channel.remoteAddress(),
            limits.idleTimeout().toMillis());
        idleTimer.cancel(false);
        channel.close();
      }
    }

    /** Takes one inbound stream open from the connection's bucket; false when it is empty. */
    boolean admitOpenRate() {
      final long now = ticker.nanoTime();
      final int rate = limits.streamOpensPerSecond();
      openTokens = Math.min(2.0 * rate, openTokens + (now - openRefillNanos) / 1e9 * rate);
      openRefillNanos = now;
      if (openTokens < 1) {
        return false;
      }
      openTokens -= 1;
      return true;
    }

    boolean admitProtocol(final Channel stream, final String protocol) {
      final Map.Entry<String, Integer> limit = limits.protocolLimit(protocol);
      final int count = perProtocol.getOrDefault(limit.getKey(), 0);
      if (count >= limit.getValue()) {
        return false;
      }
      perProtocol.put(limit.getKey(), count + 1);
      stream.closeFuture().addListener(f -> perProtocol.computeIfPresent(limit.getKey(),
          (key, n) -> n <= 1 ? null : n - 1));
      return true;
    }

    void opened() {
      streams++;
      lastChangeNanos = ticker.nanoTime();
    }

    void closed() {
      streams--;
      lastChangeNanos = ticker.nanoTime();
    }

    @Override
    public void streamOpened(final YamuxStreamChannel stream) {
      opened();
      user.streamOpened(stream);
    }

    @Override
    public void streamClosed(final YamuxStreamChannel stream) {
      closed();
      user.streamClosed(stream);
    }

    @Override
    public void inboundStreamRejected(final long streamId) {
      counters.hit(Limit.MAX_STREAMS_PER_CONNECTION);
      user.inboundStreamRejected(streamId);
      if (++rejected > limits.maxRejectedStreams() && channel.isActive()) {
        counters.hit(Limit.STREAM_FLOOD);
        Connection.reportFault(channel, PeerBanEngine.Fault.PROTOCOL_VIOLATION);
        LOG.debug("closing {}: {} streams beyond the limit of {}", channel.remoteAddress(),
            rejected, limits.maxStreamsPerConnection());
        channel.close();
      }
    }

    @Override
    public void goAwayReceived(final long code) {
      user.goAwayReceived(code);
    }

    @Override
    public void sessionFailed(final Throwable cause) {
      if (cause instanceof ProtocolViolationException) {
        counters.hit(Limit.PROTOCOL_VIOLATION);
        Connection.reportFault(channel, PeerBanEngine.Fault.PROTOCOL_VIOLATION);
      }
      user.sessionFailed(cause);
    }
  }

  /** A token bucket shared by a peer's connections (which may sit on different event loops). */
  private static final class PeerBudget {
    private final long rate;
    private final long burst;
    private final Ticker ticker;
    private long tokens;
    private long lastNanos;
    private int users;

    PeerBudget(final long rate, final long burst, final Ticker ticker) {
      this.rate = rate;
      this.burst = burst;
      this.ticker = ticker;
      this.tokens = burst;
      this.lastNanos = ticker.nanoTime();
    }

    /** Takes {@code bytes}; returns how long to pause reading (nanoseconds), 0 for not at all. */
    synchronized long take(final long bytes) {
      final long now = ticker.nanoTime();
      final long refill = (long) ((now - lastNanos) / 1e9 * rate);
      if (refill > 0) {
        tokens = Math.min(burst, tokens + refill);
        lastNanos = now;
      }
      tokens -= bytes;
      return tokens >= 0 ? 0 : (long) (-tokens * 1e9 / rate);
    }
  }

  /**
   * First in the connection pipeline: charges every inbound byte to the peer's budget and pauses
   * reading (auto-read off) while the budget is in debt. Nothing is dropped.
   */
  private final class InboundBudget extends ChannelInboundHandlerAdapter {
    private final PeerBudget budget;
    private ScheduledFuture<?> resume;

    InboundBudget(final PeerBudget budget) {
      this.budget = budget;
    }

    @Override
    public void channelRead(final ChannelHandlerContext ctx, final Object msg) {
      final long bytes = msg instanceof ByteBuf buf ? buf.readableBytes()
          : msg instanceof ByteBufHolder holder ? holder.content().readableBytes() : 0;
      final long pause = bytes == 0 ? 0 : budget.take(bytes);
      if (pause > 0 && resume == null) {
        counters.hit(Limit.PEER_INBOUND_BYTES);
        ctx.channel().config().setAutoRead(false);
        resume = ctx.executor().schedule(() -> {
          resume = null;
          ctx.channel().config().setAutoRead(true);
        }, pause, TimeUnit.NANOSECONDS);
      }
      ctx.fireChannelRead(msg);
    }

    @Override
    public void handlerRemoved(final ChannelHandlerContext ctx) {
      if (resume != null) {
        resume.cancel(false);
      }
    }
  }
}
