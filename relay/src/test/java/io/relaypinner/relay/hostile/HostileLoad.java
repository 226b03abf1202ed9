package io.relaypinner.relay.hostile;

import io.relaypinner.ipfs.bitswap.Bitswap;
import io.relaypinner.ipfs.bitswap.BitswapConfig;
import io.relaypinner.ipfs.blockstore.MemoryBlockstore;
import io.relaypinner.ipfs.dagcbor.DagCborValue;
import io.relaypinner.libp2p.crypto.KeyType;
import io.relaypinner.libp2p.crypto.Keys;
import io.relaypinner.libp2p.host.Host;
import io.relaypinner.libp2p.host.HostConfig;
import io.relaypinner.libp2p.netty.EventLoops;
import io.relaypinner.libp2p.pubsub.GossipsubConfig;
import io.relaypinner.libp2p.pubsub.PubSub;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.multiformats.Multiaddr;
import io.relaypinner.multiformats.Multicodec;
import io.relaypinner.multiformats.Multihash;
import io.relaypinner.orbitdb.JavaWriter;
import io.relaypinner.orbitdb.OrbitDbAddress;
import io.relaypinner.orbitdb.log.Entry;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The hostile-peer load, shared by {@code HostilePeersIT} (short, correctness only) and
 * {@code bench/HostileBench.java} (timings and the relay's RSS): honest peers replicate OrbitDB
 * databases through a relay while {@link HostilePeer}s attack it, all Java peers of the
 * project's own libp2p stack in this JVM, on loopback.
 *
 * <p>One honest peer is a pair: a <b>writer</b> (host, gossipsub, bitswap) writes a log of
 * {@code entries} entries (by {@link JavaWriter}, OrbitDB's format and signatures) whose first
 * entry links a file of {@code fileBytes} random bytes (a raw block, which the relay pins as
 * media), subscribes to the database's topic and announces its head there every second; a
 * <b>reader</b> (host and bitswap, connected to the relay only) walks the log from the head and
 * fetches the file, every block from the relay. The peer's replication time runs from the
 * moment writer and reader start dialling the relay (a failed dial is retried, as clients do)
 * until the reader holds every entry and the file: only the relay can give the reader anything,
 * so this is the time the relay took to let them in, replicate and serve it.
 */
public final class HostileLoad implements AutoCloseable {
  /** How long one bitswap request of the reader waits before it asks again. */
  private static final Duration WANT_TIMEOUT = Duration.ofSeconds(3);

  private final Multiaddr relay;
  private final EventLoops loops;
  /** The hostile peers' own threads: their floods must not slow the honest peers' side. */
  private final EventLoops hostileLoops = EventLoops.create(2, "hostile-peers");
  private final ExecutorService storage = Executors.newFixedThreadPool(2);
  private final ScheduledExecutorService timers = Executors.newScheduledThreadPool(2);
  private final List<AutoCloseable> toClose = new CopyOnWriteArrayList<>();
  private final List<HostilePeer> hostile = new CopyOnWriteArrayList<>();
  private final List<Cid> honestBlocks = new CopyOnWriteArrayList<>();
  private final List<String> honestDatabases = new CopyOnWriteArrayList<>();
  private final AtomicLong frames = new AtomicLong();
  private final AtomicLong streams = new AtomicLong();
  private final AtomicLong redials = new AtomicLong();
  private final AtomicLong dialRetries = new AtomicLong();
  private ScheduledFuture<?> attacking;

  /**
   * Databases that honest peers take turns writing to, as an app's users keep writing to the
   * databases they made ({@link #honestRound(int, int, int, Duration, DatabasePool)}): the relay
   * follows a fixed set, so a long run (the soak) stays inside the relay's capacity instead of
   * adding a database per peer until the heap's bound. Each database keeps its log here (the
   * blocks, about 500 B an entry; not the files), and each writer that takes its turn starts
   * with the whole log in its blockstore and appends to the last head.
   */
  public static final class DatabasePool {
    private final List<Pooled> databases = new ArrayList<>();
    private final AtomicLong turn = new AtomicLong();

    /** {@code size} databases, each with its own writer identity; made when first written. */
    public DatabasePool(final int size) {
      for (int i = 0; i < size; i++) {
        databases.add(new Pooled());
      }
    }

    public int size() {
      return databases.size();
    }

    private Pooled next() {
      return databases.get((int) (turn.getAndIncrement() % databases.size()));
    }
  }

  /** One pooled database: its writer, its log's blocks and its last head. */
  private static final class Pooled {
    private final MemoryBlockstore log = new MemoryBlockstore();
    private JavaWriter keys;
    private OrbitDbAddress address;
    private Cid head;
    private long length;
  }

  /** What one honest peer got, and how long it took. */
  public record Honest(String database, int entries, int entriesReceived, boolean fileReceived,
      Duration replication) {
    public boolean complete() {
      return entriesReceived == entries && fileReceived;
    }
  }

  /** One round of honest peers. */
  public record Round(List<Honest> peers) {
    public boolean complete() {
      return peers.stream().allMatch(Honest::complete);
    }

    public Duration median() {
      final List<Duration> times = new ArrayList<>();
      peers.forEach(p -> times.add(p.replication()));
      Collections.sort(times);
      return times.isEmpty() ? Duration.ZERO : times.get(times.size() / 2);
    }

    public Duration max() {
      return peers.stream().map(Honest::replication).max(Duration::compareTo)
          .orElse(Duration.ZERO);
    }
  }

  /**
   * @param relay the relay's TCP address with {@code /p2p/}
   * @param loops the event loops of the honest peers (the hostile ones have their own)
   */
  public HostileLoad(final Multiaddr relay, final EventLoops loops) {
    this.relay = relay;
    this.loops = loops;
  }

  /**
   * Starts {@code count} hostile peers, the attacks in turn ({@link HostilePeer.Attack} order),
   * each sending a batch every {@code period}.
   */
  public void startHostile(final int count, final Duration period) throws Exception {
    final HostilePeer.Attack[] attacks = HostilePeer.Attack.values();
    for (int i = 0; i < count; i++) {
      final HostilePeer peer = new HostilePeer(attacks[i % attacks.length], hostileLoops, relay,
          () -> honestBlocks, () -> honestDatabases, 1_000 + i, frames, streams, redials);
      hostile.add(peer);
    }
    attacking = timers.scheduleAtFixedRate(() -> {
      for (final HostilePeer peer : hostile) {
        try {
          peer.tick();
        } catch (final RuntimeException e) {
          // A closed channel under our feet: the next tick dials again.
        }
      }
    }, 0, period.toMillis(), TimeUnit.MILLISECONDS);
  }

  /** Stops and disconnects the hostile peers. */
  public void stopHostile() {
    if (attacking != null) {
      attacking.cancel(false);
      attacking = null;
    }
    for (final HostilePeer peer : hostile) {
      peer.close();
    }
    hostile.clear();
  }

  /** What the hostile peers did so far: batches written, streams opened, connections redialled. */
  public Map<String, Long> attackCounters() {
    final Map<String, Long> out = new LinkedHashMap<>();
    out.put("batches", frames.get());
    out.put("streams", streams.get());
    out.put("redials", redials.get());
    out.put("honest-dial-retries", dialRetries.get());
    return out;
  }

  /**
   * {@code peers} honest peers at once, each with a new database; returns when every reader has
   * everything or {@code timeout} has passed (then the round is incomplete).
   */
  public Round honestRound(final int peers, final int entries, final int fileBytes,
      final Duration timeout) throws Exception {
    return honestRound(peers, entries, fileBytes, timeout, null);
  }

  /**
   * {@code peers} honest peers at once, each appending {@code entries} entries (the first naming
   * a new file) to the next database of {@code pool} in turn (a new database each when
   * {@code pool} is null); returns when every reader has every new entry and the file, or
   * {@code timeout} has passed. Give a pool of at least {@code peers} databases, so no two
   * peers of a round write the same one.
   */
  public Round honestRound(final int peers, final int entries, final int fileBytes,
      final Duration timeout, final DatabasePool pool) throws Exception {
    final ExecutorService runners = Executors.newFixedThreadPool(peers);
    try {
      final List<Future<Honest>> futures = new ArrayList<>();
      for (int i = 0; i < peers; i++) {
        futures.add(runners.submit(() -> {
          final long start = System.nanoTime();
          try {
            return honest(entries, fileBytes, timeout, pool == null ? null : pool.next());
          } catch (final Exception e) {
            // Could not even connect or subscribe (the relay overloaded): an incomplete peer.
            return new Honest("(failed: " + e + ")", entries, 0, false,
                Duration.ofNanos(System.nanoTime() - start));
          }
        }));
      }
      final List<Honest> out = new ArrayList<>();
      for (final Future<Honest> future : futures) {
        out.add(future.get());
      }
      return new Round(out);
    } finally {
      runners.shutdownNow();
    }
  }

  private record Peer(Host host, Bitswap bitswap, PubSub pubsub, MemoryBlockstore blocks,
      AutoCloseable closer) {}

  /**
   * Closes an honest peer once its round is over and forgets it: a soak runs thousands of
   * rounds, and each peer's blocks (its file) kept until the end filled the load generator's
   * heap after about 40 minutes.
   */
  private void release(final Peer peer) {
    toClose.remove(peer.closer());
    try {
      peer.closer().close();
    } catch (final Exception e) {
      // closing regardless
    }
  }

  private Peer peer(final boolean pubsub, final long deadline) throws Exception {
    final Host host = new Host(Keys.generate(KeyType.ED25519, new SecureRandom()),
        HostConfig.builder().listenAddresses(List.of()).build(), loops, Clock.systemUTC());
    final List<AutoCloseable> parts = new ArrayList<>(List.of(host));
    final AutoCloseable closer = () -> {
      for (int i = parts.size() - 1; i >= 0; i--) {
        try {
          parts.get(i).close();
        } catch (final Exception e) {
          // closing everything regardless
        }
      }
    };
    toClose.add(closer);
    host.start().get(10, TimeUnit.SECONDS);
    final MemoryBlockstore blocks = new MemoryBlockstore();
    final Bitswap bitswap = Bitswap.start(host, blocks, storage, BitswapConfig.DEFAULT,
        host.clock());
    parts.add(bitswap);
    PubSub topics = null;
    if (pubsub) {
      topics = PubSub.start(host, GossipsubConfig.DEFAULT, Clock.systemUTC(), new Random());
      parts.add(topics::close);
    }
    // As a real client does: a dial that fails (the relay busy, a handshake timed out) is
    // tried again, until the round's deadline.
    while (true) {
      try {
        host.dial(relay).get(20, TimeUnit.SECONDS);
        break;
      } catch (final java.util.concurrent.ExecutionException | TimeoutException e) {
        dialRetries.incrementAndGet();
        if (System.nanoTime() > deadline) {
          throw e;
        }
      }
    }
    return new Peer(host, bitswap, topics, blocks, closer);
  }

  private Honest honest(final int entries, final int fileBytes, final Duration timeout,
      final Pooled pooled) throws Exception {
    if (pooled == null) {
      return honest(entries, fileBytes, timeout, new Pooled());
    }
    synchronized (pooled) {
      return honestTurn(entries, fileBytes, timeout, pooled);
    }
  }

  private Honest honestTurn(final int entries, final int fileBytes, final Duration timeout,
      final Pooled pooled) throws Exception {
    // Timed from before the dials: connecting under attack is part of the time.
    final long start = System.nanoTime();
    final long deadline = start + timeout.toNanos();
    final Peer writer = peer(true, deadline);
    final Peer reader = peer(false, deadline);
    if (pooled.keys == null) {
      pooled.keys = new JavaWriter();
      pooled.log.put(pooled.keys.identityCid(), pooled.keys.identityBlock());
      pooled.address = JavaWriter.database(pooled.log, "honest", List.of(pooled.keys.id()));
      honestDatabases.add(pooled.address.toString());
    }
    final JavaWriter keys = pooled.keys;
    final OrbitDbAddress address = pooled.address;
    final Cid previous = pooled.head;
    // The writer holds the whole log (identity, manifest, access controller, earlier entries).
    pooled.log.forEachKey(cid -> writer.blocks().put(cid, pooled.log.get(cid).orElseThrow()));
    final byte[] file = new byte[fileBytes];
    new SecureRandom().nextBytes(file);
    final Cid fileCid = Cid.v1(Multicodec.RAW, Multihash.sha2_256(file));
    writer.blocks().put(fileCid, file);
    final List<Entry> log = new ArrayList<>();
    for (int i = 0; i < entries; i++) {
      final List<Cid> next = i > 0 ? List.of(log.get(i - 1).cid())
          : previous == null ? List.of() : List.of(previous);
      final DagCborValue value = i == 0
          ? DagCborValue.map(Map.of("i", DagCborValue.of(i), "file", new DagCborValue.Link(fileCid)))
          : DagCborValue.map(Map.of("i", DagCborValue.of(i)));
      final Entry entry = Entry.decode(keys.entry(address, pooled.length + i + 1, next,
          List.of(), value));
      writer.blocks().put(entry.cid(), entry.block());
      pooled.log.put(entry.cid(), entry.block());
      log.add(entry);
    }
    final Entry head = log.get(entries - 1);
    pooled.head = head.cid();
    pooled.length += entries;
    honestBlocks.add(fileCid);
    honestBlocks.add(head.cid());

    writer.pubsub().subscribe(address.topic()).get(10, TimeUnit.SECONDS);
    final ScheduledFuture<?> announce = timers.scheduleAtFixedRate(
        () -> writer.pubsub().publish(address.topic(), head.block()), 0, 1, TimeUnit.SECONDS);
    final Set<Cid> got = new HashSet<>();
    boolean fileReceived = false;
    try {
      Cid wanted = head.cid();
      // The new entries only: the relay has the earlier ones since earlier turns.
      while (wanted != null && !wanted.equals(previous) && System.nanoTime() < deadline) {
        final byte[] block = want(reader, wanted);
        if (block == null) {
          continue;
        }
        final Entry entry = Entry.decode(wanted, block);
        got.add(wanted);
        wanted = entry.next().isEmpty() ? null : entry.next().get(0);
      }
      while (!fileReceived && System.nanoTime() < deadline) {
        final byte[] block = want(reader, fileCid);
        fileReceived = block != null && Arrays.equals(block, file);
      }
    } finally {
      announce.cancel(false);
    }
    final Duration took = Duration.ofNanos(System.nanoTime() - start);
    release(writer);
    release(reader);
    return new Honest(address.toString(), entries, got.size(), fileReceived, took);
  }

  private static byte[] want(final Peer reader, final Cid cid) throws Exception {
    try {
      return reader.bitswap().get(cid, WANT_TIMEOUT).get(WANT_TIMEOUT.toMillis() + 2_000,
          TimeUnit.MILLISECONDS);
    } catch (final java.util.concurrent.ExecutionException | TimeoutException e) {
      return null;
    }
  }

  @Override
  public void close() {
    stopHostile();
    for (int i = toClose.size() - 1; i >= 0; i--) {
      try {
        toClose.get(i).close();
      } catch (final Exception e) {
        // closing everything regardless
      }
    }
    timers.shutdownNow();
    storage.shutdownNow();
    hostileLoops.shutdownGracefully(Duration.ofSeconds(3));
  }
}
