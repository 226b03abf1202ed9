package io.relaypinner.libp2p.host;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.netty.channel.Channel;
import io.relaypinner.libp2p.crypto.KeyType;
import io.relaypinner.libp2p.crypto.Keys;
import io.relaypinner.libp2p.host.LimitCounters.Limit;
import io.relaypinner.libp2p.mux.yamux.YamuxStreamChannel;
import io.relaypinner.libp2p.netty.EventLoops;
import io.relaypinner.multiformats.Multiaddr;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
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
}
