package io.relaypinner.libp2p.host;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.relaypinner.libp2p.crypto.KeyType;
import io.relaypinner.libp2p.crypto.Keys;
import io.relaypinner.libp2p.host.LimitCounters.Limit;
import io.relaypinner.libp2p.mux.yamux.YamuxStreamChannel;
import io.relaypinner.libp2p.netty.EventLoops;
import io.relaypinner.libp2p.netty.UvarintFrameDecoder;
import io.relaypinner.libp2p.netty.UvarintFrameEncoder;
import io.relaypinner.multiformats.Multiaddr;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The connection manager's limits between Java hosts on 127.0.0.1, each hit and counted. */
class ConnectionLimitsIT {
  private static final Duration WAIT = Duration.ofSeconds(15);
  private static final String HOLD = "/test/hold/1.0.0";
  private final SecureRandom random = new SecureRandom();
  private final EventLoops loops = EventLoops.create(2, "limits-it");
  private final List<Host> hosts = new CopyOnWriteArrayList<>();

  @AfterEach
  void close() {
    hosts.forEach(Host::close);
    loops.shutdownGracefully(Duration.ofSeconds(3));
  }

  private Host host(final ConnectionLimits limits, final boolean listen) throws Exception {
    final Host host = new Host(Keys.generate(KeyType.ED25519, random), HostConfig.builder()
        .listenAddresses(listen ? List.of(Multiaddr.parse("/ip4/127.0.0.1/tcp/0"),
            Multiaddr.parse("/ip4/127.0.0.1/tcp/0/ws")) : List.of())
        .limits(limits).build(), loops, Clock.systemUTC());
    hosts.add(host);
    host.start().get(5, TimeUnit.SECONDS);
    return host;
  }

  private static Multiaddr address(final Host host, final boolean ws) {
    return host.listenAddresses().stream().filter(a -> a.toString().endsWith("/ws") == ws)
        .findFirst().orElseThrow().withPeerId(host.peerId());
  }

  @Test
  void inboundBeyondMaxConnections_shouldBeRefusedAndCounted() throws Exception {
    final Host server = host(ConnectionLimits.builder().maxConnections(2).build(), true);
    host(ConnectionLimits.DEFAULT, false).dial(address(server, false)).get(10, TimeUnit.SECONDS);
    host(ConnectionLimits.DEFAULT, false).dial(address(server, true)).get(10, TimeUnit.SECONDS);

    for (final boolean ws : List.of(false, true)) {
      final Host third = host(ConnectionLimits.DEFAULT, false);
      assertThatThrownBy(() -> third.dial(address(server, ws)).get(10, TimeUnit.SECONDS))
          .isInstanceOf(ExecutionException.class);
    }
    assertThat(server.limitCounters().get(Limit.MAX_CONNECTIONS)).isEqualTo(2);
    await().atMost(WAIT).until(() -> server.connectionCount() == 2);
  }

  @Test
  void streamBeyondItsProtocolLimit_shouldBeResetAndCounted_andTheConnectionSurvives()
      throws Exception {
    final Host server = host(ConnectionLimits.builder()
        .protocolStreamLimits(Map.of(HOLD, 1)).build(), true);
    server.protocols().register(HOLD, (stream, protocol) -> { });
    final Host client = host(ConnectionLimits.DEFAULT, false);
    final Connection connection = client.dial(address(server, false)).get(10, TimeUnit.SECONDS);

    final Stream first = connection.newStream(List.of(HOLD), (stream, protocol) -> { })
        .get(10, TimeUnit.SECONDS);
    final Channel second = connection.newStream(List.of(HOLD), (stream, protocol) -> { })
        .get(10, TimeUnit.SECONDS).channel();
    second.closeFuture().await(10, TimeUnit.SECONDS);
    assertThat(second.isOpen()).isFalse();
    assertThat(first.channel().isOpen()).isTrue();
    assertThat(server.limitCounters().get(Limit.MAX_PROTOCOL_STREAMS)).isEqualTo(1);

    // Once the first stream is gone, the protocol takes a new one again.
    ((YamuxStreamChannel) first.channel()).reset().sync();
    await().atMost(WAIT).untilAsserted(() -> {
      final Channel again = connection.newStream(List.of(HOLD), (stream, protocol) -> { })
          .get(10, TimeUnit.SECONDS).channel();
      assertThat(again.closeFuture().await(300)).isFalse();
    });
    assertThat(connection.isOpen()).isTrue();
  }

  @Test
  void connectionWithoutStreams_shouldBeClosedAfterTheIdleTimeout() throws Exception {
    final Host server = host(ConnectionLimits.builder().idleTimeout(Duration.ofMillis(400))
        .build(), true);
    final Host client = host(ConnectionLimits.DEFAULT, false);
    final Connection connection = client.dial(address(server, false)).get(10, TimeUnit.SECONDS);
    assertThat(connection.closeFuture().await(WAIT.toMillis())).isTrue();
    assertThat(server.limitCounters().get(Limit.IDLE_TIMEOUT)).isEqualTo(1);
  }

  @Test
  void connectionWithAnOpenStream_shouldNotBeIdle() throws Exception {
    final Host server = host(ConnectionLimits.builder().idleTimeout(Duration.ofMillis(200))
        .build(), true);
    server.protocols().register(HOLD, (stream, protocol) -> { });
    final Host client = host(ConnectionLimits.DEFAULT, false);
    final Connection connection = client.dial(address(server, false)).get(10, TimeUnit.SECONDS);
    final Stream held = connection.newStream(List.of(HOLD), (stream, protocol) -> { })
        .get(10, TimeUnit.SECONDS);
    // Eight idle periods with the stream open, while the host's own streams come and go.
    assertThat(connection.closeFuture().await(1_600)).isFalse();
    ((YamuxStreamChannel) held.channel()).reset();
    assertThat(connection.closeFuture().await(WAIT.toMillis())).isTrue();
    assertThat(server.limitCounters().get(Limit.IDLE_TIMEOUT)).isEqualTo(1);
  }

  @Test
  void peerSendingBeyondItsByteRate_shouldBePausedNotDropped() throws Exception {
    final Host server = host(ConnectionLimits.builder().peerInboundBytesPerSecond(128 * 1024)
        .peerInboundBurstBytes(32 * 1024).build(), true);
    EchoStreams.serve(server);
    final Host client = host(ConnectionLimits.DEFAULT, false);
    final Connection connection = client.dial(address(server, true)).get(10, TimeUnit.SECONDS);
    final byte[] data = new byte[512 * 1024];
    random.nextBytes(data);
    final EchoStreams.Echo echo = EchoStreams.roundTrip(connection, data).get(60, TimeUnit.SECONDS);
    assertThat(echo.bytes()).isEqualTo(data.length);
    assertThat(echo.sha256()).isEqualTo(EchoStreams.sha256(data));
    assertThat(server.limitCounters().get(Limit.PEER_INBOUND_BYTES)).isPositive();
    assertThat(connection.isOpen()).isTrue();
  }

  private static List<Channel> open(final Connection connection, final String protocol,
      final int count) throws Exception {
    final List<Channel> streams = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      streams.add(connection.newStream(List.of(protocol), (stream, p) -> { })
          .get(10, TimeUnit.SECONDS).channel());
    }
    return streams;
  }

  @Test
  void defaultLimits_resetTheThirdGossipsubStream_andThe33rdBitswapStream() throws Exception {
    final Host server = host(ConnectionLimits.DEFAULT, true);
    for (final String protocol : List.of("/meshsub/1.1.0", "/meshsub/1.2.0",
        "/ipfs/bitswap/1.2.0", "/ipfs/bitswap/1.1.0")) {
      server.protocols().register(protocol, (stream, p) -> { });
    }
    final Host client = host(ConnectionLimits.DEFAULT, false);
    final Connection connection = client.dial(address(server, false)).get(10, TimeUnit.SECONDS);

    // The two gossipsub versions share one count of 2.
    final List<Channel> meshsub = new ArrayList<>(open(connection, "/meshsub/1.2.0", 1));
    meshsub.addAll(open(connection, "/meshsub/1.1.0", 1));
    final Channel thirdMeshsub = open(connection, "/meshsub/1.2.0", 1).get(0);
    assertThat(thirdMeshsub.closeFuture().await(10, TimeUnit.SECONDS)).isTrue();
    assertThat(server.limitCounters().get(Limit.MAX_PROTOCOL_STREAMS)).isEqualTo(1);

    // Bitswap's versions share one count of 32.
    final List<Channel> bitswap = new ArrayList<>(open(connection, "/ipfs/bitswap/1.2.0", 16));
    bitswap.addAll(open(connection, "/ipfs/bitswap/1.1.0", 16));
    final Channel extraBitswap = open(connection, "/ipfs/bitswap/1.2.0", 1).get(0);
    assertThat(extraBitswap.closeFuture().await(10, TimeUnit.SECONDS)).isTrue();
    assertThat(server.limitCounters().get(Limit.MAX_PROTOCOL_STREAMS)).isEqualTo(2);
    assertThat(meshsub).allSatisfy(s -> assertThat(s.isOpen()).isTrue());
    assertThat(bitswap).allSatisfy(s -> assertThat(s.isOpen()).isTrue());
    assertThat(connection.isOpen()).isTrue();
  }

  @Test
  void floodOverManyStreamsOfTwoProtocols_isHeldToThePeersOneBudget_thenDelivered()
      throws Exception {
    final int budget = 16;
    final int streamsPerProtocol = 8;
    final int framesPerStream = 40;
    final Host server = host(ConnectionLimits.builder().peerQueuedMessages(budget)
        .protocolStreamLimits(Map.of("/test/flood/*", 64)).build(), true);
    final ConcurrentLinkedQueue<Runnable> held = new ConcurrentLinkedQueue<>();
    final AtomicBoolean slow = new AtomicBoolean(true);
    final AtomicInteger received = new AtomicInteger();
    final List<PeerInboundQueue> queues = new CopyOnWriteArrayList<>();
    for (final String protocol : List.of("/test/flood/a", "/test/flood/b")) {
      server.protocols().register(protocol, (stream, p) -> {
        // A protocol whose processing is slow: each decoded frame is charged to the peer's
        // budget and released only when the test lets it.
        final PeerInboundQueue queue = Connection.of(stream).orElseThrow().inboundQueue();
        queues.add(queue);
        stream.pipeline().addLast(new UvarintFrameDecoder(1024),
            new ChannelInboundHandlerAdapter() {
              @Override
              public void channelRead(final ChannelHandlerContext ctx, final Object msg) {
                final ByteBuf frame = (ByteBuf) msg;
                final Runnable release = queue.admit(ctx.channel(), frame.readableBytes());
                frame.release();
                received.incrementAndGet();
                if (slow.get()) {
                  held.add(release);
                } else {
                  release.run();
                }
              }
            });
      });
    }
    final Host client = host(ConnectionLimits.DEFAULT, false);
    final Connection connection = client.dial(address(server, false)).get(10, TimeUnit.SECONDS);
    final List<Channel> streams = new ArrayList<>(open(connection, "/test/flood/a",
        streamsPerProtocol));
    streams.addAll(open(connection, "/test/flood/b", streamsPerProtocol));
    for (final Channel stream : streams) {
      stream.eventLoop().execute(() -> {
        for (int i = 0; i < framesPerStream; i++) {
          final ByteBuf frame = Unpooled.buffer();
          UvarintFrameEncoder.writeUvarint(frame, 100);
          frame.writeZero(100);
          stream.writeAndFlush(frame);
        }
      });
    }
    // Every stream ends up paused by the one budget; before it, each stream had its own queue
    // (32 bitswap messages per stream, 64 per gossipsub stream) and all 640 frames were taken.
    await().atMost(WAIT).until(() -> !queues.isEmpty()
        && queues.get(0).pausedStreams() == streams.size());
    final PeerInboundQueue queue = queues.get(0);
    assertThat(queues).allSatisfy(q -> assertThat(q).isSameAs(queue));
    // The budget, plus at most the one frame each stream was delivering when it paused.
    assertThat(queue.messages()).isBetween(budget, budget + streams.size());
    assertThat(received.get()).isEqualTo(queue.messages());
    assertThat(server.limitCounters().get(Limit.PEER_INBOUND_QUEUE))
        .isEqualTo(streams.size());
    // Backpressure, not loss: once processed, every frame of every stream arrives.
    slow.set(false);
    Runnable release;
    while ((release = held.poll()) != null) {
      release.run();
    }
    await().atMost(WAIT).until(() -> received.get() == streams.size() * framesPerStream);
    assertThat(queue.messages()).isZero();
    assertThat(connection.isOpen()).isTrue();
  }
}
