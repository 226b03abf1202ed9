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
 * tests assert at the end ("an honest JS client is still served: a sync, a /ipfs GET, a dial").
 * The writer is {@code interop/js/common/replication-peer.mjs alice} on {@link #STACK} (OrbitDB 4
 * on libp2p 3 / Helia 6; needs the npm projects {@code stack-b} and {@code did}, found through
 * {@link NodeJs#PROPERTY}): it dials the relay, adds files, opens an {@code events} and a
 * {@code documents} database and writes entries naming the files, with no explicit sync. The
 * relay must follow both databases, replicate every entry and pin every file the entries name
 * (it pins an entry's media only once it verified the entry), answer an explicit
 * {@code POST /pinning/sync} of each database, and serve each file from {@code /ipfs/<cid>}
 * byte for byte. Every wait is bounded, so a starved relay fails the test instead of hanging it.
 */
public final class HonestJsClient {
  /** The JS stack the writer runs on. */
  public static final String STACK = "stack-b";
  /** The writer script, relative to the stack's folder. */
  public static final String SCRIPT = "../common/replication-peer.mjs";
  /** Node start, Helia, OrbitDB and the writes; generous for a loaded 2-core machine. */
  static final Duration START = Duration.ofSeconds(90);
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final HttpClient HTTP = HttpClient.newBuilder()
      .version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(5)).build();

  private HonestJsClient() {}

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

  /**
   * The whole check: a fresh JS writer (one 64 KiB file, two entries) dials the relay and
   * writes; within {@code within} of its {@code ready} line the relay holds both databases and
   * the file; an explicit sync of each database answers 200; {@code /ipfs/<cid>} serves the file.
   */
  public static void assertServed(final RelayProcess relay, final Duration within)
      throws Exception {
    try (JsPeer writer = startWriter(relay, 1, 64 * 1024, 2)) {
      final Written written = awaitReady(writer);
      await().atMost(within).pollInterval(Duration.ofMillis(200))
          .until(() -> replicated(relay, written));
      for (final String database : written.databases()) {
        assertSyncs(relay, database);
      }
      assertFilesServed(relay, written);
    }
  }

  static String sha256(final byte[] bytes) {
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
    } catch (final NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }
}
