package io.relaypinner.libp2p.host;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.relaypinner.libp2p.crypto.KeyType;
import io.relaypinner.libp2p.crypto.Keys;
import io.relaypinner.libp2p.host.LimitCounters.Limit;
import io.relaypinner.libp2p.netty.EventLoops;
import io.relaypinner.multiformats.Multiaddr;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketException;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Hostile input at node level: while 20 honest Java peers (10 over TCP, 10 over WebSocket) keep
 * pinging a host, attackers send random bytes (TCP and WebSocket), a truncated Noise message, a
 * yamux frame with a huge length, a yamux window overrun and 10,000 stream opens. Every attacker
 * connection is closed and counted; no honest ping fails; the host keeps serving.
 *
 * <p>The yamux attackers are real hosts that complete Noise and then write raw yamux frames
 * under their own session (into the pipeline below the yamux codec, so Noise still encrypts).
 */
class HostileInputIT {
  private static final Duration WAIT = Duration.ofSeconds(30);
  private static final int HONEST_PEERS = 20;
  private static final int PINGS = 50;
  private static final int TYPE_DATA = 0;
  private static final int TYPE_WINDOW_UPDATE = 1;
  private static final int SYN = 1;
  /** Far above the ids the attackers' own sessions use for identify. */
  private static final int FIRST_RAW_STREAM = 100_001;

  private final SecureRandom random = new SecureRandom();
  private final EventLoops serverLoops = EventLoops.create(2, "hostile-server");
  private final EventLoops clientLoops = EventLoops.create(2, "hostile-clients");
  private final List<Host> hosts = new CopyOnWriteArrayList<>();
  private final ExecutorService sockets = Executors.newFixedThreadPool(4);

  @AfterEach
  void close() {
    sockets.shutdownNow();
    hosts.forEach(Host::close);
    serverLoops.shutdownGracefully(Duration.ofSeconds(3));
    clientLoops.shutdownGracefully(Duration.ofSeconds(3));
  }

  private Host client() {
    final Host host = new Host(Keys.generate(KeyType.ED25519, random), HostConfig.DEFAULT,
        clientLoops, Clock.systemUTC());
    hosts.add(host);
    return host;
  }

  /** An honest peer: its host and its connection to the server. */
  private record Peer(Host host, Connection connection) {}

  @Test
  void attackers_shouldBeClosedAndCounted_whileHonestPeersKeepPinging() throws Exception {
    final Host server = new Host(Keys.generate(KeyType.ED25519, random), HostConfig.builder()
        .listenAddresses(List.of(Multiaddr.parse("/ip4/127.0.0.1/tcp/0"),
            Multiaddr.parse("/ip4/127.0.0.1/tcp/0/ws")))
        .limits(ConnectionLimits.builder().handshakeTimeout(Duration.ofSeconds(3)).build())
        .build(), serverLoops, Clock.systemUTC());
    hosts.add(server);
    server.start().get(5, TimeUnit.SECONDS);
    final Multiaddr tcp = address(server, false);
    final Multiaddr ws = address(server, true);

    // Honest peers connect first, then ping in a loop while the attacks run.
    final List<Peer> honest = new ArrayList<>();
    for (int i = 0; i < HONEST_PEERS; i++) {
      final Host peer = client();
      honest.add(new Peer(peer, peer.dial(i % 2 == 0 ? tcp : ws).get(10, TimeUnit.SECONDS)));
    }
    final AtomicInteger pings = new AtomicInteger();
    final List<Throwable> failures = new CopyOnWriteArrayList<>();
    final List<CompletableFuture<Void>> loops = new ArrayList<>();
    for (final Peer peer : honest) {
      loops.add(pingLoop(peer, PINGS, pings, failures));
    }

    // Raw socket attacks: the handshake never completes.
    final int tcpPort = tcp.components().get(1).port();
    final int wsPort = ws.components().get(1).port();
    final byte[] noise = new byte[4096];
    random.nextBytes(noise);
    final byte[] truncatedNoise = HexFormat.of().parseHex("132f6d756c746973747265616d2f312e30"
        + "2e300a072f6e6f6973650a0020" + "0102030405");
    final List<Future<Boolean>> rawAttacks = List.of(
        sockets.submit(() -> sendAndAwaitClose(tcpPort, noise)),
        sockets.submit(() -> sendAndAwaitClose(wsPort, noise)),
        sockets.submit(() -> sendAndAwaitClose(wsPort, ("GET / HTTP/1.1\r\nHost: x\r\n"
            + "Upgrade: websocket\r\nConnection: Upgrade\r\n\r\n").getBytes(
                StandardCharsets.US_ASCII))),
        // Noise message 1 announced as 32 bytes, cut after 5, then silence.
        sockets.submit(() -> sendAndAwaitClose(tcpPort, truncatedNoise)));

    // Yamux attacks, each from a peer that completed Noise.
    final Connection hugeFrame = client().dial(tcp).get(10, TimeUnit.SECONDS);
    writeRaw(hugeFrame, header(TYPE_DATA, SYN, FIRST_RAW_STREAM, 0xFFFF_FFFFL));

    final Connection overrun = client().dial(ws).get(10, TimeUnit.SECONDS);
    final int window = 256 * 1024;
    final ByteBuf overrunFrames = Unpooled.buffer();
    overrunFrames.writeBytes(header(TYPE_WINDOW_UPDATE, SYN, FIRST_RAW_STREAM, 0));
    overrunFrames.writeBytes(header(TYPE_DATA, 0, FIRST_RAW_STREAM, window + 1));
    overrunFrames.writeZero(window + 1);
    writeRaw(overrun, overrunFrames);

    final Connection flood = client().dial(tcp).get(10, TimeUnit.SECONDS);
    final ByteBuf syns = Unpooled.buffer(10_000 * 12);
    for (int i = 0; i < 10_000; i++) {
      syns.writeBytes(header(TYPE_WINDOW_UPDATE, SYN, FIRST_RAW_STREAM + 2 * i, 0));
    }
    writeRaw(flood, syns);

    for (final Connection attacker : List.of(hugeFrame, overrun, flood)) {
      assertThat(attacker.closeFuture().await(WAIT.toMillis())).as(attacker.toString()).isTrue();
    }
    for (final Future<Boolean> attack : rawAttacks) {
      assertThat(attack.get(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
    }
    CompletableFuture.allOf(loops.toArray(CompletableFuture[]::new)).get(120, TimeUnit.SECONDS);

    assertThat(failures).isEmpty();
    assertThat(pings.get()).isEqualTo(HONEST_PEERS * PINGS);
    assertThat(honest).allMatch(peer -> peer.connection().isOpen());
    final LimitCounters counters = server.limitCounters();
    assertThat(counters.get(Limit.HANDSHAKE_FAILED)).isGreaterThanOrEqualTo(3);
    assertThat(counters.get(Limit.HANDSHAKE_TIMEOUT)).isGreaterThanOrEqualTo(1);
    assertThat(counters.get(Limit.PROTOCOL_VIOLATION)).isEqualTo(2);
    assertThat(counters.get(Limit.STREAM_FLOOD)).isEqualTo(1);
    assertThat(counters.get(Limit.MAX_STREAMS_PER_CONNECTION))
        .isGreaterThan(ConnectionLimits.DEFAULT.maxRejectedStreams());
    await().atMost(WAIT).until(() -> server.connectionCount() == HONEST_PEERS
        && server.openTransportConnections() == HONEST_PEERS);

    // And the host still takes new peers.
    final Host lateHost = client();
    final Connection late = lateHost.dial(ws).get(10, TimeUnit.SECONDS);
    assertThat(lateHost.ping(late).get(10, TimeUnit.SECONDS)).isPositive();
  }

  private static Multiaddr address(final Host host, final boolean ws) {
    return host.listenAddresses().stream().filter(a -> a.toString().endsWith("/ws") == ws)
        .findFirst().orElseThrow().withPeerId(host.peerId());
  }

  /** {@code count} pings, one after the other, on fresh streams; failures are collected. */
  private static CompletableFuture<Void> pingLoop(final Peer peer, final int count,
      final AtomicInteger done, final List<Throwable> failures) {
    CompletableFuture<Void> chain = CompletableFuture.completedFuture(null);
    for (int i = 0; i < count; i++) {
      chain = chain.thenCompose(ignored -> peer.host().ping(peer.connection())
          .handle((rtt, error) -> {
            if (error != null) {
              failures.add(error);
            } else {
              done.incrementAndGet();
            }
            return null;
          }));
    }
    return chain;
  }

  private static byte[] header(final int type, final int flags, final int streamId,
      final long length) {
    final ByteBuf buf = Unpooled.buffer(12);
    buf.writeByte(0).writeByte(type).writeShort(flags).writeInt(streamId)
        .writeInt((int) length);
    return Arrays.copyOf(buf.array(), 12);
  }

  private static void writeRaw(final Connection connection, final byte[] bytes) {
    writeRaw(connection, Unpooled.wrappedBuffer(bytes));
  }

  /** Writes below the attacker's own yamux session: Noise encrypts, yamux is bypassed. */
  private static void writeRaw(final Connection connection, final ByteBuf bytes) {
    connection.channel().eventLoop().execute(() -> {
      final ChannelHandlerContext codec = connection.channel().pipeline().context("yamux-codec");
      codec.writeAndFlush(bytes);
    });
  }

  /** Sends {@code bytes} and then waits (without sending more) until the server closes. */
  private static boolean sendAndAwaitClose(final int port, final byte[] bytes)
      throws IOException {
    try (Socket socket = new Socket("127.0.0.1", port)) {
      socket.setSoTimeout((int) WAIT.toMillis());
      final OutputStream out = socket.getOutputStream();
      out.write(bytes);
      out.flush();
      final InputStream in = socket.getInputStream();
      final byte[] buffer = new byte[1024];
      try {
        while (in.read(buffer) >= 0) {
          // what the server says before closing does not matter
        }
        return true;
      } catch (final SocketException e) {
        return e.getMessage() != null && e.getMessage().contains("reset");
      }
    }
  }
}
