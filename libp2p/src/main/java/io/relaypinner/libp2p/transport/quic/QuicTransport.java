package io.relaypinner.libp2p.transport.quic;

import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelInitializer;
import io.netty.handler.codec.quic.Quic;
import io.netty.handler.codec.quic.QuicChannel;
import io.netty.handler.codec.quic.QuicClientCodecBuilder;
import io.netty.handler.codec.quic.QuicCodecBuilder;
import io.netty.handler.codec.quic.QuicServerCodecBuilder;
import io.netty.handler.codec.quic.QuicSslContext;
import io.netty.handler.codec.quic.QuicSslContextBuilder;
import io.netty.handler.codec.quic.QuicTokenHandler;
import io.netty.handler.ssl.ClientAuth;
import io.netty.util.concurrent.ScheduledFuture;
import io.relaypinner.libp2p.crypto.PrivateKey;
import io.relaypinner.libp2p.crypto.PublicKey;
import io.relaypinner.libp2p.netty.EventLoops;
import io.relaypinner.libp2p.security.tls.BadCertificateException;
import io.relaypinner.libp2p.security.tls.CertificateVerifier;
import io.relaypinner.libp2p.security.tls.Libp2pTrustManager;
import io.relaypinner.libp2p.security.tls.TlsIdentity;
import io.relaypinner.libp2p.transport.SocketAddresses;
import io.relaypinner.multiformats.Multiaddr;
import io.relaypinner.multiformats.MultiaddrProtocol;
import io.relaypinner.multiformats.PeerId;
import java.net.InetSocketAddress;
import java.security.SecureRandom;
import java.security.cert.Certificate;
import java.security.cert.CertificateEncodingException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import javax.net.ssl.SSLPeerUnverifiedException;

/**
 * The libp2p QUIC transport (libp2p/specs quic/README.md, {@code /udp/<port>/quic-v1}): RFC 9000
 * with libp2p's TLS 1.3 handshake (ALPN {@code libp2p}, both sides authenticated by the
 * certificate of {@link TlsIdentity}), on Netty's {@code netty-codec-native-quic} (quiche and
 * BoringSSL through JNI). QUIC's own streams are the libp2p streams: no Noise, no yamux.
 *
 * <p>The native library is loaded on first use; where it cannot be ({@link #isAvailable()}
 * false: another OS or CPU, a missing {@code .so}), {@link #listen} and {@link #dial} fail with
 * {@link QuicUnavailableException} naming the cause, and the host goes on without QUIC.
 */
public final class QuicTransport {
  private final EventLoops loops;
  private final QuicConfig config;
  private final int maxStreams;
  private final Clock clock;
  private final Consumer<BadCertificateException> refused;
  private final Runnable droppedDatagram;
  private final SecureRandom random;
  private final PrivateKey hostKey;
  private volatile Contexts contexts;

  private record Contexts(QuicSslContext server, QuicSslContext client) {}

  /**
   * @param hostKey whose PeerId the certificate carries
   * @param maxStreams {@code initial_max_streams_bidi}: concurrent streams the remote may open on
   *     one connection (the host's per-connection stream cap)
   * @param refused told of every remote certificate refused (counted by the caller)
   * @param droppedDatagram told of every datagram a listener dropped as garbage
   */
  public QuicTransport(final EventLoops loops, final PrivateKey hostKey, final QuicConfig config,
      final int maxStreams, final Clock clock, final Consumer<BadCertificateException> refused,
      final Runnable droppedDatagram) {
    this.loops = loops;
    this.hostKey = hostKey;
    this.config = config;
    this.maxStreams = maxStreams;
    this.clock = clock;
    this.refused = refused;
    this.droppedDatagram = droppedDatagram;
    this.random = new SecureRandom();
  }

  /** Whether the native QUIC library loaded on this machine. */
  public static boolean isAvailable() {
    return Quic.isAvailable();
  }

  /** Why QUIC is not available, when it is not. */
  public static Optional<Throwable> unavailabilityCause() {
    return Optional.ofNullable(Quic.unavailabilityCause());
  }

  /**
   * True for {@code /ip4|ip6/<addr>/udp/<port>/quic-v1}, optionally followed by
   * {@code /p2p/<peer>}.
   */
  public static boolean handles(final Multiaddr address) {
    final Multiaddr bare = address.withoutPeerId();
    return bare.components().size() == 3 && SocketAddresses.udp(bare).isPresent()
        && bare.components().get(2).protocol() == MultiaddrProtocol.QUIC_V1;
  }

  private Contexts contexts() throws QuicUnavailableException {
    Contexts current = contexts;
    if (current != null) {
      return current;
    }
    synchronized (this) {
      if (contexts == null) {
        if (!isAvailable()) {
          throw new QuicUnavailableException(Quic.unavailabilityCause());
        }
        final TlsIdentity identity = TlsIdentity.generate(hostKey, clock, random);
        final Libp2pTrustManager trust = new Libp2pTrustManager(clock, refused);
        final QuicSslContext server = QuicSslContextBuilder.forServer(identity.privateKey(), null,
                identity.certificate())
            .trustManager(trust)
            .clientAuth(ClientAuth.REQUIRE)
            .applicationProtocols(TlsIdentity.ALPN)
            .build();
        final QuicSslContext client = QuicSslContextBuilder.forClient()
            .keyManager(identity.privateKey(), null, identity.certificate())
            .trustManager(trust)
            .applicationProtocols(TlsIdentity.ALPN)
            .build();
        contexts = new Contexts(server, client);
      }
      return contexts;
    }
  }

  private <B extends QuicCodecBuilder<B>> B parameters(final B builder) {
    return builder
        .maxIdleTimeout(config.maxIdleTimeout().toMillis(), TimeUnit.MILLISECONDS)
        .initialMaxData(config.initialMaxData())
        .initialMaxStreamDataBidirectionalLocal(config.initialMaxStreamData())
        .initialMaxStreamDataBidirectionalRemote(config.initialMaxStreamData())
        .initialMaxStreamsBidirectional(maxStreams)
        // libp2p uses bidirectional streams only.
        .initialMaxStreamsUnidirectional(0)
        .initialMaxStreamDataUnidirectional(0)
        .activeMigration(false);
  }

  /** A bound QUIC listener. */
  public static final class Listener implements AutoCloseable {
    private final Channel channel;
    private final InetSocketAddress socket;
    private final Multiaddr bound;

    Listener(final Channel channel, final InetSocketAddress requested) {
      this.channel = channel;
      this.socket = new InetSocketAddress(requested.getAddress(),
          ((InetSocketAddress) channel.localAddress()).getPort());
      this.bound = SocketAddresses.toQuicMultiaddr(socket);
    }

    /** The bound address, with the real port when 0 was asked for. */
    public Multiaddr boundAddress() {
      return bound;
    }

    /** Addresses peers can dial: the bound one, or every interface address for a wildcard. */
    public List<Multiaddr> listenAddresses() {
      return SocketAddresses.expandWildcard(socket).stream()
          .map(SocketAddresses::toQuicMultiaddr).toList();
    }

    @Override
    public void close() {
      channel.close().syncUninterruptibly();
    }
  }

  /**
   * Binds {@code address} ({@code /ip4|ip6/<host>/udp/<port>/quic-v1}, port 0 for an ephemeral
   * one).
   *
   * @param connectionHandler installed on every connection the moment its first packet arrives
   *     (before its handshake: admission); it becomes active when the handshake is done
   * @param streamHandler installed on every stream the remote opens
   */
  public CompletableFuture<Listener> listen(final Multiaddr address,
      final ChannelHandler connectionHandler, final ChannelHandler streamHandler) {
    final Optional<InetSocketAddress> socket = SocketAddresses.udp(address);
    if (!handles(address) || socket.isEmpty()) {
      return CompletableFuture.failedFuture(
          new IllegalArgumentException("not a QUIC listen address: " + address));
    }
    final Contexts ssl;
    try {
      ssl = contexts();
    } catch (final QuicUnavailableException e) {
      return CompletableFuture.failedFuture(e);
    }
    final SignedConnectionIds ids = new SignedConnectionIds(random);
    final ChannelHandler codec = parameters(new QuicServerCodecBuilder())
        .sslContext(ssl.server())
        .localConnectionIdLength(SignedConnectionIds.LENGTH)
        .connectionIdAddressGenerator(ids)
        .tokenHandler(NoTokens.INSTANCE)
        .handler(connectionHandler)
        .streamHandler(streamHandler)
        .build();
    final Bootstrap bootstrap = new Bootstrap()
        .group(loops.group())
        .channel(loops.datagramChannelType())
        .handler(new ChannelInitializer<Channel>() {
          @Override
          protected void initChannel(final Channel channel) {
            channel.pipeline().addLast("quic-filter", new QuicDatagramFilter(ids, droppedDatagram));
            channel.pipeline().addLast("quic", codec);
          }
        });
    final CompletableFuture<Listener> result = new CompletableFuture<>();
    bootstrap.bind(socket.get()).addListener((ChannelFuture bound) -> {
      if (bound.isSuccess()) {
        result.complete(new Listener(bound.channel(), socket.get()));
      } else {
        result.completeExceptionally(bound.cause());
      }
    });
    return result;
  }

  /**
   * Connects to {@code address} from a fresh UDP socket (closed with the connection) and completes
   * with the connection once its handshake is done; the remote's certificate was verified, not
   * yet matched against {@code /p2p} ({@link #remoteKey}).
   *
   * @param connectionHandler installed on the connection before it connects
   * @param streamHandler installed on every stream the remote opens
   */
  public CompletableFuture<QuicChannel> dial(final Multiaddr address,
      final ChannelHandler connectionHandler, final ChannelHandler streamHandler,
      final Duration timeout) {
    final Optional<InetSocketAddress> remote = SocketAddresses.udp(address);
    if (!handles(address) || remote.isEmpty()) {
      return CompletableFuture.failedFuture(
          new IllegalArgumentException("QUIC cannot dial " + address));
    }
    final Contexts ssl;
    try {
      ssl = contexts();
    } catch (final QuicUnavailableException e) {
      return CompletableFuture.failedFuture(e);
    }
    final ChannelHandler codec = parameters(new QuicClientCodecBuilder())
        .sslContext(ssl.client())
        .build();
    final CompletableFuture<QuicChannel> result = new CompletableFuture<>();
    new Bootstrap()
        .group(loops.group())
        .channel(loops.datagramChannelType())
        .handler(codec)
        .bind(new InetSocketAddress(0))
        .addListener((ChannelFuture bound) -> {
          if (!bound.isSuccess()) {
            result.completeExceptionally(bound.cause());
            return;
          }
          final Channel udp = bound.channel();
          final ScheduledFuture<?> deadline = udp.eventLoop().schedule(() -> {
            if (result.completeExceptionally(new TimeoutException(
                "QUIC handshake with " + address + " did not finish within "
                    + timeout.toMillis() + " ms"))) {
              udp.close();
            }
          }, timeout.toNanos(), TimeUnit.NANOSECONDS);
          QuicChannel.newBootstrap(udp)
              .handler(connectionHandler)
              .streamHandler(streamHandler)
              .remoteAddress(remote.get())
              .connect()
              .addListener(connected -> {
                deadline.cancel(false);
                if (connected.isSuccess()) {
                  final QuicChannel quic = (QuicChannel) connected.getNow();
                  quic.closeFuture().addListener(closed -> udp.close());
                  if (!result.complete(quic)) {
                    quic.close();
                  }
                } else {
                  udp.close();
                  result.completeExceptionally(connected.cause());
                }
              });
        });
    return result;
  }

  /**
   * The host key of an established connection's remote, from its certificate (verified again at
   * {@code now}: cheap, and it keeps no state between the TLS stack's callback and here).
   *
   * @throws BadCertificateException when it does not verify, or is not {@code expected}
   */
  public static PublicKey remoteKey(final QuicChannel channel, final Instant now,
      final Optional<PeerId> expected) throws BadCertificateException {
    final Certificate[] certificates;
    try {
      certificates = channel.sslEngine().getSession().getPeerCertificates();
    } catch (final SSLPeerUnverifiedException e) {
      throw new BadCertificateException("no peer certificate", e);
    }
    if (certificates.length != 1) {
      throw new BadCertificateException("expected exactly one certificate, got "
          + certificates.length);
    }
    final byte[] der;
    try {
      der = certificates[0].getEncoded();
    } catch (final CertificateEncodingException | RuntimeException e) {
      throw new BadCertificateException("certificate not readable: " + e.getMessage());
    }
    return CertificateVerifier.verify(der, now, expected);
  }

  /** No address validation tokens (no Retry round trip), as go-libp2p by default. */
  private static final class NoTokens implements QuicTokenHandler {
    static final NoTokens INSTANCE = new NoTokens();

    @Override
    public boolean writeToken(final ByteBuf out, final ByteBuf dcid,
        final InetSocketAddress address) {
      return false;
    }

    @Override
    public int validateToken(final ByteBuf token, final InetSocketAddress address) {
      return 0;
    }

    @Override
    public int maxTokenLength() {
      return 0;
    }
  }
}
