// Benchmark: gossipsub messages per second from one Java node to another over loopback TCP
// (Noise + yamux), both in this JVM. Publishes <messages> of <bytes> each as fast as the
// publisher accepts them and reports how many arrived and how fast. <perPeerLimit> raises the
// receiver's per-peer message limit per heartbeat (default 1000, the relay's default).
//   java -cp cli/target/relay-pinner.jar bench/PubSubThroughput.java [messages] [bytes] [perPeerLimit]
import io.relaypinner.libp2p.crypto.KeyType;
import io.relaypinner.libp2p.crypto.Keys;
import io.relaypinner.libp2p.host.Host;
import io.relaypinner.libp2p.host.HostConfig;
import io.relaypinner.libp2p.netty.EventLoops;
import io.relaypinner.libp2p.pubsub.GossipsubConfig;
import io.relaypinner.libp2p.pubsub.PubSub;
import io.relaypinner.multiformats.Multiaddr;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

public final class PubSubThroughput {
  private static final String TOPIC = "/orbitdb/zdpuAkstgbTVGHQmMi5TC84auhJ8rL5qoaNEtXo2d5PHXs2To";

  public static void main(final String[] args) throws Exception {
    final int messages = args.length > 0 ? Integer.parseInt(args[0]) : 20_000;
    final int bytes = args.length > 1 ? Integer.parseInt(args[1]) : 256;
    final int limit = args.length > 2 ? Integer.parseInt(args[2]) : 1_000;
    final GossipsubConfig config = GossipsubConfig.DEFAULT.toBuilder()
        .maxMessagesPerPeerPerHeartbeat(limit).build();
    final EventLoops loops = EventLoops.create(2, "bench");
    final SecureRandom random = new SecureRandom();
    try (Host a = new Host(Keys.generate(KeyType.ED25519, random), HostConfig.builder()
            .listenAddresses(List.of(Multiaddr.parse("/ip4/127.0.0.1/tcp/0"))).build(), loops,
            Clock.systemUTC());
        Host b = new Host(Keys.generate(KeyType.ED25519, random), HostConfig.DEFAULT, loops,
            Clock.systemUTC())) {
      a.start().get(5, TimeUnit.SECONDS);
      final PubSub pa = PubSub.start(a, config, Clock.systemUTC(), random);
      final PubSub pb = PubSub.start(b, config, Clock.systemUTC(), random);
      final AtomicLong received = new AtomicLong();
      final CompletableFuture<Void> all = new CompletableFuture<>();
      pb.addMessageHandler(m -> {
        if (received.incrementAndGet() == messages) {
          all.complete(null);
        }
      });
      pa.subscribe(TOPIC).get(5, TimeUnit.SECONDS);
      pb.subscribe(TOPIC).get(5, TimeUnit.SECONDS);
      b.dial(a.listenAddresses().get(0).withPeerId(a.peerId())).get(10, TimeUnit.SECONDS);
      final long meshDeadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
      while (!pa.meshPeers(TOPIC).contains(b.peerId()) && System.nanoTime() < meshDeadline) {
        Thread.sleep(20);
      }
      final byte[] data = new byte[bytes];
      final long start = System.nanoTime();
      for (int i = 0; i < messages; i++) {
        random.nextBytes(data);
        pa.publish(TOPIC, data.clone());
      }
      try {
        all.get(60, TimeUnit.SECONDS);
      } catch (final java.util.concurrent.TimeoutException e) {
        // report what arrived
      }
      final double seconds = (System.nanoTime() - start) / 1e9;
      System.out.printf("{\"messages\":%d,\"bytes\":%d,\"perPeerLimit\":%d,\"received\":%d,"
          + "\"seconds\":%.3f,\"messagesPerSecond\":%.0f,\"drops\":%s}%n", messages, bytes,
          limit, received.get(), seconds, received.get() / seconds,
          pb.counters().entrySet().stream().filter(e -> e.getKey().startsWith("drop"))
              .map(e -> "\"" + e.getKey() + "\":" + e.getValue())
              .reduce((x, y) -> x + "," + y).map(s -> "{" + s + "}").orElse("{}"));
      pa.close();
      pb.close();
    } finally {
      loops.shutdownGracefully(Duration.ofSeconds(2));
    }
  }
}
