package io.relaypinner.relay;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.orbitdb.OrbitDbAddress;
import io.relaypinner.orbitdb.log.OrbitDbLog;
import io.relaypinner.relay.testing.SharedStores;
import io.relaypinner.relay.testing.SharedStoresRelayMain;
import io.relaypinner.testkit.JsPeer;
import io.relaypinner.testkit.NodeJs;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Issue 24's must-show, end to end: s3proxy and PostgreSQL on loopback, three relays on them
 * (relay 1 a process of its own, so that it can be killed with SIGKILL; relays 2 and 3 in this
 * JVM). A JS writer (stack B, OrbitDB 4) connected to relay 1 adds 20 files and writes 200
 * entries naming them in two databases; once part of a log reached the shared stores (relay 3
 * heard it announced) relay 1 is killed mid-sync. Relay 2 or 3 owns every database within 10 s
 * of the kill. The writer then reconnects to the surviving relays (as a browser reconnecting to
 * the DNS name), the logs and the files complete on the shared stores, and the writer leaves. A
 * JS reader (stack C: Helia 7, gossipsub 17) connected only to relay 3 gets every entry (none of
 * the intruder's) and every file byte for byte; {@code /ipfs/<cid>} answers on every relay,
 * relay 1 restarted included.
 */
class ScaleOutJsInteropIT {
  private static final Logger LOG = LoggerFactory.getLogger(ScaleOutJsInteropIT.class);
  private static final Duration LINE = Duration.ofSeconds(120);
  private static final int FILES = 20;
  private static final int ENTRIES = 200;

  @RegisterExtension
  static final SharedStores STORES = new SharedStores("relay-scale-out");

  @TempDir
  Path dataDirs;
  private final List<AutoCloseable> toClose = new ArrayList<>();
  private final HttpClient client = HttpClient.newBuilder()
      .version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(5)).build();

  @AfterEach
  void close() throws Exception {
    for (int i = toClose.size() - 1; i >= 0; i--) {
      toClose.get(i).close();
    }
  }

  /** Relay 1 in a child JVM on the test's class path; killed with SIGKILL by the test. */
  private final class ChildRelay implements AutoCloseable {
    final Process process;
    final Path log;
    String tcp;
    int http;

    ChildRelay(final int n) throws IOException {
      log = dataDirs.resolve("relay" + n + ".log");
      final String java = ProcessHandle.current().info().command().orElse("java");
      final List<String> command = new ArrayList<>(List.of(java, "-Xmx512m", "-cp",
          System.getProperty("java.class.path"), SharedStoresRelayMain.class.getName(),
          dataDirs.resolve("relay" + n).toString(), Integer.toString(n)));
      command.addAll(STORES.relayArgs());
      process = new ProcessBuilder(command)
          .redirectErrorStream(true).redirectOutput(log.toFile()).start();
      toClose.add(this);
      await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(100)).until(() -> {
        if (!process.isAlive()) {
          throw new IllegalStateException("relay " + n + " exited: " + Files.readString(log));
        }
        for (final String line : Files.readAllLines(log)) {
          if (line.startsWith("started ")) {
            final String[] parts = line.split(" ");
            tcp = parts[1];
            http = Integer.parseInt(parts[2]);
            return true;
          }
        }
        return false;
      });
    }

    void kill() throws InterruptedException {
      process.destroyForcibly();
      assertThat(process.waitFor(10, TimeUnit.SECONDS)).isTrue();
      assertThat(process.exitValue()).isEqualTo(137);
    }

    @Override
    public void close() throws Exception {
      if (process.isAlive()) {
        process.getOutputStream().close();
        if (!process.waitFor(15, TimeUnit.SECONDS)) {
          process.destroyForcibly();
        }
      }
    }
  }

  private RelayNode inProcess(final int n) {
    final RelayNode relay = STORES.relay(dataDirs.resolve("relay" + n), n);
    toClose.add(relay);
    relay.start();
    return relay;
  }

  private static String tcp(final RelayNode relay) {
    return relay.network().host().listenAddresses().stream()
        .filter(a -> !a.toString().endsWith("/ws")).findFirst().orElseThrow()
        .withPeerId(relay.identity().peerId()).toString();
  }

  private static int logSize(final RelayNode relay, final String address) {
    return relay.replication().service().replicas().replica(OrbitDbAddress.parse(address))
        .map(r -> r.log().size()).orElse(0);
  }

  private HttpResponse<byte[]> get(final int port, final String path) throws Exception {
    return client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
        .timeout(Duration.ofSeconds(30)).build(), HttpResponse.BodyHandlers.ofByteArray());
  }

  @Test
  void threeRelays_writerOnRelay1KilledMidSync_readerOnRelay3GetsEverything() throws Exception {
    final ChildRelay one = new ChildRelay(1);
    final RelayNode two = inProcess(2);
    final RelayNode three = inProcess(3);

    final JsPeer alice = NodeJs.start("stack-b", "../common/replication-peer.mjs", "alice",
        "--listen", "--dial", one.tcp, "--files", Integer.toString(FILES), "--file-size",
        "300000", "--entries", Integer.toString(ENTRIES));
    toClose.add(alice);
    final JsonNode writing = alice.nextEvent("writing", LINE);
    final List<String> addresses = new ArrayList<>();
    writing.get("dbs").forEach(a -> addresses.add(a.asText()));

    // Mid-sync: relay 3 heard of every database and part of a log has reached the shared
    // stores (relays only take over the databases they heard of).
    await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(50)).until(() ->
        addresses.stream().allMatch(a -> two.storage().coordination().ownership().wants(a)
            && three.storage().coordination().ownership().wants(a))
        && addresses.stream().anyMatch(a -> logSize(three, a) > 0));
    final List<Integer> atKill = addresses.stream().map(a -> logSize(three, a)).toList();
    one.kill();
    final long killedAt = System.nanoTime();
    LOG.info("relay 1 killed with {} of {} entries on the shared stores", atKill, ENTRIES);

    // Another relay owns every database within 10 s of the kill.
    await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(100)).until(() ->
        addresses.stream().allMatch(a -> two.storage().coordination().ownership().owns(a)
            || three.storage().coordination().ownership().owns(a)));
    LOG.info("ownership moved in {} ms", (System.nanoTime() - killedAt) / 1_000_000);

    final JsonNode ready = alice.nextEvent("ready", LINE);
    // The writer reconnects to the surviving relays (as a browser reconnecting to the DNS name,
    // which may land on either); it leaves before the reader starts.
    for (final RelayNode relay : List.of(two, three)) {
      alice.send("dial " + tcp(relay));
      final JsonNode dialled = alice.nextJson(LINE);
      assertThat(dialled.path("event").asText()).as(dialled.toString()).isEqualTo("dialled");
    }
    final List<String> cids = new ArrayList<>();
    final List<String> hashes = new ArrayList<>();
    ready.get("files").forEach(f -> {
      cids.add(f.get("cid").asText());
      hashes.add(f.get("sha256").asText());
    });
    final List<String> open = new ArrayList<>();
    for (final JsonNode db : ready.get("dbs")) {
      open.add(db.get("address").asText() + "=" + db.get("type").asText() + "="
          + db.get("entries").asInt());
    }
    // The logs and the files complete on the shared stores; relay 3 (never the writer's relay)
    // holds every entry through the announcements. An entry whose block was not on the shared
    // stores yet when relay 3 first read it is fetched again on the log's back-off (1 s doubling
    // up to OrbitDbLog.RETRY_MAX, 2 min): under load the block can land just after a retry, so
    // the wait covers one longest back-off (CI once saw 90 of 100 at 60 s).
    try {
      await().atMost(OrbitDbLog.RETRY_MAX.plusSeconds(30)).pollInterval(Duration.ofMillis(200))
          .until(() -> {
            for (final JsonNode db : ready.get("dbs")) {
              if (logSize(three, db.get("address").asText()) < db.get("entries").asInt()) {
                return false;
              }
            }
            return cids.stream().allMatch(c -> three.storage().pins().isPinned(Cid.parse(c)));
          });
    } catch (final org.awaitility.core.ConditionTimeoutException e) {
      final StringBuilder state = new StringBuilder();
      for (final RelayNode relay : List.of(two, three)) {
        state.append("\nrelay ").append(relay == two ? 2 : 3).append(": logs ")
            .append(addresses.stream().map(a -> logSize(relay, a)).toList())
            .append(", owns ").append(addresses.stream()
                .map(a -> relay.storage().coordination().ownership().owns(a)).toList())
            .append(", pinned ").append(cids.stream()
                .filter(c -> relay.storage().pins().isPinned(Cid.parse(c))).count())
            .append(", counters ").append(relay.replication().service().counters())
            .append(", pins ok/failed/busy ")
            .append(relay.replication().service().pinQueue().pinnedCount()).append('/')
            .append(relay.replication().service().pinQueue().failedCount()).append('/')
            .append(relay.replication().service().pinQueue().busyCount());
      }
      throw new AssertionError("shared stores incomplete:" + state + "\nalice: "
          + alice.stderr(), e);
    }

    alice.close();
    // The reader is of the newest generation (stack C), the writer of stack B: one run covers both.
    final JsPeer bob = NodeJs.start("stack-c", "../common/replication-peer.mjs", "bob",
        "--dial", tcp(three), "--open", String.join(",", open), "--cat", String.join(",", cids));
    toClose.add(bob);
    final JsonNode done;
    try {
      done = bob.nextEvent("done", LINE);
    } catch (final IllegalStateException e) {
      throw new AssertionError("reader stuck; relay 3: connections "
          + three.network().host().connectionCount() + ", bitswap "
          + three.content().bitswap().stats() + ", replication "
          + three.replication().service().counters(), e);
    }
    int total = 0;
    for (final JsonNode db : done.get("dbs")) {
      assertThat(db.get("intruder").asBoolean()).as("intruder entry reached Bob").isFalse();
      total += db.get("entries").asInt();
    }
    assertThat(total).isEqualTo(ENTRIES);
    final List<String> bobHashes = new ArrayList<>();
    done.get("files").forEach(f -> bobHashes.add(f.get("sha256").asText()));
    assertThat(bobHashes).isEqualTo(hashes);

    // /ipfs/<cid> on every relay, relay 1 restarted on its data directory included.
    final ChildRelay restarted = new ChildRelay(1);
    final List<Integer> ports = List.of(restarted.http, two.http().port().getAsInt(),
        three.http().port().getAsInt());
    final MessageDigest sha256 = MessageDigest.getInstance("SHA-256");
    for (final int port : ports) {
      for (int i = 0; i < cids.size(); i += 7) {
        final HttpResponse<byte[]> response = get(port, "/ipfs/" + cids.get(i));
        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(HexFormat.of().formatHex(sha256.digest(response.body())))
            .isEqualTo(hashes.get(i));
      }
    }
  }
}
