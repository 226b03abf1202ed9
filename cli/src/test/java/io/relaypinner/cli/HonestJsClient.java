package io.relaypinner.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.relaypinner.testkit.JsPeer;
import io.relaypinner.testkit.NodeJs;
import java.io.IOException;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;

/**
 * An honest OrbitDB user of a {@link RelayProcess}, with a real JS peer: what issue 36's attack
 * tests assert after each attack ("an honest JS client is still served: a sync, a /ipfs GET, a
 * dial"), through {@link HonestClient#assertServed(RelayProcess, HonestJsClient)}.
 *
 * <p>An instance is one JS peer, {@code interop/js/common/replication-peer.mjs honest} on
 * {@link #STACK} (OrbitDB 4 on libp2p 3 / Helia 6; needs the npm projects {@code stack-b} and
 * {@code did}, found through {@link NodeJs#PROPERTY}), started at its first
 * {@link #assertServed} and kept for later rounds against any relay: Node, Helia and OrbitDB
 * cost 5 to 15 s to start on a loaded 2-core machine, a round 1 to 2 s. The attack tests share
 * {@link #shared() one per test JVM}, started while the first of them starts its relay. Each round is fresh where it matters: the peer closes its
 * previous round's database (a relay sees one topic of this peer's), hangs up on the relay and
 * dials it again, adds a new file, opens a new {@code events} database and writes one entry
 * naming the file, with no explicit sync. The relay must admit and follow the
 * new database, replicate the entry and pin the file (it pins an entry's media only once it
 * verified the entry), answer an explicit {@code POST /pinning/sync} of the database, and serve
 * the file from {@code /ipfs/<cid>} byte for byte.
 *
 * <p>The static methods drive {@code replication-peer.mjs alice}, the writer of tests that need
 * more files or entries ({@link #startWriter}). Every wait is bounded, so a starved relay fails
 * the test instead of hanging it.
 */
public final class HonestJsClient implements AutoCloseable {
  /** The JS stack the writer runs on. */
  public static final String STACK = "stack-b";
  /** The writer script, relative to the stack's folder. */
  public static final String SCRIPT = "../common/replication-peer.mjs";
  /** Node start, Helia, OrbitDB and the writes; generous for a loaded 2-core machine. */
  static final Duration START = Duration.ofSeconds(90);
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final HttpClient HTTP = HttpClient.newBuilder()
      .version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(5)).build();
  /** A round's file: one block (raw leaves of 256 KiB), so its CID is a raw CIDv1. */
  private static final int ROUND_FILE_BYTES = 64 * 1024;
  /**
   * From the peer's {@code checked} line to the relay holding the round's entry and file. The
   * relay syncs a database it just admitted at once; 30 s is for a loaded 2-core machine.
   */
  static final Duration ROUND = Duration.ofSeconds(30);

  private static HonestJsClient shared;

  private JsPeer peer;
  private boolean ready;
  private int rounds;

  /** A client whose JS peer starts at the first {@link #assertServed}; close it when done. */
  public HonestJsClient() {}

  /**
   * The client the attack tests of this JVM share: its peer starts once, not once per class, at
   * the first call (so it boots while the caller starts its relay). Nobody closes it; its peer
   * stops when the JVM ends (its standard input closes then).
   */
  public static synchronized HonestJsClient shared() {
    if (shared == null) {
      shared = new HonestJsClient();
      shared.startPeer();
    }
    return shared;
  }

  /** Starts the JS peer (no relay yet: each round dials its own); its {@code ready} comes later. */
  private synchronized void startPeer() {
    peer = NodeJs.start(STACK, SCRIPT, "honest");
    ready = false;
  }

  /**
   * One round against {@code relay} (see the class): a fresh dial, a new database with one entry
   * naming a new file; within {@link #ROUND} the relay holds both, an explicit sync answers 200,
   * and {@code /ipfs/<cid>} serves the file.
   */
  public synchronized void assertServed(final RelayProcess relay) throws Exception {
    final long started = System.nanoTime();
    long peerStart = 0;
    if (peer != null && !peer.isAlive()) {
      System.out.println("HonestJsClient: the peer ended, starting another; its stderr:\n"
          + peer.stderr());
      peer.close();
      peer = null;
    }
    if (peer == null) {
      startPeer();
    }
    if (!ready) {
      next("ready");
      ready = true;
      peerStart = System.nanoTime() - started;
    }
    peer.send("check " + relay.tcpMultiaddr() + " " + ROUND_FILE_BYTES);
    final JsonNode checked = next("checked");
    final String database = checked.get("address").asText();
    final JsonNode file = checked.get("file");
    final Written written = new Written(null, List.of(database), List.of(new File(
        file.get("cid").asText(), file.get("sha256").asText(), file.get("bytes").asInt())));
    await().atMost(ROUND).pollInterval(Duration.ofMillis(100))
        .until(() -> replicated(relay, written));
    assertSyncs(relay, database);
    assertFilesServed(relay, written);
    // What the rounds cost the test command: one line each in the test's output.
    System.out.printf("HonestJsClient: round %d %d ms (waited for the peer's start %d ms, "
        + "checked after %d ms)%n",
        ++rounds, (System.nanoTime() - started) / 1_000_000, peerStart / 1_000_000,
        checked.path("ms").asLong());
  }

  /** The peer's next {@code event} line; its {@code error} line fails the test. */
  private JsonNode next(final String event) {
    while (true) {
      final JsonNode line = peer.nextJson(START);
      final String name = line.path("event").asText();
      if (name.equals("error")) {
        throw new AssertionError("honest JS client: " + line.path("message").asText()
            + "; stderr:\n" + peer.stderr());
      }
      if (name.equals(event)) {
        return line;
      }
    }
  }

  /** Stops the JS peer (it leaves its relays), if it started. */
  @Override
  public synchronized void close() {
    if (peer != null) {
      peer.close();
      peer = null;
    }
  }

  /** One file the writer added: its CID (CIDv1 as the JS peer prints it), digest and size. */
  public record File(String cid, String sha256, int bytes) {}

  /** What a writer wrote: its PeerId, its databases' addresses and its files. */
  public record Written(String peerId, List<String> databases, List<File> files) {}

  /**
   * Starts a writer dialling {@code relay}: {@code files} files of {@code fileSize} random bytes
   * and {@code entries} entries split over its two databases, entry {@code i} naming file
   * {@code i % files}. Close it when done (it leaves the relay then).
   */
  public static JsPeer startWriter(final RelayProcess relay, final int files, final int fileSize,
      final int entries) {
    return NodeJs.start(STACK, SCRIPT, "alice", "--dial", relay.tcpMultiaddr(),
        "--files", Integer.toString(files), "--file-size", Integer.toString(fileSize),
        "--entries", Integer.toString(entries));
  }

  /**
   * The writer's {@code ready} line (once the relay subscribed to its topics, or after 30 s):
   * what it wrote.
   */
  public static Written awaitReady(final JsPeer writer) {
    final JsonNode ready = writer.nextEvent("ready", START);
    final List<String> databases = new ArrayList<>();
    ready.get("dbs").forEach(db -> databases.add(db.get("address").asText()));
    final List<File> files = new ArrayList<>();
    ready.get("files").forEach(f -> files.add(new File(f.get("cid").asText(),
        f.get("sha256").asText(), f.get("bytes").asInt())));
    return new Written(ready.get("peerId").asText(), databases, files);
  }

  /**
   * Whether the relay holds what {@code written} wrote: every file pinned as media (so every
   * entry naming one is replicated and verified) and every database in its sync history.
   */
  public static boolean replicated(final RelayProcess relay, final Written written)
      throws IOException, InterruptedException {
    return replicated(relay, written.databases(),
        written.files().stream().map(File::cid).toList());
  }

  /**
   * Whether the relay has every media CID of {@code cids} pinned (spelled as the JS peer prints
   * them) and every database of {@code databases} in its sync history.
   */
  public static boolean replicated(final RelayProcess relay, final List<String> databases,
      final List<String> cids) throws IOException, InterruptedException {
    if (!pinnedMedia(relay).containsAll(cids)) {
      return false;
    }
    for (final String database : databases) {
      if (relay.get("/pinning/databases?address="
          + URLEncoder.encode(database, StandardCharsets.UTF_8)).statusCode() != 200) {
        return false;
      }
    }
    return true;
  }

  /** {@code pinnedMediaCids} of {@code /pinning/stats}. */
  public static List<String> pinnedMedia(final RelayProcess relay)
      throws IOException, InterruptedException {
    final HttpResponse<String> stats = relay.get("/pinning/stats");
    assertThat(stats.statusCode()).as("GET /pinning/stats").isEqualTo(200);
    final List<String> out = new ArrayList<>();
    JSON.readTree(stats.body()).get("pinnedMediaCids").forEach(c -> out.add(c.asText()));
    return out;
  }

  /** {@code GET /ipfs/<cid>} of each file answers 200 with its bytes. */
  public static void assertFilesServed(final RelayProcess relay, final Written written)
      throws IOException, InterruptedException {
    for (final File file : written.files()) {
      final HttpResponse<byte[]> response = relay.getBytes("/ipfs/" + file.cid());
      assertThat(response.statusCode()).as("GET /ipfs/" + file.cid()).isEqualTo(200);
      assertThat(response.body()).hasSize(file.bytes());
      assertThat(sha256(response.body())).as("bytes of /ipfs/" + file.cid())
          .isEqualTo(file.sha256());
    }
  }

  /** {@code POST /pinning/sync} of {@code database} answers 200 {@code ok}. */
  public static void assertSyncs(final RelayProcess relay, final String database)
      throws IOException, InterruptedException {
    final HttpResponse<String> response = HTTP.send(HttpRequest.newBuilder(
            relay.url("/pinning/sync")).header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString(
            JSON.createObjectNode().put("dbAddress", database).toString()))
        .timeout(Duration.ofSeconds(60)).build(), HttpResponse.BodyHandlers.ofString());
    assertThat(response.statusCode()).as("POST /pinning/sync %s: %s", database, response.body())
        .isEqualTo(200);
    assertThat(JSON.readTree(response.body()).get("ok").asBoolean()).isTrue();
  }

  static String sha256(final byte[] bytes) {
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
    } catch (final NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }
}
