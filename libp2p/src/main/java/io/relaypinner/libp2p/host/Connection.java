package io.relaypinner.libp2p.host;

import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelInitializer;
import io.netty.util.AttributeKey;
import io.relaypinner.libp2p.crypto.PublicKey;
import io.relaypinner.libp2p.multistream.MultistreamConfig;
import io.relaypinner.libp2p.multistream.MultistreamInitiator;
import io.relaypinner.libp2p.multistream.ProtocolInstaller;
import io.relaypinner.libp2p.mux.yamux.YamuxHandler;
import io.relaypinner.libp2p.security.noise.SecureSession;
import io.relaypinner.multiformats.Multiaddr;
import io.relaypinner.multiformats.PeerId;
import java.time.Instant;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

/**
 * An upgraded libp2p connection (libp2p/specs connections) to one authenticated remote peer: a
 * transport channel secured with Noise and multiplexed with yamux (TCP, WebSocket), or a QUIC
 * connection whose own streams are the libp2p streams (TLS inside QUIC authenticated the peer).
 * Streams are opened with {@link #newStream}; inbound streams go to the host's
 * {@link ProtocolRegistry}.
 *
 * <p>The connection is reachable from any of its stream channels through {@link #of(Channel)}.
 */
public final class Connection {
  private static final AttributeKey<Connection> KEY = AttributeKey.valueOf(
      Connection.class, "connection");

  /** Opens one outbound stream channel with {@code initializer} in its pipeline. */
  @FunctionalInterface
  interface StreamOpener {
    io.netty.util.concurrent.Future<? extends Channel> open(ChannelHandler initializer);
  }

  private final Channel channel;
  private final PeerId remotePeer;
  private final PublicKey remoteKey;
  private final boolean earlyMuxer;
  private final YamuxHandler muxer;
  private final StreamOpener opener;
  private final Direction direction;
  private final Multiaddr remoteAddress;
  private final Multiaddr localAddress;
  private final String muxerProtocol;
  private final MultistreamConfig multistream;
  private final Instant opened;
  private volatile PeerInboundQueue inboundQueue;
  private volatile Consumer<PeerBanEngine.Fault> faults = fault -> {};

  Connection(final Channel channel, final SecureSession session, final YamuxHandler muxer,
      final Direction direction, final Multiaddr remoteAddress, final Multiaddr localAddress,
      final String muxerProtocol, final MultistreamConfig multistream, final Instant opened) {
    this(channel, session.remotePublicKey(), session.earlyMuxer().isPresent(), muxer,
        initializer -> muxer.newStream(initializer), direction, remoteAddress, localAddress,
        muxerProtocol, multistream, opened);
  }

  /**
   * @param muxer the yamux session, or null where the transport multiplexes itself (QUIC)
   * @param opener opens the outbound streams
   */
  Connection(final Channel channel, final PublicKey remoteKey, final boolean earlyMuxer,
      final YamuxHandler muxer, final StreamOpener opener, final Direction direction,
      final Multiaddr remoteAddress, final Multiaddr localAddress, final String muxerProtocol,
      final MultistreamConfig multistream, final Instant opened) {
    this.channel = channel;
    this.remoteKey = remoteKey;
    this.remotePeer = remoteKey.peerId();
    this.earlyMuxer = earlyMuxer;
    this.muxer = muxer;
    this.opener = opener;
    this.direction = direction;
    this.remoteAddress = remoteAddress;
    this.localAddress = localAddress;
    this.muxerProtocol = muxerProtocol;
    this.multistream = multistream;
    this.opened = opened;
    channel.attr(KEY).set(this);
  }

  /**
   * The connection a channel belongs to: the connection channel itself or one of its streams
   * (whose parent is the connection channel).
   */
  public static Optional<Connection> of(final Channel channel) {
    Channel current = channel;
    while (current != null) {
      final Connection connection = current.attr(KEY).get();
      if (connection != null) {
        return Optional.of(connection);
      }
      current = current.parent();
    }
    return Optional.empty();
  }

  public PeerId remotePeer() {
    return remotePeer;
  }

  public PublicKey remotePublicKey() {
    return remoteKey;
  }

  public Direction direction() {
    return direction;
  }

  /** The remote's transport address, e.g. {@code /ip4/127.0.0.1/tcp/51234}. */
  public Multiaddr remoteAddress() {
    return remoteAddress;
  }

  public Multiaddr localAddress() {
    return localAddress;
  }

  /** {@code /yamux/1.0.0}, or {@code quic-v1} where QUIC's own streams are used. */
  public String muxerProtocol() {
    return muxerProtocol;
  }

  /**
   * Whether the muxer was chosen inside the handshake (no multistream round trip): Noise's early
   * muxer negotiation, or QUIC (no muxer to negotiate).
   */
  public boolean earlyMuxerNegotiated() {
    return earlyMuxer;
  }

  /**
   * The remote peer's inbound budget, shared by all its connections, streams and protocols
   * (set when the connection is established; before that, or without a connection manager, a
   * budget of this connection alone with the default limits).
   */
  public PeerInboundQueue inboundQueue() {
    PeerInboundQueue queue = inboundQueue;
    if (queue == null) {
      synchronized (this) {
        if (inboundQueue == null) {
          inboundQueue = new PeerInboundQueue(ConnectionLimits.DEFAULT.peerQueuedMessages(),
              ConnectionLimits.DEFAULT.peerQueuedBytes(), new LimitCounters(),
              channel.eventLoop().ticker());
        }
        queue = inboundQueue;
      }
    }
    return queue;
  }

  void setInboundQueue(final PeerInboundQueue queue) {
    this.inboundQueue = queue;
  }

  /**
   * Reports that the remote peer broke a rule on this connection (garbage it sent, a bound it
   * ran into): counted, and a peer that keeps doing it is banned and all its connections closed
   * ({@link PeerBanEngine}). Protocols call it where they reject the remote's input, from any
   * thread; cheap.
   */
  public void reportFault(final PeerBanEngine.Fault fault) {
    faults.accept(fault);
  }

  /** Reports a fault of the remote of the connection {@code channel} (a stream) belongs to. */
  public static void reportFault(final Channel channel,
      final PeerBanEngine.Fault fault) {
    of(channel).ifPresent(connection -> connection.reportFault(fault));
  }

  void setFaultSink(final Consumer<PeerBanEngine.Fault> sink) {
    this.faults = sink;
  }

  public Instant opened() {
    return opened;
  }

  /**
   * The connection's transport channel: a TCP/WebSocket channel whose pipeline ends with the
   * yamux session, or the QUIC connection channel (the parent of its stream channels).
   */
  public Channel channel() {
    return channel;
  }

  /** The yamux session; null on a QUIC connection. */
  public YamuxHandler muxer() {
    return muxer;
  }

  public boolean isOpen() {
    return channel.isActive();
  }

  /**
   * Opens a stream and negotiates the first of {@code protocols} the remote supports.
   *
   * @param installer adds the protocol's handlers to the stream pipeline the moment the protocol
   *     is selected, on the event loop, before any byte the remote sent behind its answer is
   *     delivered
   * @return the negotiated stream; fails with {@code NoSuchProtocolException} when the remote
   *     supports none, or with the muxer's or negotiation's error (the stream is then closed)
   */
  public CompletableFuture<Stream> newStream(final List<String> protocols,
      final ProtocolInstaller installer) {
    return open(new MultistreamInitiator(protocols, installer, multistream), null);
  }

  /**
   * Opens a stream with an optimistic (lazy) selection of {@code protocol}: {@code installer}
   * adds the protocol's handlers at once, right behind the header and the proposal, so what they
   * write goes out in the same round trip as the proposal instead of one round trip after it;
   * what they read starts with the first byte after the remote's echo. For a protocol the remote
   * is expected to support: when it answers {@code na} the stream is closed (nothing written was
   * read as another protocol by us) and the result fails with {@code NoSuchProtocolException}.
   *
   * @return the stream once the remote echoed the protocol
   */
  public CompletableFuture<Stream> newLazyStream(final String protocol,
      final ProtocolInstaller installer) {
    return open(MultistreamInitiator.lazy(protocol, multistream), installer);
  }

  /** {@code lazyInstaller}: a lazy initiator's handlers, added right behind it (else null). */
  private CompletableFuture<Stream> open(final MultistreamInitiator initiator,
      final ProtocolInstaller lazyInstaller) {
    final CompletableFuture<Stream> result = new CompletableFuture<>();
    opener.open(new ChannelInitializer<Channel>() {
      @Override
      protected void initChannel(final Channel stream) throws Exception {
        stream.pipeline().addLast("multistream", initiator);
        if (lazyInstaller != null) {
          lazyInstaller.install(stream, initiator.protocols().get(0));
        }
      }
    }).addListener(opened -> {
      if (!opened.isSuccess()) {
        result.completeExceptionally(opened.cause());
        return;
      }
      final Channel stream = (Channel) opened.getNow();
      initiator.result().whenComplete((protocol, error) -> {
        if (error != null) {
          result.completeExceptionally(error);
        } else {
          result.complete(new Stream(stream, protocol, this));
        }
      });
    });
    return result;
  }

  /** Closes the connection (yamux GO_AWAY, then the transport; or QUIC's CONNECTION_CLOSE). */
  public ChannelFuture close() {
    return channel.close();
  }

  /** Completes when the connection is closed, by either side. */
  public ChannelFuture closeFuture() {
    return channel.closeFuture();
  }

  @Override
  public String toString() {
    return "Connection[" + direction.name().toLowerCase(Locale.ROOT) + " "
        + remotePeer() + " " + remoteAddress + "]";
  }
}
