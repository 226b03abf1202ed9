package io.relaypinner.relay.storage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.relaypinner.ipfs.bitswap.Bitswap;
import io.relaypinner.ipfs.bitswap.BitswapConfig;
import io.relaypinner.ipfs.blockstore.Blocks;
import io.relaypinner.ipfs.blockstore.Blockstore;
import io.relaypinner.ipfs.blockstore.FlatFsBlockstore;
import io.relaypinner.ipfs.blockstore.MemoryBlockstore;
import io.relaypinner.ipfs.dagcbor.DagCbor;
import io.relaypinner.ipfs.dagcbor.DagCborValue;
import io.relaypinner.ipfs.datastore.MvStoreDatastore;
import io.relaypinner.ipfs.pin.CodecLinkResolver;
import io.relaypinner.ipfs.pin.DagWalker;
import io.relaypinner.ipfs.pin.PinResult;
import io.relaypinner.ipfs.pin.PinStore;
import io.relaypinner.ipfs.unixfs.UnixFsImporter;
import io.relaypinner.libp2p.crypto.KeyType;
import io.relaypinner.libp2p.crypto.Keys;
import io.relaypinner.libp2p.host.Host;
import io.relaypinner.libp2p.host.HostConfig;
import io.relaypinner.libp2p.netty.EventLoops;
import io.relaypinner.libp2p.pubsub.GossipsubConfig;
import io.relaypinner.libp2p.pubsub.PubSub;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.multiformats.Multiaddr;
import io.relaypinner.multiformats.Multibase;
import io.relaypinner.multiformats.Multihash;
import io.relaypinner.orbitdb.JavaWriter;
import io.relaypinner.orbitdb.OrbitDbAddress;
import io.relaypinner.orbitdb.log.Entry;
import io.relaypinner.relay.sync.SyncHistory;
import io.relaypinner.relay.testing.TestPins;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code kill -9} of a relay (a child JVM, {@link RelayChildMain}) while it replicates a database
 * whose entries link media, from a Java writer over libp2p: once during the sync (the writer
 * still withholds half the log and all media) and once during the media pins. Restarted on the
 * same data directory each time, the relay resumes and completes; afterwards every stored block
 * hashes to its CID, every pin's DAG is complete, the heads name the newest entry and the sync
 * history lists the database.
 */
class RelayKillIT {
  private static final int ENTRIES = 12;
  private static final UnixFsImporter.Options MEDIA_CHUNKS = new UnixFsImporter.Options(65_536, 174);
  private static final int MEDIA_BYTES = 150_000;

  private final HttpClient client = HttpClient.newBuilder()
      .version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(5)).build();
  private final EventLoops loops = EventLoops.create(2, "relay-kill-it");
  private final ExecutorService storage = Executors.newSingleThreadExecutor();
  private final List<AutoCloseable> toClose = new ArrayList<>();
  private Child child;

  @AfterEach
  void close() throws Exception {
    if (child != null) {
      child.process().destroyForcibly().waitFor(10, TimeUnit.SECONDS);
    }
    for (int i = toClose.size() - 1; i >= 0; i--) {
      toClose.get(i).close();
    }
    storage.shutdownNow();
    loops.shutdownGracefully(Duration.ofSeconds(3));
  }

  /** The relay process, its HTTP port and libp2p address, and its last output lines. */
  private record Child(Process process, int httpPort, Multiaddr address, Deque<String> output) {
    static Child start(final Path dataDir, final String seed) throws Exception {
      final Path java = Path.of(System.getProperty("java.home"), "bin", "java");
      // Start-up flags of a short-lived JVM: this test restarts the relay three times.
      final Process process = new ProcessBuilder(java.toString(), "-Xmx256m",
          "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xshare:auto", "-cp",
          System.getProperty("java.class.path"), RelayChildMain.class.getName(),
          dataDir.toString(), seed).redirectErrorStream(true).start();
      final Deque<String> output = new ArrayDeque<>();
      final CompletableFuture<String> ready = new CompletableFuture<>();
      final Thread reader = new Thread(() -> {
        try (BufferedReader in = new BufferedReader(new InputStreamReader(
            process.getInputStream(), StandardCharsets.UTF_8))) {
          for (String line; (line = in.readLine()) != null; ) {
            if (line.startsWith("READY ")) {
              ready.complete(line);
            }
            synchronized (output) {
              output.addLast(line);
              if (output.size() > 200) {
                output.removeFirst();
              }
            }
          }
        } catch (final IOException e) {
          // The process died: what it printed is kept.
        }
        ready.completeExceptionally(new IllegalStateException("relay exited: " + output));
      }, "relay-child-output");
      reader.setDaemon(true);
      reader.start();
      final String[] line = ready.get(30, TimeUnit.SECONDS).split(" ");
      return new Child(process, Integer.parseInt(line[1]), Multiaddr.parse(line[2]), output);
    }

    void kill() throws InterruptedException {
      process.destroyForcibly();   // SIGKILL
      assertThat(process.waitFor(10, TimeUnit.SECONDS)).isTrue();
    }
  }

  /** The writer's blocks, of which some are withheld, and which ones it served. */
  private static final class GatedStore implements Blockstore {
    final MemoryBlockstore inner = new MemoryBlockstore();
    final Set<Multihash> withheld = ConcurrentHashMap.newKeySet();
    final Set<Multihash> entries = ConcurrentHashMap.newKeySet();
    final Set<Multihash> media = ConcurrentHashMap.newKeySet();
    final Set<Multihash> servedEntries = ConcurrentHashMap.newKeySet();
    final Set<Multihash> servedMedia = ConcurrentHashMap.newKeySet();

    @Override
    public boolean has(final Cid cid) {
      return !withheld.contains(cid.multihash()) && inner.has(cid);
    }

    @Override
    public Optional<byte[]> get(final Cid cid) {
      final Multihash mh = cid.multihash();
      if (withheld.contains(mh)) {
        return Optional.empty();
      }
      final Optional<byte[]> data = inner.get(cid);
      if (data.isPresent()) {
        if (entries.contains(mh)) {
          servedEntries.add(mh);
        } else if (media.contains(mh)) {
          servedMedia.add(mh);
        }
      }
      return data;
    }

    @Override
    public Optional<Integer> size(final Cid cid) {
      return has(cid) ? inner.size(cid) : Optional.empty();
    }

    @Override
    public void put(final Cid cid, final byte[] data) {
      inner.put(cid, data);
    }

    @Override
    public boolean delete(final Cid cid) {
      return inner.delete(cid);
    }

    @Override
    public void forEachKey(final Consumer<Cid> visitor) {
      inner.forEachKey(visitor);
    }
  }

  private record Writer(Host host, PubSub pubsub, GatedStore blocks) {
    void connect(final Child relay) throws Exception {
      host.dial(relay.address()).get(10, TimeUnit.SECONDS);
    }
  }

  private Writer writer() throws Exception {
    final Host host = new Host(Keys.generate(KeyType.ED25519, new SecureRandom()),
        HostConfig.builder().listenAddresses(List.of()).build(), loops, Clock.systemUTC());
    host.start().get(5, TimeUnit.SECONDS);
    toClose.add(host);
    final GatedStore blocks = new GatedStore();
    toClose.add(Bitswap.start(host, blocks, storage, BitswapConfig.DEFAULT, host.clock()));
    final PubSub pubsub = PubSub.start(host, GossipsubConfig.DEFAULT, Clock.systemUTC(),
        new Random());
    toClose.add(pubsub::close);
    return new Writer(host, pubsub, blocks);
  }

  private int sync(final Child relay, final OrbitDbAddress address) throws Exception {
    return client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + relay.httpPort()
            + "/pinning/sync")).header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString("{\"dbAddress\":\"" + address + "\"}"))
        .timeout(Duration.ofSeconds(30)).build(), HttpResponse.BodyHandlers.discarding())
        .statusCode();
  }

  /** An explicit sync (it follows the database and starts at once), not waited for. */
  private void syncSoon(final Child relay, final OrbitDbAddress address) {
    client.sendAsync(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + relay.httpPort()
            + "/pinning/sync")).header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString("{\"dbAddress\":\"" + address + "\"}"))
        .timeout(Duration.ofSeconds(30)).build(), HttpResponse.BodyHandlers.discarding());
  }

  private int getIpfs(final Child relay, final Cid cid) throws Exception {
    return client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + relay.httpPort()
            + "/ipfs/" + cid)).timeout(Duration.ofSeconds(10)).build(),
        HttpResponse.BodyHandlers.discarding()).statusCode();
  }

  private long phaseStart = System.nanoTime();

  private void phase(final String name) {
    final long now = System.nanoTime();
    System.out.println("RelayKillIT: " + name + ": " + (now - phaseStart) / 1_000_000 + " ms");
    phaseStart = now;
  }

  /** Awaits {@code condition}; on timeout fails with what the relay printed last. */
  private void until(final Duration limit, final java.util.concurrent.Callable<Boolean> condition) {
    try {
      await().atMost(limit).pollInterval(Duration.ofMillis(200)).until(condition);
    } catch (final org.awaitility.core.ConditionTimeoutException e) {
      final String output;
      synchronized (child.output()) {
        output = String.join("\n", child.output());
      }
      throw new AssertionError(e.getMessage() + "\nrelay output:\n" + output, e);
    }
  }

  @Test
  void killNine_duringSyncAndDuringMediaPins_leavesNoCorruptBlock_andReplicationCompletes(
      @TempDir final Path dataDir) throws Exception {
    final byte[] seed = new byte[32];
    new SecureRandom().nextBytes(seed);
    final String seedHex = HexFormat.of().formatHex(seed);
    final Writer writer = writer();
    final GatedStore store = writer.blocks();
    final JavaWriter keys = new JavaWriter();
    store.put(keys.identityCid(), keys.identityBlock());
    final OrbitDbAddress address = JavaWriter.database(store, "kill-nine", List.of(keys.id()));
    final Random random = new Random(9);
    final List<Cid> mediaRoots = new ArrayList<>();
    final List<Entry> log = new ArrayList<>();
    for (int i = 0; i < ENTRIES; i++) {
      final byte[] file = new byte[MEDIA_BYTES];
      random.nextBytes(file);
      final MemoryBlockstore mediaBlocks = new MemoryBlockstore();
      final Cid media = new UnixFsImporter(mediaBlocks, MEDIA_CHUNKS).importBytes(file);
      mediaBlocks.forEachKey(cid -> {
        store.media.add(cid.multihash());
        store.put(cid, mediaBlocks.get(cid).orElseThrow());
      });
      mediaRoots.add(media);
      final List<Cid> next = i == 0 ? List.of() : List.of(log.get(i - 1).cid());
      final byte[] block = keys.entry(address, i + 1, next, List.of(), DagCborValue.map(Map.of(
          "i", DagCborValue.of(i),
          "imageCid", DagCborValue.of(media.toString(Multibase.Base.BASE32)))));
      final Entry entry = Entry.decode(block);
      store.put(entry.cid(), block);
      store.entries.add(entry.cid().multihash());
      log.add(entry);
    }
    final Entry head = log.get(ENTRIES - 1);
    // Phase 1: the older half of the log and every media block are withheld.
    for (int i = 0; i < ENTRIES / 2; i++) {
      store.withheld.add(log.get(i).cid().multihash());
    }
    store.withheld.addAll(store.media);

    phase("writer ready");
    child = Child.start(dataDir, seedHex);
    phase("relay started");
    writer.connect(child);
    writer.pubsub().subscribe(address.topic()).get(5, TimeUnit.SECONDS);
    syncSoon(child, address);
    until(Duration.ofSeconds(20), () -> {
      writer.pubsub().publish(address.topic(), head.block());
      // The head comes by pubsub, the rest of the newer half over bitswap.
      return store.servedEntries.size() >= ENTRIES / 2 - 1;
    });
    phase("phase 1 (sync) until kill");
    child.kill();   // during the sync: half the log stored, the rest and the media wanted

    // Phase 2: everything is served; killed again once a third of the media went out.
    store.withheld.clear();
    final int mediaBefore = store.servedMedia.size();
    child = Child.start(dataDir, seedHex);
    writer.connect(child);
    syncSoon(child, address);
    until(Duration.ofSeconds(20), () -> {
      writer.pubsub().publish(address.topic(), head.block());
      return store.servedMedia.size() - mediaBefore >= store.media.size() / 3;
    });
    phase("phase 2 (media pins) until kill");
    child.kill();   // during the media pins

    // Phase 3: the relay resumes and completes: the sync answers 200, every media file is pinned.
    child = Child.start(dataDir, seedHex);
    writer.connect(child);
    final Child relay = child;
    until(Duration.ofSeconds(30), () -> {
      writer.pubsub().publish(address.topic(), head.block());
      if (sync(relay, address) != 200) {
        return false;
      }
      for (final Cid media : mediaRoots) {
        if (getIpfs(relay, media) != 200) {
          return false;
        }
      }
      return true;
    });
    phase("phase 3 until complete");
    child.kill();
    child = null;

    // The stores as the relay left them.
    try (FlatFsBlockstore blocks = new FlatFsBlockstore(dataDir.resolve("blocks"), true);
        MvStoreDatastore datastore = new MvStoreDatastore(dataDir.resolve("datastore.mv"))) {
      final List<Cid> keysStored = new ArrayList<>();
      blocks.forEachKey(keysStored::add);
      for (final Cid cid : keysStored) {
        // verify-on-read re-hashes; Blocks.verify says it once more, by the book.
        Blocks.verify(cid, blocks.get(cid).orElseThrow());
      }
      final PinStore pins = new PinStore(datastore, blocks, CodecLinkResolver.standard());
      final List<Cid> roots = pins.list();
      for (final Cid root : roots) {
        assertThat(pins.pin(root, TestPins.HOLDER)).as("pinned DAG of " + root + " complete")
            .isInstanceOf(PinResult.Pinned.class);
      }
      for (final Entry entry : log) {
        assertThat(pins.isPinned(entry.cid())).as("entry pinned").isTrue();
      }
      for (final Cid media : mediaRoots) {
        assertThat(pins.isPinned(media)).as("media pinned").isTrue();
        assertThat(new DagWalker(blocks, CodecLinkResolver.standard(), 100)
            .walk(List.of(media)).complete()).isTrue();
      }
      final String logKey = "/orbitdb/logs/"
          + address.manifest().toString(Multibase.Base.BASE58BTC) + "/heads";
      final byte[] heads = datastore.get(logKey).orElseThrow();
      final List<String> headCids = new ArrayList<>();
      DagCbor.decode(heads).asList().items().forEach(v -> headCids.add(v.asText()));
      assertThat(headCids).containsExactly(head.cid().toString(Multibase.Base.BASE58BTC));
      final List<String> history = new ArrayList<>();
      datastore.scan(SyncHistory.KEY_PREFIX).forEach(e -> history.add(e.key()));
      assertThat(history).anyMatch(k -> k.endsWith(address.manifest().toString(
          Multibase.Base.BASE58BTC)));
    }
  }
}
