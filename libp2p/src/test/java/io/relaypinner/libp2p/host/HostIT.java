package io.relaypinner.libp2p.host;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.relaypinner.libp2p.core.NoSuchProtocolException;
import io.relaypinner.libp2p.crypto.KeyType;
import io.relaypinner.libp2p.crypto.Keys;
import io.relaypinner.libp2p.netty.EventLoops;
import io.relaypinner.libp2p.protocol.identify.IdentifyResult;
import io.relaypinner.multiformats.Multiaddr;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.net.SocketException;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Two Java hosts on 127.0.0.1: TCP, multistream, Noise, yamux, identify, ping, app streams. */
class HostIT {
  private static final Duration WAIT = Duration.ofSeconds(10);
  private final SecureRandom random = new SecureRandom();
  private final EventLoops loops = EventLoops.create(2, "host-it");
  private final List<Host> hosts = new CopyOnWriteArrayList<>();

  @AfterEach
  void close() {
    hosts.forEach(Host::close);
    loops.shutdownGracefully(Duration.ofSeconds(3));
  }

  private Host host(final KeyType keyType, final boolean listen) throws Exception {
    final HostConfig config = HostConfig.builder()
        .listenAddresses(listen ? List.of(Multiaddr.parse("/ip4/127.0.0.1/tcp/0")) : List.of())
        .agentVersion("relay-pinner/test").build();
    final Host host = new Host(Keys.generate(keyType, random), config, loops, Clock.systemUTC());
    hosts.add(host);
    host.start().get(5, TimeUnit.SECONDS);
    return host;
  }

  private static Multiaddr addressOf(final Host host) {
    return host.listenAddresses().get(0).withPeerId(host.peerId());
  }

  @Test
  void dial_shouldUpgradeIdentifyAndPing_betweenTwoHosts() throws Exception {
    final Host server = host(KeyType.ED25519, true);
    final Host client = host(KeyType.SECP256K1, false);
    final CompletableFuture<IdentifyResult> serverLearned = new CompletableFuture<>();
    server.addListener(new HostListener() {
      @Override
      public void peerIdentified(final Connection connection, final IdentifyResult result) {
        serverLearned.complete(result);
      }
    });

    final Connection connection = client.dial(addressOf(server)).get(10, TimeUnit.SECONDS);
    assertThat(connection.remotePeer()).isEqualTo(server.peerId());
    assertThat(connection.direction()).isEqualTo(Direction.OUTBOUND);
    assertThat(connection.earlyMuxerNegotiated()).isTrue();

    final IdentifyResult aboutServer = client.identify(connection).get(10, TimeUnit.SECONDS);
    assertThat(aboutServer.agentVersion()).contains("relay-pinner/test");
    assertThat(aboutServer.protocols()).contains("/ipfs/id/1.0.0", "/ipfs/id/push/1.0.0",
        "/ipfs/ping/1.0.0");
    assertThat(aboutServer.listenAddrs()).containsExactlyElementsOf(server.listenAddresses());
    assertThat(serverLearned.get(10, TimeUnit.SECONDS).peerId()).isEqualTo(client.peerId());
    await().atMost(WAIT).until(() -> server.connectionCount() == 1
        && client.peerStore().get(server.peerId()).isPresent());

    final Duration rtt = client.ping(connection).get(10, TimeUnit.SECONDS);
    assertThat(rtt).isPositive().isLessThan(WAIT);

    connection.close().sync();
    await().atMost(WAIT).until(() -> server.connectionCount() == 0
        && client.connectionCount() == 0);
  }

  /** {@code /test/echo/1.0.0} on {@code server}: every chunk written back. */
  private static void registerEcho(final Host server) {
    server.protocols().register("/test/echo/1.0.0", (stream, protocol) ->
        stream.pipeline().addLast(new ChannelInboundHandlerAdapter() {
          @Override
          public void channelRead(final ChannelHandlerContext ctx, final Object msg) {
            ctx.writeAndFlush(msg);
          }
        }));
  }

  @Test
  void newStream_shouldReachARegisteredProtocol_andFailForAnUnknownOne() throws Exception {
    final Host server = host(KeyType.ED25519, true);
    registerEcho(server);
    final Host client = host(KeyType.ED25519, false);
    final Connection connection = client.dial(addressOf(server)).get(10, TimeUnit.SECONDS);

    final CompletableFuture<String> echoed = new CompletableFuture<>();
    final Stream stream = connection.newStream(List.of("/test/missing/1.0.0", "/test/echo/1.0.0"),
        (channel, protocol) -> channel.pipeline().addLast(new ChannelInboundHandlerAdapter() {
          @Override
          public void channelRead(final ChannelHandlerContext ctx, final Object msg) {
            final ByteBuf buf = (ByteBuf) msg;
            echoed.complete(buf.toString(StandardCharsets.UTF_8));
            buf.release();
          }
        })).get(10, TimeUnit.SECONDS);
    assertThat(stream.protocol()).isEqualTo("/test/echo/1.0.0");
    stream.channel().writeAndFlush(Unpooled.copiedBuffer("hello", StandardCharsets.UTF_8));
    assertThat(echoed.get(10, TimeUnit.SECONDS)).isEqualTo("hello");

    assertThatThrownBy(() -> connection.newStream(List.of("/test/missing/1.0.0"),
        (channel, protocol) -> { }).get(10, TimeUnit.SECONDS))
        .isInstanceOf(ExecutionException.class)
        .hasCauseInstanceOf(NoSuchProtocolException.class);
    assertThat(connection.isOpen()).isTrue();
  }

  @Test
  void newLazyStream_shouldSendTheFirstBytesWithTheProposal_andFailForAnUnknownProtocol()
      throws Exception {
    final Host server = host(KeyType.ED25519, true);
    registerEcho(server);
    final Host client = host(KeyType.ED25519, false);
    final Connection connection = client.dial(addressOf(server)).get(10, TimeUnit.SECONDS);

    final List<String> order = new CopyOnWriteArrayList<>();
    final CompletableFuture<String> echoed = new CompletableFuture<>();
    final CompletableFuture<Stream> opened = connection.newLazyStream("/test/echo/1.0.0",
        (channel, protocol) -> {
          channel.pipeline().addLast(new ChannelInboundHandlerAdapter() {
            @Override
            public void channelRead(final ChannelHandlerContext ctx, final Object msg) {
              final ByteBuf buf = (ByteBuf) msg;
              echoed.complete(buf.toString(StandardCharsets.UTF_8));
              buf.release();
            }
          });
          // Written at once, before the server could have echoed the protocol.
          channel.writeAndFlush(Unpooled.copiedBuffer("hello", StandardCharsets.UTF_8))
              .addListener(f -> order.add("written " + f.isSuccess()));
        });
    opened.thenRun(() -> order.add("selected"));
    assertThat(opened.get(10, TimeUnit.SECONDS).protocol()).isEqualTo("/test/echo/1.0.0");
    // The echo reader saw only the application's bytes: the protocol's echo was consumed.
    assertThat(echoed.get(10, TimeUnit.SECONDS)).isEqualTo("hello");
    await().atMost(WAIT).until(() -> order.size() == 2);
    assertThat(order).containsExactly("written true", "selected");

    final CompletableFuture<Boolean> unknownClosed = new CompletableFuture<>();
    assertThatThrownBy(() -> connection.newLazyStream("/test/missing/1.0.0",
        (channel, protocol) -> {
          channel.closeFuture().addListener(f -> unknownClosed.complete(true));
          channel.writeAndFlush(Unpooled.copiedBuffer("not a protocol message",
              StandardCharsets.UTF_8));
        }).get(10, TimeUnit.SECONDS))
        .isInstanceOf(ExecutionException.class)
        .hasCauseInstanceOf(NoSuchProtocolException.class);
    assertThat(unknownClosed.get(10, TimeUnit.SECONDS)).isTrue();
    assertThat(connection.isOpen()).isTrue();
  }

  @Test
  void dial_shouldFail_whenTheRemoteIsNotTheExpectedPeer() throws Exception {
    final Host server = host(KeyType.ED25519, true);
    final Host client = host(KeyType.ED25519, false);
    final Multiaddr wrongPeer = server.listenAddresses().get(0)
        .withPeerId(Keys.generate(KeyType.ED25519, random).publicKey().peerId());
    assertThatThrownBy(() -> client.dial(wrongPeer).get(10, TimeUnit.SECONDS))
        .isInstanceOf(ExecutionException.class);
    assertThat(client.connectionCount()).isZero();
    await().atMost(WAIT).until(() -> server.connectionCount() == 0);
  }

  @Test
  void register_shouldPushIdentifyToConnectedPeers() throws Exception {
    final Host server = host(KeyType.ED25519, true);
    final Host client = host(KeyType.ED25519, true);
    final Connection connection = client.dial(addressOf(server)).get(10, TimeUnit.SECONDS);
    await().atMost(WAIT).until(() -> server.peerStore().get(client.peerId())
        .map(info -> info.protocols().contains("/ipfs/id/push/1.0.0")).orElse(false));
    client.protocols().register("/test/late/1.0.0", (stream, protocol) -> { });
    await().atMost(WAIT).until(() -> server.peerStore().get(client.peerId())
        .map(info -> info.protocols().contains("/test/late/1.0.0")).orElse(false));
    assertThat(connection.isOpen()).isTrue();
  }

  @Test
  void fiftyEchoStreams_shouldReturnEveryByteInOrder() throws Exception {
    final Host server = host(KeyType.ED25519, true);
    EchoStreams.serve(server);
    final Host client = host(KeyType.ED25519, false);
    final Connection connection = client.dial(addressOf(server)).get(10, TimeUnit.SECONDS);
    EchoStreams.assertConcurrentEchoes(connection, 50);
  }

  @Test
  void hostileConnections_shouldBeClosed_whileTheHostKeepsServing() throws Exception {
    final Host server = host(KeyType.ED25519, true);
    final Multiaddr tcp = server.listenAddresses().get(0);
    final int port = tcp.components().get(1).port();
    final byte[] random = new byte[4096];
    this.random.nextBytes(random);
    final byte[] mssThenGarbage = concat(
        HexFormat.of().parseHex("132f6d756c746973747265616d2f312e302e300a07"
            + "2f6e6f6973650a"), random);
    // A Noise message 1 announced as 32 bytes but cut after 5.
    final byte[] truncatedNoise = concat(
        HexFormat.of().parseHex("132f6d756c746973747265616d2f312e302e300a07"
            + "2f6e6f6973650a0020"), new byte[5]);
    final byte[] oversizedLength = HexFormat.of().parseHex("ffffffffffffffffff7f");
    for (final byte[] attack : List.of(random, mssThenGarbage, truncatedNoise,
        oversizedLength)) {
      try (Socket socket = new Socket("127.0.0.1", port)) {
        socket.setSoTimeout(15_000);
        socket.getOutputStream().write(attack);
        socket.getOutputStream().flush();
        if (attack == truncatedNoise) {
          // Silence after a partial message: the upgrade deadline closes the connection.
          socket.shutdownOutput();
        }
        assertThat(closedByServer(socket.getInputStream())).isTrue();
      }
    }
    assertThat(server.connectionCount()).isZero();
    final Host client = host(KeyType.ED25519, false);
    final Connection connection = client.dial(addressOf(server)).get(10, TimeUnit.SECONDS);
    assertThat(client.ping(connection).get(10, TimeUnit.SECONDS)).isPositive();
  }

  /** Reads until the server ends the connection: true on end of stream or reset. */
  private static boolean closedByServer(final InputStream in) throws IOException {
    final byte[] buffer = new byte[1024];
    try {
      while (in.read(buffer) >= 0) {
        // what the server said before closing does not matter here
      }
      return true;
    } catch (final SocketException e) {
      return e.getMessage() != null && e.getMessage().contains("reset");
    }
  }

  private static byte[] concat(final byte[] a, final byte[] b) {
    final byte[] out = Arrays.copyOf(a, a.length + b.length);
    System.arraycopy(b, 0, out, a.length, b.length);
    return out;
  }
}
