package io.relaypinner.libp2p.host;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.quic.QuicChannel;
import io.netty.handler.codec.quic.QuicClientCodecBuilder;
import io.netty.handler.codec.quic.QuicSslContext;
import io.netty.handler.codec.quic.QuicSslContextBuilder;
import io.netty.handler.ssl.util.InsecureTrustManagerFactory;
import io.relaypinner.libp2p.crypto.KeyType;
import io.relaypinner.libp2p.crypto.Keys;
import io.relaypinner.libp2p.crypto.PrivateKey;
import io.relaypinner.libp2p.host.LimitCounters.Limit;
import io.relaypinner.libp2p.netty.EventLoops;
import io.relaypinner.libp2p.protocol.identify.IdentifyResult;
import io.relaypinner.libp2p.security.tls.TlsIdentity;
import io.relaypinner.libp2p.security.tls.TlsTestCertificates;
import io.relaypinner.libp2p.transport.quic.QuicTransport;
import io.relaypinner.multiformats.Multiaddr;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Java hosts over QUIC v1 on 127.0.0.1 (libp2p/specs quic): the TLS handshake's PeerIds,
 * identify, ping, many concurrent streams, garbage datagrams and a wrong dialled PeerId. One
 * listening host for the class.
 */
class QuicHostIT {
  private static final Duration WAIT = Duration.ofSeconds(10);
  private static final SecureRandom RANDOM = new SecureRandom();
  private static EventLoops loops;
  private static Host server;
  private static Multiaddr serverAddress;

  @BeforeAll
  static void start() throws Exception {
    QuicTransport.isAvailable();
    loops = EventLoops.create(2, "quic-it");
    server = host(List.of(Multiaddr.parse("/ip4/127.0.0.1/udp/0/quic-v1")));
    EchoStreams.serve(server);
    serverAddress = server.listenAddresses().get(0).withPeerId(server.peerId());
  }

  @AfterAll
  static void stop() {
    server.close();
    loops.shutdownGracefully(Duration.ofSeconds(3));
  }

  private static Host host(final List<Multiaddr> listen) throws Exception {
    final Host host = new Host(Keys.generate(KeyType.ED25519, RANDOM), HostConfig.builder()
        .listenAddresses(listen).agentVersion("relay-pinner/test").build(), loops,
        Clock.systemUTC());
    host.start().get(5, TimeUnit.SECONDS);
    return host;
  }

  @Test
  void listen_shouldBindAQuicV1Address() {
    assertThat(QuicTransport.isAvailable()).as("native QUIC: %s",
        QuicTransport.unavailabilityCause()).isTrue();
    assertThat(serverAddress.toString()).startsWith("/ip4/127.0.0.1/udp/")
        .contains("/quic-v1/p2p/");
  }

  @Test
  void dial_shouldAuthenticateBothSides_identifyAndPing() throws Exception {
    try (Host client = host(List.of())) {
      final CompletableFuture<Connection> inbound = new CompletableFuture<>();
      server.addListener(new HostListener() {
        @Override
        public void connectionOpened(final Connection connection) {
          if (connection.remotePeer().equals(client.peerId())) {
            inbound.complete(connection);
          }
        }
      });

      final Connection connection = client.dial(serverAddress).get(10, TimeUnit.SECONDS);

      assertThat(connection.remotePeer()).isEqualTo(server.peerId());
      assertThat(connection.muxerProtocol()).isEqualTo("quic-v1");
      assertThat(connection.remoteAddress().toString()).endsWith("/quic-v1");
      assertThat(inbound.get(10, TimeUnit.SECONDS).direction()).isEqualTo(Direction.INBOUND);
      final IdentifyResult about = client.identify(connection).get(10, TimeUnit.SECONDS);
      assertThat(about.agentVersion()).contains("relay-pinner/test");
      assertThat(about.listenAddrs()).contains(serverAddress.withoutPeerId());
      assertThat(client.ping(connection).get(10, TimeUnit.SECONDS)).isPositive();
    }
  }

  @Test
  void manyStreams_shouldEchoEveryByte() throws Exception {
    try (Host client = host(List.of())) {
      final Connection connection = client.dial(serverAddress).get(10, TimeUnit.SECONDS);
      // More streams than the yamux test, less data: the QUIC stream cap is the same setting.
      EchoStreams.assertConcurrentEchoes(connection, 100, 8 * 1024);
    }
  }

  @Test
  void handshake_shouldBeRefusedAndCounted_whenTheClientCertificateLies() throws Exception {
    final long before = server.limitCounters().get(Limit.BAD_CERTIFICATE);
    final PrivateKey victim = Keys.generate(KeyType.ED25519, RANDOM);
    final TlsIdentity liar = TlsTestCertificates.impersonating(victim,
        Keys.generate(KeyType.ED25519, RANDOM), Instant.now());
    final QuicSslContext ssl = QuicSslContextBuilder.forClient()
        .keyManager(liar.privateKey(), null, liar.certificate())
        .trustManager(InsecureTrustManagerFactory.INSTANCE)
        .applicationProtocols(TlsIdentity.ALPN).build();
    final Channel udp = new Bootstrap().group(loops.group())
        .channel(loops.datagramChannelType())
        .handler(new QuicClientCodecBuilder().sslContext(ssl)
            .maxIdleTimeout(5, TimeUnit.SECONDS).initialMaxData(1 << 20)
            .initialMaxStreamDataBidirectionalLocal(1 << 16).build())
        .bind(0).sync().channel();
    try {
      final InetSocketAddress target = new InetSocketAddress(InetAddress.getLoopbackAddress(),
          serverAddress.components().get(1).port());
      QuicChannel.newBootstrap(udp)
          .handler(new ChannelInboundHandlerAdapter() {
            @Override
            public void exceptionCaught(final ChannelHandlerContext ctx, final Throwable cause) {
              ctx.close();
            }
          }).remoteAddress(target).connect();
      // TLS 1.3: the client may finish first; the server refuses when it checks the certificate.
      await().atMost(WAIT).until(() ->
          server.limitCounters().get(Limit.BAD_CERTIFICATE) > before);
      assertThat(server.connection(victim.publicKey().peerId())).isEmpty();
    } finally {
      udp.close().sync();
    }
  }

  @Test
  void peerInboundByteRate_shouldPauseQuicStreams_andStillDeliverEveryByte() throws Exception {
    final Host slow = new Host(Keys.generate(KeyType.ED25519, RANDOM), HostConfig.builder()
        .listenAddresses(List.of(Multiaddr.parse("/ip4/127.0.0.1/udp/0/quic-v1")))
        .limits(ConnectionLimits.builder().peerInboundBytesPerSecond(256 * 1024)
            .peerInboundBurstBytes(64 * 1024).build())
        .build(), loops, Clock.systemUTC());
    try (slow; Host client = host(List.of())) {
      slow.start().get(5, TimeUnit.SECONDS);
      EchoStreams.serve(slow);
      final Connection connection = client.dial(slow.listenAddresses().get(0)
          .withPeerId(slow.peerId())).get(10, TimeUnit.SECONDS);

      EchoStreams.assertConcurrentEchoes(connection, 4, 64 * 1024);

      assertThat(slow.limitCounters().get(Limit.PEER_INBOUND_BYTES)).isPositive();
    }
  }

  @Test
  void dial_shouldFail_whenTheRemoteIsAnotherPeer() throws Exception {
    try (Host client = host(List.of())) {
      final Multiaddr wrong = serverAddress.withoutPeerId().withPeerId(
          Keys.generate(KeyType.ED25519, RANDOM).publicKey().peerId());

      assertThatThrownBy(() -> client.dial(wrong).get(10, TimeUnit.SECONDS))
          .isInstanceOf(ExecutionException.class).hasMessageContaining("expected peer");
    }
  }

  @Test
  void garbageDatagrams_shouldBeDroppedAndCounted_whileTheHostKeepsServing() throws Exception {
    final int port = serverAddress.components().get(1).port();
    try (DatagramSocket socket = new DatagramSocket()) {
      // One at a time, each awaited: a burst may overflow the socket's buffer (lost, not counted).
      for (int i = 0; i < 50; i++) {
        final long before = server.limitCounters().get(Limit.QUIC_DATAGRAM_DROPPED);
        final byte[] garbage = new byte[1 + RANDOM.nextInt(1400)];
        RANDOM.nextBytes(garbage);
        socket.send(new DatagramPacket(garbage, garbage.length,
            InetAddress.getLoopbackAddress(), port));
        await().atMost(WAIT).pollInterval(Duration.ofMillis(2)).until(() ->
            server.limitCounters().get(Limit.QUIC_DATAGRAM_DROPPED) > before);
      }
    }

    try (Host client = host(List.of())) {
      final Connection connection = client.dial(serverAddress).get(10, TimeUnit.SECONDS);
      assertThat(client.ping(connection).get(10, TimeUnit.SECONDS)).isPositive();
    }
  }
}
