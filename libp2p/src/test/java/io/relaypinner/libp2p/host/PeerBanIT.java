package io.relaypinner.libp2p.host;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.relaypinner.libp2p.crypto.KeyType;
import io.relaypinner.libp2p.crypto.Keys;
import io.relaypinner.libp2p.host.LimitCounters.Limit;
import io.relaypinner.libp2p.host.PeerBanEngine.Fault;
import io.relaypinner.libp2p.netty.EventLoops;
import io.relaypinner.multiformats.Multiaddr;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Peers that keep misbehaving are banned ({@link PeerBanEngine}): their connections closed, their
 * redials held unread until the handshake deadline, while an honest peer keeps working. Java hosts
 * on 127.0.0.1 (loopback is never IP-banned, so only peer bans are exercised here).
 */
class PeerBanIT {
  private static final Duration WAIT = Duration.ofSeconds(15);
  private static final String HOLD = "/test/hold/1.0.0";
  private static final String HOARD = "/test/hoard/1.0.0";
  private final SecureRandom random = new SecureRandom();
  private final EventLoops loops = EventLoops.create(2, "ban-it");
  private final List<Host> hosts = new CopyOnWriteArrayList<>();

  @AfterEach
  void close() {
    hosts.forEach(Host::close);
    loops.shutdownGracefully(Duration.ofSeconds(3));
  }

  private Host host(final ConnectionLimits limits, final boolean listen) throws Exception {
    final Host host = new Host(Keys.generate(KeyType.ED25519, random), HostConfig.builder()
        .listenAddresses(listen ? List.of(Multiaddr.parse("/ip4/127.0.0.1/tcp/0"))
            : List.of())
        .limits(limits).build(), loops, Clock.systemUTC());
    hosts.add(host);
    host.start().get(5, TimeUnit.SECONDS);
    return host;
  }

  private static Multiaddr address(final Host host) {
    return host.listenAddresses().get(0).withPeerId(host.peerId());
  }

  private static Channel open(final Connection connection, final String protocol)
      throws Exception {
    return connection.newStream(List.of(protocol), (stream, p) -> { })
        .get(10, TimeUnit.SECONDS).channel();
  }

  @Test
  void streamsOverTheProtocolLimit_areResetAndCounted_butAreNoFault() throws Exception {
    final Host server = host(ConnectionLimits.builder().protocolStreamLimits(Map.of(HOLD, 1))
        .peerFaults(4).build(), true);
    server.protocols().register(HOLD, (stream, protocol) -> { });
    final Host client = host(ConnectionLimits.DEFAULT, false);
    final Connection connection = client.dial(address(server)).get(10, TimeUnit.SECONDS);
    open(connection, HOLD);
    // Backpressure, as an honest peer meets it at a slow relay: each extra stream is reset, the
    // peer is not banned and the connection stays.
    for (int i = 0; i < 6; i++) {
      assertThat(open(connection, HOLD).closeFuture().await(10, TimeUnit.SECONDS)).isTrue();
    }
    assertThat(server.limitCounters().get(Limit.MAX_PROTOCOL_STREAMS)).isEqualTo(6);
    assertThat(server.bans().faults().getOrDefault(Fault.STREAM_OVER_LIMIT, 0L)).isZero();
    assertThat(server.bans().isBanned(client.peerId())).isFalse();
    assertThat(connection.isOpen()).isTrue();
  }

  @Test
  void peerOpeningStreamsTooFast_isBanned_itsRedialHeld_andAnHonestPeerUnaffected()
      throws Exception {
    final Host server = host(ConnectionLimits.builder().streamOpensPerSecond(1)
        .peerFaults(4).handshakeTimeout(Duration.ofSeconds(2)).build(), true);
    server.protocols().register(HOLD, (stream, protocol) -> { });
    final Host attacker = host(ConnectionLimits.DEFAULT, false);
    final Connection connection = attacker.dial(address(server)).get(10, TimeUnit.SECONDS);
    // Streams opened faster than the rate are reset, each a fault; the fifth bans the peer.
    for (int i = 0; i < 12; i++) {
      connection.newStream(List.of(HOLD), (stream, p) -> { });
    }
    assertThat(connection.closeFuture().await(WAIT.toMillis())).isTrue();
    assertThat(server.limitCounters().get(Limit.PEER_BANNED)).isEqualTo(1);
    assertThat(server.bans().isBanned(attacker.peerId())).isTrue();
    assertThat(server.bans().faults().get(Fault.STREAM_OVER_LIMIT)).isGreaterThanOrEqualTo(5);

    // The redial: held unread after the handshake identified the peer (never a connection on
    // the server, no stream opens), then closed at the server's handshake deadline.
    final var again = attacker.dial(address(server));
    await().atMost(WAIT).until(() -> server.limitCounters().get(Limit.BANNED_PEER) == 1);
    assertThat(server.connection(attacker.peerId())).isEmpty();
    await().atMost(WAIT).until(() -> again.isDone()
        && (again.isCompletedExceptionally() || !again.join().isOpen()));
    await().atMost(WAIT).until(() -> server.openTransportConnections() == 0);

    final Host honest = host(ConnectionLimits.DEFAULT, false);
    final Connection good = honest.dial(address(server)).get(10, TimeUnit.SECONDS);
    assertThat(open(good, HOLD).closeFuture().await(300)).isFalse();
    assertThat(server.bans().isBanned(honest.peerId())).isFalse();
  }

  @Test
  void streamsOpenedFasterThanTheRate_areReset_andCountAsFaults() throws Exception {
    final Host server = host(ConnectionLimits.builder().streamOpensPerSecond(1).peerFaults(100)
        .build(), true);
    server.protocols().register(HOLD, (stream, protocol) -> { });
    final Host client = host(ConnectionLimits.DEFAULT, false);
    final Connection connection = client.dial(address(server)).get(10, TimeUnit.SECONDS);
    final List<CompletableFuture<Stream>> opening = new ArrayList<>();
    for (int i = 0; i < 30; i++) {
      opening.add(connection.newStream(List.of(HOLD), (stream, p) -> { }));
    }
    // The bucket holds 2 (twice the rate) plus one a second: most of the 30 are reset.
    await().atMost(WAIT).until(() -> opening.stream().allMatch(CompletableFuture::isDone));
    await().atMost(WAIT).until(() -> server.bans().faults().get(Fault.STREAM_OVER_LIMIT)
        .equals(server.limitCounters().get(Limit.STREAM_OPEN_RATE)));
    assertThat(server.limitCounters().get(Limit.STREAM_OPEN_RATE)).isGreaterThanOrEqualTo(10);
    assertThat(server.bans().isBanned(client.peerId())).isFalse();
    assertThat(connection.isOpen()).isTrue();
    // Once the bucket refilled, the connection opens streams again.
    await().atMost(WAIT).untilAsserted(() ->
        assertThat(open(connection, HOLD).closeFuture().await(300)).isFalse());
  }

  @Test
  void peerWhoseInboundBudgetStaysFull_isClosed_andThatIsAFault() throws Exception {
    final Host server = host(ConnectionLimits.builder().peerQueuedMessages(4)
        .peerQueueFullTimeout(Duration.ofMillis(800)).build(), true);
    // A protocol that takes every message into the peer's budget and never finishes one: the
    // peer's backlog never drains (as with a relay too slow for what the peer sends).
    server.protocols().register(HOARD, (stream, protocol) ->
        stream.pipeline().addLast(new ChannelInboundHandlerAdapter() {
          @Override
          public void channelRead(final ChannelHandlerContext ctx, final Object msg) {
            final ByteBuf buf = (ByteBuf) msg;
            Connection.of(ctx.channel()).orElseThrow().inboundQueue()
                .admit(ctx.channel(), buf.readableBytes());
            buf.release();
          }
        }));
    final Host client = host(ConnectionLimits.DEFAULT, false);
    final Connection connection = client.dial(address(server)).get(10, TimeUnit.SECONDS);
    final Channel stream = open(connection, HOARD);
    await().atMost(WAIT).until(() -> {
      stream.writeAndFlush(Unpooled.wrappedBuffer(new byte[] {1, 2, 3}));
      return server.limitCounters().get(Limit.PEER_INBOUND_QUEUE) > 0;
    });
    assertThat(connection.closeFuture().await(WAIT.toMillis())).isTrue();
    assertThat(server.limitCounters().get(Limit.PEER_QUEUE_STALLED)).isEqualTo(1);
    assertThat(server.bans().faults().get(Fault.INBOUND_QUEUE_FULL)).isEqualTo(1);
  }
}
