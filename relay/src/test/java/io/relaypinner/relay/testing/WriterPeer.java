package io.relaypinner.relay.testing;

import io.relaypinner.ipfs.bitswap.Bitswap;
import io.relaypinner.ipfs.bitswap.BitswapConfig;
import io.relaypinner.ipfs.blockstore.Blockstore;
import io.relaypinner.ipfs.blockstore.MemoryBlockstore;
import io.relaypinner.ipfs.dagcbor.DagCborValue;
import io.relaypinner.ipfs.unixfs.UnixFsImporter;
import io.relaypinner.libp2p.crypto.KeyType;
import io.relaypinner.libp2p.crypto.Keys;
import io.relaypinner.libp2p.crypto.PublicKey;
import io.relaypinner.libp2p.host.Host;
import io.relaypinner.libp2p.host.HostConfig;
import io.relaypinner.libp2p.netty.EventLoops;
import io.relaypinner.libp2p.protocol.identify.IdentifyConfig;
import io.relaypinner.libp2p.protocol.identify.IdentifyLocal;
import io.relaypinner.libp2p.protocol.identify.IdentifyProtocol;
import io.relaypinner.libp2p.pubsub.GossipsubConfig;
import io.relaypinner.libp2p.pubsub.PubSub;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.multiformats.Multiaddr;
import io.relaypinner.multiformats.Multibase;
import io.relaypinner.multiformats.Multihash;
import io.relaypinner.multiformats.PeerId;
import io.relaypinner.orbitdb.JavaWriter;
import io.relaypinner.orbitdb.OrbitDbAddress;
import io.relaypinner.orbitdb.log.Entry;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
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

/**
 * A Java OrbitDB writer on libp2p for relay tests: one events database whose entries each name a
 * media file ({@code imageCid}), its blocks served over bitswap (some withheld until
 * {@link #release}), its head published on the database's topic.
 */
public final class WriterPeer implements AutoCloseable {
  private static final UnixFsImporter.Options MEDIA_CHUNKS =
      new UnixFsImporter.Options(65_536, 174);

  private final EventLoops loops = EventLoops.create(1, "writer-peer");
  private final ExecutorService storage = Executors.newSingleThreadExecutor();
  private final GatedStore blocks = new GatedStore();
  private final JavaWriter keys = new JavaWriter();
  private final Random random = new Random(24);
  private final Host host;
  private final Bitswap bitswap;
  private final PubSub pubsub;
  private final OrbitDbAddress address;
  private final List<Entry> log = new ArrayList<>();
  private final List<Cid> media = new ArrayList<>();
  private final List<byte[]> mediaBytes = new ArrayList<>();

  public WriterPeer(final String name) throws Exception {
    host = new Host(Keys.generate(KeyType.ED25519, new SecureRandom()),
        HostConfig.builder().listenAddresses(List.of()).build(), loops, Clock.systemUTC());
    host.start().get(5, TimeUnit.SECONDS);
    bitswap = Bitswap.start(host, blocks, storage, BitswapConfig.DEFAULT, host.clock());
    pubsub = PubSub.start(host, GossipsubConfig.DEFAULT, Clock.systemUTC(), new Random());
    blocks.put(keys.identityCid(), keys.identityBlock());
    address = JavaWriter.database(blocks, name, List.of(keys.id()));
  }

  public OrbitDbAddress address() {
    return address;
  }

  public PeerId peerId() {
    return host.peerId();
  }

  /** Every entry written, oldest first. */
  public List<Entry> log() {
    return List.copyOf(log);
  }

  /** Every media root written, in entry order. */
  public List<Cid> media() {
    return List.copyOf(media);
  }

  /** The bytes of the media file of entry {@code i}. */
  public byte[] mediaBytes(final int i) {
    return mediaBytes.get(i).clone();
  }

  /**
   * Appends {@code count} entries, each naming a new media file of {@code mediaBytes} bytes;
   * with {@code withhold}, the new entries but the newest and all their media blocks are
   * withheld until {@link #release}.
   */
  public void write(final int count, final int mediaSize, final boolean withhold) {
    for (int i = 0; i < count; i++) {
      final byte[] file = new byte[mediaSize];
      random.nextBytes(file);
      final MemoryBlockstore mediaBlocks = new MemoryBlockstore();
      final Cid root = new UnixFsImporter(mediaBlocks, MEDIA_CHUNKS).importBytes(file);
      mediaBlocks.forEachKey(cid -> {
        if (withhold) {
          blocks.withheld.add(cid.multihash());
        }
        blocks.put(cid, mediaBlocks.get(cid).orElseThrow());
      });
      final int n = log.size();
      final List<Cid> next = n == 0 ? List.of() : List.of(log.get(n - 1).cid());
      final byte[] block = keys.entry(address, n + 1, next, List.of(), DagCborValue.map(Map.of(
          "i", DagCborValue.of(n),
          "imageCid", DagCborValue.of(root.toString(Multibase.Base.BASE32)))));
      final Entry entry = Entry.decode(block);
      blocks.put(entry.cid(), block);
      if (withhold && i < count - 1) {
        blocks.withheld.add(entry.cid().multihash());
      }
      log.add(entry);
      media.add(root);
      mediaBytes.add(file);
    }
  }

  /** Serves every block from now on. */
  public void release() {
    blocks.withheld.clear();
  }

  /** Blocks served over bitswap so far. */
  public int served() {
    return blocks.served.size();
  }

  public void dial(final Multiaddr relay) throws Exception {
    host.dial(relay).get(10, TimeUnit.SECONDS);
  }

  /**
   * From now on, identify requests of other peers get no answer until the returned action runs
   * (then each gets ours): a peer connected to us that has not identified us yet, as a relay is
   * for a moment after a writer connected, longer on a busy machine.
   */
  public Runnable holdIdentify() {
    final PublicKey publicKey = host.identity().publicKey();
    final IdentifyProtocol identify = new IdentifyProtocol(new IdentifyLocal() {
      @Override
      public PublicKey publicKey() {
        return publicKey;
      }

      @Override
      public String agentVersion() {
        return "writer-peer/1";
      }

      @Override
      public List<Multiaddr> listenAddrs() {
        return host.listenAddresses();
      }

      @Override
      public List<String> protocols() {
        return host.protocols().protocols();
      }
    }, IdentifyConfig.DEFAULT);
    final CompletableFuture<Void> released = new CompletableFuture<>();
    host.protocols().register(IdentifyProtocol.PROTOCOL_ID, (stream, protocol) ->
        released.thenRun(() -> stream.eventLoop().execute(() -> {
          if (stream.isActive()) {
            identify.installResponder(stream, null);
          }
        })));
    return () -> released.complete(null);
  }

  public void subscribe() throws Exception {
    pubsub.subscribe(address.topic()).get(5, TimeUnit.SECONDS);
  }

  /** Publishes the newest entry on the database's topic (as OrbitDB does after a write). */
  public void publishHead() {
    pubsub.publish(address.topic(), log.get(log.size() - 1).block());
  }

  @Override
  public void close() {
    pubsub.close();
    bitswap.close();
    host.close();
    storage.shutdownNow();
    loops.shutdownGracefully(Duration.ofSeconds(3));
  }

  /** The writer's blocks, some withheld, and which were served. */
  private static final class GatedStore implements Blockstore {
    final MemoryBlockstore inner = new MemoryBlockstore();
    final Set<Multihash> withheld = ConcurrentHashMap.newKeySet();
    final Set<Multihash> served = ConcurrentHashMap.newKeySet();

    @Override
    public boolean has(final Cid cid) {
      return !withheld.contains(cid.multihash()) && inner.has(cid);
    }

    @Override
    public Optional<byte[]> get(final Cid cid) {
      if (withheld.contains(cid.multihash())) {
        return Optional.empty();
      }
      final Optional<byte[]> data = inner.get(cid);
      data.ifPresent(d -> served.add(cid.multihash()));
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
}
