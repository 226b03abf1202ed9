// Benchmark: honest peers replicating OrbitDB databases through a relay while hostile peers
// attack it (relay/src/test/java/io/relaypinner/relay/hostile/HostileLoad.java, HostilePeer.java:
// the same load as HostilePeersIT, longer and measured). The relay is a separate process
// (bench/hostile.sh starts it through ./relay-pinner, as deployed); every peer is a Java peer of
// the project's own libp2p stack in this JVM, on loopback.
//   1. baseline: <honest> honest peers at once, each writing a database of <entries> entries
//      whose first links a file of <file KiB>; a reader per peer, connected only to the relay,
//      fetches every entry and the file from it. Replication time per peer: from the first
//      dial (retried when it fails, as clients do) until its reader holds everything.
//   2. hostile: <hostile> hostile peers attack (the 8 attacks in turn) for at least <attack s>;
//      after a 10 s head start the same honest round runs on new databases.
//   3. after: the attackers leave; one more honest peer with a new database (no wedge).
//   The relay's RSS (/proc/<pid>/status VmRSS) before, during (peak, sampled every second) and
//   after the attack.
//   java -cp cli/target/relay-pinner.jar:relay/target/test-classes:orbitdb/target/test-classes \
//       bench/HostileBench.java <http port> <relay pid> [honest] [hostile] [entries] [file KiB] [attack s]
import io.relaypinner.libp2p.netty.EventLoops;
import io.relaypinner.multiformats.Multiaddr;
import io.relaypinner.relay.hostile.HostileLoad;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

public final class HostileBench {
  public static void main(final String[] args) throws Exception {
    final int port = Integer.parseInt(args[0]);
    final long pid = Long.parseLong(args[1]);
    final int honest = args.length > 2 ? Integer.parseInt(args[2]) : 10;
    final int hostile = args.length > 3 ? Integer.parseInt(args[3]) : 16;
    final int entries = args.length > 4 ? Integer.parseInt(args[4]) : 20;
    final int fileKiB = args.length > 5 ? Integer.parseInt(args[5]) : 256;
    final int attackSeconds = args.length > 6 ? Integer.parseInt(args[6]) : 60;
    final Duration roundTimeout = Duration.ofMinutes(5);

    final Multiaddr relay = relayAddress(port);
    System.out.printf("relay %s (pid %d); honest %d, hostile %d, entries %d, file %d KiB,"
        + " attack >= %d s%n", relay, pid, honest, hostile, entries, fileKiB, attackSeconds);
    final EventLoops loops = EventLoops.create(2, "hostile-bench");
    try (HostileLoad load = new HostileLoad(relay, loops)) {
      // Warm-up: the relay's and our code paths compiled before anything is timed.
      load.honestRound(2, entries, fileKiB * 1024, roundTimeout);
      final long rssStart = rss(pid);
      final HostileLoad.Round baseline = load.honestRound(honest, entries, fileKiB * 1024,
          roundTimeout);
      report("baseline", baseline);
      final long rssBefore = rss(pid);

      final AtomicLong peak = new AtomicLong(rssBefore);
      final ScheduledExecutorService sampler = Executors.newSingleThreadScheduledExecutor();
      sampler.scheduleAtFixedRate(() -> peak.accumulateAndGet(rss(pid), Math::max), 0, 1,
          TimeUnit.SECONDS);
      final long attackStart = System.nanoTime();
      load.startHostile(hostile, Duration.ofMillis(100));
      Thread.sleep(10_000);
      final HostileLoad.Round underAttack = load.honestRound(honest, entries, fileKiB * 1024,
          roundTimeout);
      final long remaining = TimeUnit.SECONDS.toNanos(attackSeconds)
          - (System.nanoTime() - attackStart);
      if (remaining > 0) {
        Thread.sleep(TimeUnit.NANOSECONDS.toMillis(remaining));
      }
      final double attacked = (System.nanoTime() - attackStart) / 1e9;
      System.out.printf("attack: %.0f s, %s%n", attacked, load.attackCounters());
      load.stopHostile();
      report("under attack", underAttack);
      Thread.sleep(5_000);
      sampler.shutdownNow();
      final long rssAfter = rss(pid);

      final HostileLoad.Round after = load.honestRound(1, entries, fileKiB * 1024,
          roundTimeout);
      report("after", after);
      System.out.printf("median ratio (under attack / baseline): %.2f%n",
          underAttack.median().toMillis() / (double) Math.max(1, baseline.median().toMillis()));
      System.out.printf("relay RSS MiB: start %d, before attack %d, peak during attack %d"
          + " (growth %d), 5 s after %d%n", mib(rssStart), mib(rssBefore), mib(peak.get()),
          mib(peak.get() - rssBefore), mib(rssAfter));
      System.out.printf("every entry and file: baseline %s, under attack %s, after %s%n",
          baseline.complete(), underAttack.complete(), after.complete());
    } finally {
      loops.shutdownGracefully(Duration.ofSeconds(3));
    }
    System.exit(0);
  }

  private static void report(final String name, final HostileLoad.Round round) {
    final long complete = round.peers().stream().filter(HostileLoad.Honest::complete).count();
    System.out.printf("%-13s %d/%d peers complete, median %.1f s, max %.1f s%n", name, complete,
        round.peers().size(), round.median().toMillis() / 1000.0,
        round.max().toMillis() / 1000.0);
    round.peers().stream().filter(p -> !p.complete()).limit(3).forEach(p -> System.out.printf(
        "  incomplete: %s, %d/%d entries, file %s%n", p.database(), p.entriesReceived(),
        p.entries(), p.fileReceived()));
  }

  private static Multiaddr relayAddress(final int port) throws Exception {
    final String record = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
        URI.create("http://127.0.0.1:" + port + "/multiaddrs")).build(),
        HttpResponse.BodyHandlers.ofString()).body();
    final Matcher tcp = Pattern.compile("/ip4/127\\.0\\.0\\.1/tcp/[0-9]+/p2p/[1-9A-Za-z]+")
        .matcher(record);
    if (!tcp.find()) {
      throw new IllegalStateException("no loopback TCP address in " + record);
    }
    return Multiaddr.parse(tcp.group());
  }

  private static long rss(final long pid) {
    try {
      for (final String line : Files.readAllLines(Path.of("/proc/" + pid + "/status"))) {
        if (line.startsWith("VmRSS:")) {
          return Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
        }
      }
    } catch (final Exception e) {
      // the relay is gone: 0, which the report shows
    }
    return 0;
  }

  private static long mib(final long bytes) {
    return bytes / (1024 * 1024);
  }
}
