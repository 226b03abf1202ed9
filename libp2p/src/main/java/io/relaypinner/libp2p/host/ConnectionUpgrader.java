package io.relaypinner.libp2p.host;

import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.handler.codec.quic.QuicChannel;
import io.netty.handler.codec.quic.QuicStreamChannel;
import io.netty.handler.codec.quic.QuicStreamType;
import io.netty.util.concurrent.ScheduledFuture;
import io.netty.util.concurrent.Ticker;
import io.relaypinner.common.Failures;
import io.relaypinner.libp2p.core.BadPeerException;
import io.relaypinner.libp2p.core.InternalErrorException;
import io.relaypinner.libp2p.crypto.PublicKey;
import io.relaypinner.libp2p.multistream.MultistreamConfig;
import io.relaypinner.libp2p.multistream.MultistreamInitiator;
import io.relaypinner.libp2p.multistream.MultistreamResponder;
import io.relaypinner.libp2p.multistream.ProtocolInstaller;
import io.relaypinner.libp2p.multistream.ProtocolMatcher;
import io.relaypinner.libp2p.mux.yamux.YamuxConfig;
import io.relaypinner.libp2p.mux.yamux.YamuxHandler;
import io.relaypinner.libp2p.mux.yamux.YamuxSessionListener;
import io.relaypinner.libp2p.security.noise.NoiseHandshakeHandler;
import io.relaypinner.libp2p.security.noise.NoiseProtocol;
import io.relaypinner.libp2p.security.noise.SecureSession;
import io.relaypinner.libp2p.security.tls.BadCertificateException;
import io.relaypinner.libp2p.transport.SocketAddresses;
import io.relaypinner.libp2p.transport.quic.QuicTransport;
import io.relaypinner.multiformats.Multiaddr;
import io.relaypinner.multiformats.PeerId;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Turns a raw transport channel into a {@link Connection} (libp2p/specs connections): multistream
 * {@code /noise}, the Noise XX handshake, then {@code /yamux/1.0.0} (skipped when the muxer was
 * agreed inside the handshake), then a yamux session whose inbound streams negotiate against the
 * host's protocols. The whole upgrade has one deadline (js-libp2p uses 10 s); a failure closes
 * the channel and is the remote's fault unless proven otherwise.
 */
final class ConnectionUpgrader {
  private static final Logger LOG = LoggerFactory.getLogger(ConnectionUpgrader.class);
  static final String YAMUX_PROTOCOL_ID = "/yamux/1.0.0";
  /** {@link Connection#muxerProtocol()} of a QUIC connection: QUIC's streams, no muxer. */
  static final String QUIC_MUXER = "quic-v1";

  /** Learns the outcome of every upgrade. Called on the connection's event loop. */
  interface Listener {
    void established(Connection connection);

    void failed(Direction direction, Multiaddr remote, Throwable cause);
  }

  private final NoiseProtocol noise;
  private final YamuxConfig yamux;
  private final MultistreamConfig multistream;
  private final ChannelHandler inboundStreams;
  /** Every QUIC stream the remote opens (see {@link QuicStreamInitializer}). */
  private final ChannelHandler quicStreams = new QuicStreamInitializer(null);
  private final YamuxSessionListener sessionListener;
  private final Duration timeout;
  private final Clock clock;
  private final Ticker ticker;
  private final Listener listener;
  private final ConnectionManager manager;

  ConnectionUpgrader(final NoiseProtocol noise, final YamuxConfig yamux,
      final MultistreamConfig multistream, final ProtocolRegistry registry,
      final YamuxSessionListener sessionListener, final Duration timeout, final Clock clock,
      final Ticker ticker, final Listener listener, final ConnectionManager manager) {
    this.noise = noise;
    this.yamux = yamux;
    this.multistream = multistream;
    this.sessionListener = sessionListener;
    this.timeout = timeout;
    this.clock = clock;
    this.ticker = ticker;
    this.listener = listener;
    this.manager = manager;
    this.inboundStreams = new InboundStreamInitializer(registry,
        manager.limitProtocols(registry), multistream);
  }

  /** Every stream the remote opens negotiates its protocol against the registry. */
  @ChannelHandler.Sharable
  private static final class InboundStreamInitializer extends ChannelInitializer<Channel> {
    private final ProtocolRegistry registry;
    private final ProtocolInstaller installer;
    private final MultistreamConfig config;

    InboundStreamInitializer(final ProtocolRegistry registry, final ProtocolInstaller installer,
        final MultistreamConfig config) {
      this.registry = registry;
      this.installer = installer;
      this.config = config;
    }

    @Override
    protected void initChannel(final Channel stream) {
      stream.pipeline().addLast("multistream",
          new MultistreamResponder(registry, installer, config));
    }
  }

  /** For a listener: upgrades every accepted channel. */
  ChannelHandler inbound() {
    return new UpgradeInitializer(Direction.INBOUND, Optional.empty(), new CompletableFuture<>());
  }

  /**
   * Upgrades a channel that is already connected (and, for WebSocket, past its handshake);
   * {@code transport} is appended to the socket addresses for the connection's multiaddrs, e.g.
   * {@code /ws}.
   */
  void upgrade(final Channel channel, final Direction direction, final Optional<PeerId> expected,
      final CompletableFuture<Connection> result, final Multiaddr transport) {
    new Upgrade(channel, direction, expected, result, transport).start();
  }

  /** For one dial: upgrades the dialled channel, expecting {@code expected} when known. */
  ChannelHandler outbound(final Optional<PeerId> expected,
      final CompletableFuture<Connection> result) {
    return new UpgradeInitializer(Direction.OUTBOUND, expected, result);
  }

  @ChannelHandler.Sharable
  private final class UpgradeInitializer extends ChannelInitializer<Channel> {
    private final Direction direction;
    private final Optional<PeerId> expected;
    private final CompletableFuture<Connection> outboundResult;

    UpgradeInitializer(final Direction direction, final Optional<PeerId> expected,
        final CompletableFuture<Connection> outboundResult) {
      this.direction = direction;
      this.expected = expected;
      this.outboundResult = outboundResult;
    }

    @Override
    protected void initChannel(final Channel channel) {
      // A listener's initializer is shared by every accepted channel: each gets its own result.
      final CompletableFuture<Connection> result;
      if (direction == Direction.OUTBOUND) {
        result = outboundResult;
        manager.trackOutbound(channel);
      } else {
        result = new CompletableFuture<>();
        if (!manager.admitInbound(channel)) {
          return;
        }
      }
      new Upgrade(channel, direction, expected, result, Multiaddr.EMPTY).start();
    }
  }

  /** The state of one channel's upgrade. */
  private final class Upgrade {
    private final Channel channel;
    private final Direction direction;
    private final Optional<PeerId> expected;
    private final CompletableFuture<Connection> result;
    private final Multiaddr transport;
    private ScheduledFuture<?> deadline;

    Upgrade(final Channel channel, final Direction direction, final Optional<PeerId> expected,
        final CompletableFuture<Connection> result, final Multiaddr transport) {
      this.channel = channel;
      this.direction = direction;
      this.expected = expected;
      this.result = result;
      this.transport = transport;
    }

    void start() {
      // One deadline from accept (or connect): TLS and the WebSocket upgrade count too.
      final Long started = channel.attr(ConnectionManager.STARTED_NANOS).get();
      final long elapsed = started == null ? 0 : ticker.nanoTime() - started;
      deadline = channel.eventLoop().schedule(
          () -> fail(new UpgradeTimeoutException("connection handshake did not finish within "
              + timeout.toMillis() + " ms")), Math.max(0, timeout.toNanos() - elapsed),
          TimeUnit.NANOSECONDS);
      channel.closeFuture().addListener(closed -> fail(new BadPeerException(
          "connection closed during the upgrade")));
      final ProtocolInstaller secure = (ch, protocol) -> installNoise();
      channel.pipeline().addLast("mss-security", direction == Direction.INBOUND
          ? new MultistreamResponder(ProtocolMatcher.exact(NoiseProtocol.PROTOCOL_ID), secure,
              multistream)
          : watch(new MultistreamInitiator(List.of(NoiseProtocol.PROTOCOL_ID), secure,
              multistream)));
    }

    private MultistreamInitiator watch(final MultistreamInitiator initiator) {
      initiator.result().whenComplete((protocol, error) -> {
        if (error != null) {
          fail(error);
        }
      });
      return initiator;
    }

    private void installNoise() {
      final NoiseHandshakeHandler handshake = direction == Direction.INBOUND
          ? noise.newResponder()
          : noise.newInitiator(expected);
      handshake.handshakeFuture().whenComplete((session, error) -> {
        if (error != null) {
          fail(error);
        } else {
          secured(session);
        }
      });
      channel.pipeline().addLast("noise", handshake);
    }

    private void secured(final SecureSession session) {
      if (session.remotePeerId().equals(noise.localPeerId())) {
        fail(new BadPeerException("the remote peer is ourselves"));
        return;
      }
      if (direction == Direction.INBOUND && manager.refuseBanned(channel, session.remotePeerId())) {
        // Held unread until the handshake deadline closes it, not closed at once: a banned peer
        // that redials at once would cost a Noise handshake per retry; this way, one per
        // handshake timeout. Held connections count against maxConnections like any other.
        // A reset while held is the remote's doing: closed quietly, never Netty's tail warning.
        channel.config().setAutoRead(false);
        channel.pipeline().addLast("errors", ConnectionErrors.INSTANCE);
        return;
      }
      if (session.earlyMuxer().isPresent()) {
        installMuxer(session);
        return;
      }
      final ProtocolInstaller mux = (ch, protocol) -> installMuxer(session);
      channel.pipeline().addLast("mss-muxer", direction == Direction.INBOUND
          ? new MultistreamResponder(ProtocolMatcher.exact(YAMUX_PROTOCOL_ID), mux, multistream)
          : watch(new MultistreamInitiator(List.of(YAMUX_PROTOCOL_ID), mux, multistream)));
    }

    private void installMuxer(final SecureSession session) {
      if (result.isDone()) {
        return;
      }
      final YamuxSessionListener state = manager.newConnectionState(channel, sessionListener);
      final YamuxHandler muxer = direction == Direction.OUTBOUND
          ? YamuxHandler.forDialer(yamux, inboundStreams, state)
          : YamuxHandler.forListener(yamux, inboundStreams, state);
      channel.pipeline().addLast("yamux", muxer);
      channel.pipeline().addLast("errors", ConnectionErrors.INSTANCE);
      deadline.cancel(false);
      final Connection connection = new Connection(channel, session, muxer, direction,
          address(channel.remoteAddress()).encapsulate(transport),
          address(channel.localAddress()).encapsulate(transport), YAMUX_PROTOCOL_ID,
          multistream, clock.instant());
      result.complete(connection);
      manager.established(connection);
      listener.established(connection);
    }

    private void fail(final Throwable cause) {
      if (result.completeExceptionally(cause)) {
        if (deadline != null) {
          deadline.cancel(false);
        }
        manager.upgradeFailed(channel, cause);
        listener.failed(direction, address(channel.remoteAddress()), cause);
        channel.close();
      }
    }
  }

  /**
   * For a QUIC listener: installed on every connection at its first packet. It is admitted like
   * an accepted TCP channel (caps, per-IP share, banned IPs, the handshake deadline) and becomes
   * a {@link Connection} when its TLS handshake is done.
   */
  ChannelHandler quicInbound() {
    return new QuicConnectionInitializer(Direction.INBOUND);
  }

  /** For a QUIC dial: installed on the connection before it connects. */
  ChannelHandler quicOutbound() {
    return new QuicConnectionInitializer(Direction.OUTBOUND);
  }

  /** Installed on every QUIC stream the remote opens: negotiates against the registry. */
  ChannelHandler quicStreams() {
    return quicStreams;
  }

  @ChannelHandler.Sharable
  private final class QuicConnectionInitializer extends ChannelInitializer<QuicChannel> {
    private final Direction direction;

    QuicConnectionInitializer(final Direction direction) {
      this.direction = direction;
    }

    @Override
    protected void initChannel(final QuicChannel channel) {
      // A failed handshake (a refused certificate) is an exception on the connection: the
      // remote's fault, logged at DEBUG without a stack trace, never Netty's tail warning.
      channel.pipeline().addLast("errors", ConnectionErrors.INSTANCE);
      if (direction == Direction.OUTBOUND) {
        manager.trackOutbound(channel);
      } else if (!manager.admitInbound(channel)) {
        return;
      }
      manager.newConnectionState(channel, YamuxSessionListener.NOOP);
      if (direction == Direction.INBOUND) {
        channel.pipeline().addBefore("errors", "quic-established",
            new ChannelInboundHandlerAdapter() {
              @Override
              public void channelActive(final ChannelHandlerContext ctx) {
                ctx.pipeline().remove(this);
                quicEstablished(channel, Direction.INBOUND, Optional.empty(),
                    new CompletableFuture<>());
                ctx.fireChannelActive();
              }
            });
      }
    }
  }

  /**
   * A QUIC stream, either side's: half-closable (a FIN is {@code ChannelInputShutdownEvent}, as
   * over yamux), counted for the idle timeout, then {@code next} (an outbound stream's
   * initializer) or the responder (an inbound stream).
   */
  @ChannelHandler.Sharable
  private final class QuicStreamInitializer extends ChannelInitializer<QuicStreamChannel> {
    private final ChannelHandler next;

    QuicStreamInitializer(final ChannelHandler next) {
      this.next = next;
    }

    @Override
    protected void initChannel(final QuicStreamChannel stream) throws Exception {
      stream.config().setAllowHalfClosure(true);
      manager.trackStream(stream);
      if (next != null) {
        stream.pipeline().addLast(next);
      } else {
        stream.pipeline().addLast("multistream-init", inboundStreams);
      }
    }
  }

  /**
   * A QUIC connection finished its handshake: the remote's certificate names its peer (and is
   * {@code expected} when dialled with {@code /p2p}); no Noise, no muxer to negotiate.
   */
  void quicEstablished(final QuicChannel channel, final Direction direction,
      final Optional<PeerId> expected, final CompletableFuture<Connection> result) {
    final PublicKey remoteKey;
    try {
      remoteKey = QuicTransport.remoteKey(channel, clock.instant(), expected);
    } catch (final BadCertificateException e) {
      quicFailed(channel, direction, result, new BadPeerException(e.getMessage(), e));
      return;
    }
    final PeerId remote = remoteKey.peerId();
    if (remote.equals(noise.localPeerId())) {
      quicFailed(channel, direction, result, new BadPeerException("the remote peer is ourselves"));
      return;
    }
    if (direction == Direction.INBOUND && manager.refuseBanned(channel, remote)) {
      // No handshake to hold back here (QUIC's is done): close at once.
      result.completeExceptionally(new BadPeerException("peer " + remote + " is banned"));
      channel.close();
      return;
    }
    final Connection connection = new Connection(channel, remoteKey, true, null,
        initializer -> channel.createStream(QuicStreamType.BIDIRECTIONAL,
            new QuicStreamInitializer(initializer)),
        direction, quicAddress(ConnectionManager.remoteSocket(channel)),
        quicAddress(channel.localSocketAddress()), QUIC_MUXER, multistream, clock.instant());
    if (!result.complete(connection)) {
      channel.close();
      return;
    }
    manager.established(connection);
    listener.established(connection);
  }

  private void quicFailed(final QuicChannel channel, final Direction direction,
      final CompletableFuture<Connection> result, final Throwable cause) {
    result.completeExceptionally(cause);
    manager.upgradeFailed(channel, cause);
    listener.failed(direction, quicAddress(ConnectionManager.remoteSocket(channel)), cause);
    channel.close();
  }

  private static Multiaddr quicAddress(final SocketAddress socket) {
    return socket instanceof InetSocketAddress inet
        ? SocketAddresses.toQuicMultiaddr(inet)
        : Multiaddr.EMPTY;
  }

  private static Multiaddr address(final SocketAddress socket) {
    return socket instanceof InetSocketAddress inet
        ? SocketAddresses.toMultiaddr(inet)
        : Multiaddr.EMPTY;
  }

  /**
   * The last handler of a connection: errors that reach it close the connection; the remote's
   * faults are logged at DEBUG without a stack trace, ours at ERROR.
   */
  @ChannelHandler.Sharable
  static final class ConnectionErrors extends ChannelInboundHandlerAdapter {
    static final ConnectionErrors INSTANCE = new ConnectionErrors();

    @Override
    public void exceptionCaught(final ChannelHandlerContext ctx, final Throwable cause) {
      if (cause instanceof InternalErrorException || Failures.isFatal(cause)) {
        LOG.error("connection {} failed: {}", ctx.channel().remoteAddress(), cause.toString(),
            cause);
      } else {
        LOG.debug("connection {} closed: {}", ctx.channel().remoteAddress(), cause.toString());
      }
      ctx.close();
    }
  }
}
