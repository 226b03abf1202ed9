package io.relaypinner.orbitdb;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.relaypinner.ipfs.bitswap.Bitswap;
import io.relaypinner.ipfs.bitswap.BitswapConfig;
import io.relaypinner.ipfs.blockstore.MemoryBlockstore;
import io.relaypinner.ipfs.dagcbor.DagCborValue;
import io.relaypinner.ipfs.datastore.MemoryDatastore;
import io.relaypinner.libp2p.crypto.KeyType;
import io.relaypinner.libp2p.crypto.Keys;
import io.relaypinner.libp2p.crypto.Secp256k1PrivateKey;
import io.relaypinner.libp2p.host.Connection;
import io.relaypinner.libp2p.host.Host;
import io.relaypinner.libp2p.host.HostConfig;
import io.relaypinner.libp2p.netty.EventLoops;
import io.relaypinner.libp2p.pubsub.GossipsubConfig;
import io.relaypinner.libp2p.pubsub.PubSub;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.multiformats.Multiaddr;
import io.relaypinner.orbitdb.heads.HeadsConfig;
import io.relaypinner.orbitdb.heads.HeadsExchangeResult;
import io.relaypinner.orbitdb.identity.Identities;
import io.relaypinner.orbitdb.identity.IdentityVerifiers;
import io.relaypinner.orbitdb.log.Entry;
import io.relaypinner.orbitdb.log.LogConfig;
import io.relaypinner.testkit.JsPeer;
import io.relaypinner.testkit.NodeJs;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The Java read-and-verify path against real OrbitDB peers (interop/js/common/orbitdb-peer.mjs):
 * OrbitDB 3.0.2 on js-libp2p 2 (stack A) and OrbitDB 4.0.0 on js-libp2p 3 (stack B). The JS peer
 * writes 100 entries to each of an {@code events}, a {@code documents} and a {@code keyvalue}
 * database (publickey identity), an {@code events} database with a did:key identity and a
 * {@code keyvalue} database under an {@code orbitdb} access controller; the Java host, given
 * only the addresses and a connection, replicates and verifies every entry over the real heads
 * exchange, as listener (JS dials it after seeing its gossipsub subscription) and as dialer, and
 * joins live entries from gossipsub. OrbitDB 3 and 4 in turn join two heads Java sends in one
 * exchange (Java-written forks of a database whose controller allows {@code '*'}). Entries
 * crafted to be forged, signed by a key that is not the identity's, or written by an identity the
 * controller does not list arrive over gossipsub and are rejected and counted.
 *
 * <p>Blocks (manifests, controllers, identities, entries) come from the JS peer over bitswap
 * ({@link Bitswap#fetch}: checked against their CID, stored only by the log after verification);
 * the JS peer's block dump is only the expected answer.
 */
class OrbitDbJsInteropIT {
  private static final Duration LINE = Duration.ofSeconds(90);
  private static final Duration WAIT = Duration.ofSeconds(60);
  private static final int ENTRIES = 100;
  private static final ObjectMapper JSON = new ObjectMapper();

  private final EventLoops loops = EventLoops.create(2, "orbitdb-interop");
  private final ExecutorService executor = Executors.newFixedThreadPool(2);
  private final List<AutoCloseable> toClose = new ArrayList<>();

  @AfterEach
  void close() throws Exception {
    for (int i = toClose.size() - 1; i >= 0; i--) {
      toClose.get(i).close();
    }
    loops.shutdownGracefully(Duration.ofSeconds(3));
    executor.shutdownNow();
  }

  private Host host() throws Exception {
    final Host host = new Host(Keys.generate(KeyType.ED25519, new SecureRandom()),
        HostConfig.builder().listenAddresses(List.of(Multiaddr.parse("/ip4/127.0.0.1/tcp/0")))
            .agentVersion("relay-pinner/orbitdb-interop").build(), loops, Clock.systemUTC());
    toClose.add(host);
    host.start().get(10, TimeUnit.SECONDS);
    return host;
  }

  /**
   * Replicas whose blocks come over bitswap on {@code host} ({@link Bitswap#fetch}: not stored
   * until the log verified them), and whose store bitswap serves, as in the relay.
   */
  private ReplicasNode replicas(final Host host) {
    final MemoryBlockstore store = new MemoryBlockstore();
    final Bitswap bitswap = Bitswap.start(host, store, executor, BitswapConfig.DEFAULT,
        host.clock());
    toClose.add(bitswap);
    final BlockFetcher fetcher = cid -> bitswap.fetch(cid, Duration.ofSeconds(30));
    return new ReplicasNode(new ReplicaContext(store, new MemoryDatastore(), fetcher,
        new Identities(store, fetcher, IdentityVerifiers.defaults(), executor, 1000), executor,
        LogConfig.DEFAULT), HeadsConfig.DEFAULT);
  }

  @ParameterizedTest
  @ValueSource(strings = {"stack-a", "stack-b", "stack-c"})
  void replicate_shouldVerifyEveryJsEntry_overHeadsExchangeAndPubsub(final String stack)
      throws Exception {
    final JsPeer js = NodeJs.start(stack, "../common/orbitdb-peer.mjs", "--listen",
        "--entries", String.valueOf(ENTRIES));
    toClose.add(js);
    final JsonNode ready = js.nextEvent("ready", LINE);
    final JsDump dump = JsDump.parse(ready);
    final Multiaddr jsAddress = Multiaddr.parse(ready.get("addrs").get(0).asText());
    final List<JsDump.Db> dbs = dump.dbs();
    assertThat(dbs).hasSize(7);

    // Listener role: subscribe, connect; OrbitDB sees the subscription and dials our heads
    // protocol for each database.
    final Host listener = host();
    final ReplicasNode replicas = replicas(listener);
    replicas.register(listener.protocols());
    final PubSub pubsub = PubSub.start(listener, GossipsubConfig.DEFAULT, Clock.systemUTC(),
        new SecureRandom());
    toClose.add(pubsub);
    pubsub.addMessageHandler(message -> replicas.onPubsubMessage(message.topic(),
        message.data()));
    // Connected first: following a database fetches its manifest (and controller) over bitswap.
    listener.dial(jsAddress).get(15, TimeUnit.SECONDS);
    for (final JsDump.Db db : dbs) {
      replicas.follow(db.address()).get(30, TimeUnit.SECONDS);
      pubsub.subscribe(db.address().topic()).get(10, TimeUnit.SECONDS);
    }
    for (final JsDump.Db db : dbs) {
      final OrbitDbReplica replica = replicas.replica(db.address()).orElseThrow();
      await().atMost(WAIT).until(() -> replica.log().size() == db.entries().size());
      assertSameEntries(db, replica);
    }
    assertThat(replicas.headsProtocol().counters().getOrDefault("streams-inbound", 0L))
        .isGreaterThanOrEqualTo(dbs.size());
    assertThat(replicas.headsProtocol().counters()).doesNotContainKeys("closed-malformed",
        "closed-oversized", "closed-timeout");
    assertThat(totalRejected(replicas)).isZero();
    assertThat(entryCount(dbs)).isEqualTo(6 * ENTRIES + 1);
    final OrbitDbReplica oac = replicas.replica(dump.db("keyvalue-oac").address()).orElseThrow();
    assertThat(oac.accessController().type()).isEqualTo("orbitdb");
    assertThat(oac.accessControllerDatabase().orElseThrow().address())
        .isEqualTo(dump.db("keyvalue-oac/access").address());
    assertThat(oac.accessController().canWrite(dump.db("events-did").identityId())).isTrue();

    // Live entries arrive over gossipsub (the message data is the entry block).
    final JsDump.Db events = dump.db("events-pk");
    final OrbitDbReplica eventsReplica = replicas.replica(events.address()).orElseThrow();
    js.nextEvent("peer", LINE);
    await().atMost(WAIT).until(() -> pubsub.meshPeers(events.address().topic()).size() == 1);
    send(js, "write events-pk 5");
    final JsonNode written = js.nextEvent("written", LINE);
    assertThat(written.get("hashes")).hasSize(5);
    await().atMost(WAIT).until(() -> eventsReplica.log().size() == ENTRIES + 5);
    for (final JsonNode hash : written.get("hashes")) {
      assertThat(eventsReplica.log().contains(Cid.parse(hash.asText()))).isTrue();
    }

    // Attacks over gossipsub: the intruder's entry (an identity the controller does not list,
    // made by OrbitDB itself), a forged payload, and a valid signature by a key that is not the
    // identity's.
    final byte[] real = dump.block(events.entries().get(3).get("hash").asText());
    publish(js, events, dump.intruderBlock());
    publish(js, events, Crafting.forgedPayload(real));
    publish(js, events, Crafting.signedByOtherKey(real,
        Secp256k1PrivateKey.generate(new SecureRandom())));
    await().atMost(WAIT).until(() -> eventsReplica.log().counters().keySet().containsAll(
        List.of("rejected.unauthorized_writer", "rejected.forged_signature",
            "rejected.key_identity_mismatch")));
    assertThat(eventsReplica.log().size()).isEqualTo(ENTRIES + 5);

    // Java sends two heads to OrbitDB in one exchange (the case where js-libp2p 3 merges frames
    // that arrive early): two Java-written forks of the '*' database, on top of the JS head.
    // OrbitDB 3 keeps only the decoded head (not its bytes) and reads the entry block back from
    // its blockstore, i.e. over bitswap from us: the replica's store is what bitswap serves.
    {
      final JsDump.Db open = dump.db("events-open");
      final OrbitDbReplica openReplica = replicas.replica(open.address()).orElseThrow();
      final JavaWriter writer = new JavaWriter();
      final Cid jsHead = Cid.parse(open.heads().get(0));
      final byte[] forkA = writer.entry(open.address(), ENTRIES + 1, List.of(jsHead), List.of(),
          DagCborValue.of("fork a"));
      final byte[] forkB = writer.entry(open.address(), ENTRIES + 1, List.of(jsHead), List.of(),
          DagCborValue.of("fork b"));
      send(js, "put-block " + Base64.getEncoder().encodeToString(writer.identityBlock()));
      js.nextEvent("stored", LINE);
      ((MemoryBlockstore) replicas.replicas().context().blockstore()).put(writer.identityCid(),
          writer.identityBlock());
      assertThat(openReplica.joinBlock(forkA).get(30, TimeUnit.SECONDS).added()).hasSize(1);
      assertThat(openReplica.joinBlock(forkB).get(30, TimeUnit.SECONDS).added()).hasSize(1);
      assertThat(openReplica.log().heads()).hasSize(2);
      final Connection toJs = listener.connection(PeerIdOf.of(ready)).orElseThrow();
      final HeadsExchangeResult sentTwo = replicas.exchangeHeads(toJs, open.address())
          .get(30, TimeUnit.SECONDS);
      assertThat(sentTwo.completed()).isTrue();
      assertThat(sentTwo.sent()).isEqualTo(2);
      await().atMost(WAIT).until(() -> {
        send(js, "count events-open");
        return js.nextEvent("count", LINE).get("entries").asInt() == ENTRIES + 2;
      });
    }

    // Dialer role: a second Java host that does not subscribe dials the heads protocol itself.
    final Host dialer = host();
    final ReplicasNode second = replicas(dialer);
    final Connection connection = dialer.dial(jsAddress).get(15, TimeUnit.SECONDS);
    for (final JsDump.Db db : dbs) {
      final OrbitDbReplica replica = second.follow(db.address()).get(30, TimeUnit.SECONDS);
      final HeadsExchangeResult result = second.exchangeHeads(connection, db.address())
          .get(30, TimeUnit.SECONDS);
      assertThat(result.completed()).isTrue();
      assertThat(result.received()).isPositive();
      final int expected = switch (db.name()) {
        case "events-pk" -> ENTRIES + 5;
        case "events-open" -> ENTRIES + 2;
        default -> db.entries().size();
      };
      await().atMost(WAIT).until(() -> replica.log().size() == expected);
    }
    assertThat(totalRejected(second)).isZero();
  }

  /** The JS peer's id from its ready line. */
  private static final class PeerIdOf {
    static io.relaypinner.multiformats.PeerId of(final JsonNode ready) {
      return io.relaypinner.multiformats.PeerId.parse(ready.get("peerId").asText());
    }
  }

  private static void send(final JsPeer js, final String line) throws Exception {
    js.send(line);
  }

  private static void publish(final JsPeer js, final JsDump.Db db, final byte[] block)
      throws Exception {
    send(js, "publish " + db.address().topic() + " " + Base64.getEncoder().encodeToString(
        block));
    js.nextEvent("published", LINE);
  }

  private static int entryCount(final List<JsDump.Db> dbs) {
    return dbs.stream().mapToInt(d -> d.entries().size()).sum();
  }

  private static long totalRejected(final ReplicasNode replicas) {
    long total = 0;
    for (final OrbitDbReplica replica : replicas.replicas().replicas()) {
      for (final Map.Entry<String, Long> e : replica.log().counters().entrySet()) {
        if (e.getKey().startsWith("rejected.")) {
          total += e.getValue();
        }
      }
    }
    return total;
  }

  /** Same hashes in the same log order, same clocks, keys, identities and payloads as JS. */
  private static void assertSameEntries(final JsDump.Db db, final OrbitDbReplica replica) {
    final List<Entry> entries = replica.log().entries();
    assertThat(entries).hasSize(db.entries().size());
    for (int i = 0; i < entries.size(); i++) {
      final Entry entry = entries.get(i);
      final JsonNode js = db.entries().get(i);
      assertThat(entry.hash()).as(db.name() + " entry " + i).isEqualTo(js.get("hash").asText());
      assertThat(entry.clockTime()).isEqualTo(js.get("clock").get("time").asLong());
      assertThat(entry.clockId()).isEqualTo(js.get("clock").get("id").asText());
      assertThat(entry.key()).isEqualTo(js.get("key").asText());
      assertThat(entry.identity().toString(io.relaypinner.multiformats.Multibase.Base.BASE58BTC))
          .isEqualTo(js.get("identity").asText());
      assertThat(toJson(entry.payload())).isEqualTo(js.get("payload"));
    }
  }

  /** The JSON JS prints for a payload (these payloads hold no bytes, links or floats). */
  static JsonNode toJson(final DagCborValue value) {
    final JsonNodeFactory f = JSON.getNodeFactory();
    return switch (value.kind()) {
      case NULL -> f.nullNode();
      case BOOLEAN -> f.booleanNode(value.asBoolean());
      case INTEGER -> value.asLong() == (int) value.asLong() ? f.numberNode((int) value.asLong())
          : f.numberNode(value.asLong());
      case FLOAT -> f.numberNode(value.asDouble());
      case STRING -> f.textNode(value.asText());
      case LIST -> {
        final ArrayNode array = f.arrayNode();
        value.asList().items().forEach(item -> array.add(toJson(item)));
        yield array;
      }
      case MAP -> {
        final ObjectNode object = f.objectNode();
        value.asMap().entries().forEach((k, v) -> object.set(k, toJson(v)));
        yield object;
      }
      default -> f.textNode(value.toString());
    };
  }
}
