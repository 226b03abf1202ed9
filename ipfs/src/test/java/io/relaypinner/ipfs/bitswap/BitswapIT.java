package io.relaypinner.ipfs.bitswap;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.relaypinner.ipfs.bitswap.pb.BitswapProtos.Message;
import io.relaypinner.ipfs.blockstore.Blockstore;
import io.relaypinner.ipfs.blockstore.MemoryBlockstore;
import io.relaypinner.ipfs.datastore.MemoryDatastore;
import io.relaypinner.ipfs.pin.CodecLinkResolver;
import io.relaypinner.ipfs.pin.DagLimitExceededException;
import io.relaypinner.ipfs.pin.PinHolder;
import io.relaypinner.ipfs.pin.PinResult;
import io.relaypinner.ipfs.pin.PinStore;
import io.relaypinner.ipfs.unixfs.UnixFsImporter;
import io.relaypinner.ipfs.unixfs.UnixFsReader;
import io.relaypinner.libp2p.crypto.KeyType;
import io.relaypinner.libp2p.crypto.Keys;
import io.relaypinner.libp2p.host.Connection;
import io.relaypinner.libp2p.host.Host;
import io.relaypinner.libp2p.host.HostConfig;
import io.relaypinner.libp2p.host.LimitCounters.Limit;
import io.relaypinner.libp2p.mux.yamux.YamuxStreamChannel;
import io.relaypinner.libp2p.host.Stream;
import io.relaypinner.libp2p.netty.EventLoops;
import io.relaypinner.libp2p.netty.UvarintFrameDecoder;
import io.relaypinner.libp2p.netty.UvarintFrameEncoder;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.multiformats.Multiaddr;
import io.relaypinner.multiformats.Multicodec;
import io.relaypinner.multiformats.Multihash;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Java bitswap nodes on 127.0.0.1 over TCP, Noise and yamux. */
class BitswapIT {
  private static final PinHolder HOLDER = PinHolder.of("test", "holder");
  private static final Duration WAIT = Duration.ofSeconds(20);
  private final SecureRandom random = new SecureRandom();
  private final EventLoops loops = EventLoops.create(3, "bitswap-it");
  private final ExecutorService storage = Executors.newFixedThreadPool(4);
  private final List<Host> hosts = new CopyOnWriteArrayList<>();
  private final List<Bitswap> nodes = new CopyOnWriteArrayList<>();

  private record Node(Host host, Bitswap bitswap, MemoryBlockstore blocks) {}

  @AfterEach
  void close() {
    nodes.forEach(Bitswap::close);
    hosts.forEach(Host::close);
    storage.shutdownNow();
    loops.shutdownGracefully(Duration.ofSeconds(3));
  }

  private Node node(final BitswapConfig config) throws Exception {
    final Host host = new Host(Keys.generate(KeyType.ED25519, random), HostConfig.builder()
        .listenAddresses(List.of(Multiaddr.parse("/ip4/127.0.0.1/tcp/0")))
        .agentVersion("relay-pinner/test").build(), loops, Clock.systemUTC());
    hosts.add(host);
    host.start().get(5, TimeUnit.SECONDS);
    final MemoryBlockstore blocks = new MemoryBlockstore();
    final Bitswap bitswap = Bitswap.start(host, blocks, storage, config, host.clock());
    nodes.add(bitswap);
    return new Node(host, bitswap, blocks);
  }

  private Node node() throws Exception {
    return node(BitswapConfig.DEFAULT);
  }

  private static void connect(final Node from, final Node to) throws Exception {
    from.host().dial(to.host().listenAddresses().get(0).withPeerId(to.host().peerId()))
        .get(10, TimeUnit.SECONDS);
    await().atMost(WAIT).until(() -> from.bitswap().peers().get().contains(to.host().peerId())
        && to.bitswap().peers().get().contains(from.host().peerId()));
  }

  private static Cid raw(final byte[] data) {
    return Cid.v1(Multicodec.RAW, Multihash.sha2_256(data));
  }

  @Test
  void networkPin_shouldFetchAndPinTheWholeFile_whenOnlyThePeerHasIt() throws Exception {
    final Node server = node();
    final Node client = node();
    final byte[] content = new byte[3 * 1024 * 1024 + 12_345];
    new Random(1).nextBytes(content);
    final Cid root = new UnixFsImporter(server.blocks(), UnixFsImporter.Options.IMPORTER)
        .importBytes(content);
    connect(client, server);
    final PinStore pins = new PinStore(new MemoryDatastore(), client.blocks(),
        CodecLinkResolver.standard());

    final PinResult.Pinned pinned = new NetworkPinner(client.bitswap(), pins,
        CodecLinkResolver.standard(), storage)
        .pin(root, HOLDER, new NetworkPinner.Limits(16, 1_000, 64L << 20, Duration.ofSeconds(60)))
        .get(60, TimeUnit.SECONDS);

    assertThat(pinned.root()).isEqualTo(root);
    assertThat(pins.isPinned(root)).isTrue();
    assertThat(new UnixFsReader(client.blocks()).open(root).readAllBytes()).isEqualTo(content);
    final BitswapStats received = client.bitswap().stats();
    assertThat(received.blocksReceived()).isEqualTo(pinned.blocks());
    assertThat(received.unwantedBlocks()).isZero();
    // At least: a want re-sent to a peer silent for 5 s (a very slow machine) may be served twice.
    assertThat(server.bitswap().stats().blocksSent()).isGreaterThanOrEqualTo(pinned.blocks());
    assertThat(server.bitswap().stats().bytesSent())
        .isGreaterThanOrEqualTo(received.bytesReceived());
    await().atMost(WAIT).until(() -> server.bitswap().stats().wantlistEntries() == 0);

    // Pinning again fetches nothing: every block is known.
    new NetworkPinner(client.bitswap(), pins, CodecLinkResolver.standard(), storage)
        .pin(root, HOLDER, NetworkPinner.Limits.DEFAULT).get(30, TimeUnit.SECONDS);
    assertThat(client.bitswap().stats().blocksReceived()).isEqualTo(pinned.blocks());
  }

  @Test
  void networkPin_shouldFailAndPinNothing_whenDagExceedsBlockCap() throws Exception {
    final Node server = node();
    final Node client = node();
    final byte[] content = new byte[2 * 1024 * 1024];
    new Random(2).nextBytes(content);
    final Cid root = new UnixFsImporter(server.blocks(), UnixFsImporter.Options.IMPORTER)
        .importBytes(content);
    connect(client, server);
    final PinStore pins = new PinStore(new MemoryDatastore(), client.blocks(),
        CodecLinkResolver.standard());

    final CompletableFuture<PinResult.Pinned> pin = new NetworkPinner(client.bitswap(), pins,
        CodecLinkResolver.standard(), storage)
        .pin(root, HOLDER, new NetworkPinner.Limits(4, 3, 64L << 20, Duration.ofSeconds(30)));

    assertThatThrownBy(() -> pin.get(30, TimeUnit.SECONDS))
        .hasCauseInstanceOf(DagLimitExceededException.class);
    assertThat(pins.isPinned(root)).isFalse();
  }

  /** A pool of {@code room} bytes that remembers the most it lent at once. */
  private static final class TestMeter implements NetworkPinner.ByteMeter {
    private final long room;
    private final long perBlock;
    private long taken;
    private long peak;

    TestMeter(final long room, final long perBlock) {
      this.room = room;
      this.perBlock = perBlock;
    }

    @Override
    public synchronized boolean tryTake(final long bytes) {
      if (taken + bytes > room) {
        return false;
      }
      take(bytes);
      return true;
    }

    @Override
    public synchronized void take(final long bytes) {
      taken += bytes;
      peak = Math.max(peak, taken);
    }

    @Override
    public synchronized void give(final long bytes) {
      taken -= bytes;
    }

    @Override
    public long perBlock() {
      return perBlock;
    }

    synchronized long taken() {
      return taken;
    }

    synchronized long peak() {
      return peak;
    }
  }

  @Test
  void fetch_shouldDrawItsBlocksInFlightFromTheMeter_andGiveAllBack_orBeRefusedAtOnce()
      throws Exception {
    final Node server = node();
    final Node client = node();
    final byte[] content = new byte[3 * 1024 * 1024];
    new Random(4).nextBytes(content);
    final Cid root = new UnixFsImporter(server.blocks(), UnixFsImporter.Options.IMPORTER)
        .importBytes(content);
    connect(client, server);
    final NetworkPinner pinner = new NetworkPinner(client.bitswap(), new PinStore(
        new MemoryDatastore(), client.blocks(), CodecLinkResolver.standard()),
        CodecLinkResolver.standard(), storage);
    final NetworkPinner.Limits limits =
        new NetworkPinner.Limits(16, 1_000, 64L << 20, Duration.ofSeconds(60));

    // The walk holds what it fetched until it ends, and room for each block in flight: with
    // room for the file and two more blocks it waits for its own blocks, never passes the room.
    final long room = content.length + 700 * 1024;
    final TestMeter two = new TestMeter(room, 300 * 1024);
    pinner.fetch(root, limits, two).get(60, TimeUnit.SECONDS);
    assertThat(new UnixFsReader(client.blocks()).open(root).readAllBytes()).isEqualTo(content);
    assertThat(two.peak()).isLessThanOrEqualTo(room).isGreaterThan(content.length);
    assertThat(two.taken()).isZero();

    // No room for one block and nothing in flight: refused before anything is asked.
    final Node other = node();
    connect(other, server);
    final TestMeter none = new TestMeter(100, 300 * 1024);
    final CompletableFuture<NetworkPinner.Fetched> refused = new NetworkPinner(other.bitswap(),
        new PinStore(new MemoryDatastore(), other.blocks(), CodecLinkResolver.standard()),
        CodecLinkResolver.standard(), storage).fetch(root, limits, none);
    assertThatThrownBy(() -> refused.get(10, TimeUnit.SECONDS))
        .hasCauseInstanceOf(FetchRefusedException.class);
    assertThat(none.taken()).isZero();
    assertThat(other.blocks().has(root)).isFalse();
  }

  @Test
  void fetch_shouldReturnTheBlockWithoutStoringIt_andGetShouldStoreIt() throws Exception {
    final Node server = node();
    final Node client = node();
    final byte[] first = "fetched, not stored".getBytes(StandardCharsets.UTF_8);
    final byte[] second = "fetched, then stored".getBytes(StandardCharsets.UTF_8);
    server.blocks().put(raw(first), first);
    server.blocks().put(raw(second), second);
    connect(client, server);

    assertThat(client.bitswap().fetch(raw(first), WAIT).get(30, TimeUnit.SECONDS))
        .isEqualTo(first);
    assertThat(client.blocks().has(raw(first))).isFalse();

    final CompletableFuture<byte[]> fetch = client.bitswap().fetch(raw(second), WAIT);
    final CompletableFuture<byte[]> get = client.bitswap().get(raw(second), WAIT);
    assertThat(fetch.get(30, TimeUnit.SECONDS)).isEqualTo(second);
    assertThat(get.get(30, TimeUnit.SECONDS)).isEqualTo(second);
    await().atMost(Duration.ofSeconds(10)).until(() -> client.blocks().has(raw(second)));
  }

  @Test
  void get_shouldShareOneWant_whenCalledConcurrentlyForTheSameCid() throws Exception {
    final Node server = node();
    final Node client = node();
    final byte[] data = "shared want".getBytes(StandardCharsets.UTF_8);
    final Cid cid = raw(data);
    server.blocks().put(cid, data);
    connect(client, server);

    final List<CompletableFuture<byte[]>> gets = List.of(
        client.bitswap().get(cid, WAIT), client.bitswap().get(cid, WAIT),
        client.bitswap().get(cid, WAIT));

    for (final CompletableFuture<byte[]> get : gets) {
      assertThat(get.get(30, TimeUnit.SECONDS)).isEqualTo(data);
    }
    assertThat(client.bitswap().stats().blocksReceived()).isEqualTo(1);
    assertThat(client.bitswap().stats().clientWants()).isZero();
    assertThat(client.blocks().has(cid)).isTrue();
  }

  @Test
  void get_shouldTimeOut_whenNoPeerHasTheBlock() throws Exception {
    final Node server = node();
    final Node client = node();
    connect(client, server);
    final Cid cid = raw("nobody has this".getBytes(StandardCharsets.UTF_8));

    final CompletableFuture<byte[]> get = client.bitswap().get(cid, Duration.ofMillis(500));

    assertThatThrownBy(() -> get.get(30, TimeUnit.SECONDS))
        .isInstanceOf(ExecutionException.class).hasCauseInstanceOf(TimeoutException.class);
    await().atMost(WAIT).until(() -> client.bitswap().stats().clientWants() == 0);
    await().atMost(WAIT).until(() -> server.bitswap().stats().dontHaveSent() > 0);
  }

  @Test
  void server_shouldSendTheBlockLater_whenItArrivesAfterTheWant() throws Exception {
    final Node server = node();
    final Node client = node();
    connect(client, server);
    final byte[] data = "arrives later".getBytes(StandardCharsets.UTF_8);
    final Cid cid = raw(data);

    final CompletableFuture<byte[]> get = client.bitswap().get(cid, WAIT);
    await().atMost(WAIT).until(() -> server.bitswap().stats().dontHaveSent() > 0
        && server.bitswap().stats().wantlistEntries() == 1);
    server.blocks().put(cid, data);
    server.bitswap().blockAdded(cid);

    assertThat(get.get(30, TimeUnit.SECONDS)).isEqualTo(data);
  }

  @Test
  void get_shouldAskANewPeer_whenItConnectsWhileTheWantIsOpen() throws Exception {
    final Node client = node();
    final Node empty = node();
    connect(client, empty);
    final byte[] data = "late provider".getBytes(StandardCharsets.UTF_8);
    final Cid cid = raw(data);
    final CompletableFuture<byte[]> get = client.bitswap().get(cid, WAIT);
    await().atMost(WAIT).until(() -> empty.bitswap().stats().dontHaveSent() > 0);

    final Node provider = node();
    provider.blocks().put(cid, data);
    connect(client, provider);

    assertThat(get.get(30, TimeUnit.SECONDS)).isEqualTo(data);
  }

  @Test
  void inbound_shouldCloseTheStreamAndCount_whenMessageExceedsTheCap() throws Exception {
    final Node server = node(BitswapConfig.builder().maxMessageSize(64 * 1024).build());
    final Node client = node();
    connect(client, server);
    final Connection connection = client.host().connection(server.host().peerId()).orElseThrow();

    final Stream stream = connection.newStream(List.of(BitswapProtocol.BITSWAP_1_2),
        (channel, protocol) -> channel.pipeline().addLast(UvarintFrameEncoder.INSTANCE))
        .get(10, TimeUnit.SECONDS);
    final Channel channel = stream.channel();
    channel.writeAndFlush(Unpooled.wrappedBuffer(new byte[64 * 1024 + 1]));

    await().atMost(WAIT).until(() -> !channel.isActive());
    assertThat(server.bitswap().stats().rejected()).containsEntry("too-large", 1L);
    assertThat(connection.isOpen()).isTrue();
  }

  @Test
  void inbound_shouldRefuseBitswapStreamsBeyondTheDefaultLimit_andKeepServing() throws Exception {
    final Node server = node();
    final Node client = node();
    final byte[] data = "still served".getBytes(StandardCharsets.UTF_8);
    final Cid cid = raw(data);
    server.blocks().put(cid, data);
    connect(client, server);
    final Connection connection = client.host().connection(server.host().peerId()).orElseThrow();
    final List<Channel> held = new ArrayList<>();
    // The client's bitswap may hold one stream of its own to the server.
    for (int i = 0; i < 33; i++) {
      held.add(connection.newStream(List.of(BitswapProtocol.BITSWAP_1_2),
          (channel, protocol) -> channel.pipeline().addLast(UvarintFrameEncoder.INSTANCE))
          .get(10, TimeUnit.SECONDS).channel());
    }

    // 32 bitswap streams per connection (the default protocol limits); more are reset.
    await().atMost(WAIT).until(() -> server.host().limitCounters()
        .get(Limit.MAX_PROTOCOL_STREAMS) >= 1);
    assertThat(held.stream().filter(Channel::isActive).count()).isBetween(31L, 32L);
    assertThat(connection.isOpen()).isTrue();

    // Streams freed, the client's own bitswap stream is taken and the block served.
    for (final Channel channel : held) {
      ((YamuxStreamChannel) channel).reset();
    }
    assertThat(client.bitswap().get(cid, WAIT).get(20, TimeUnit.SECONDS)).isEqualTo(data);
  }

  @Test
  void inbound_shouldCloseTheStreamAndCount_whenMessageIsGarbage() throws Exception {
    final Node server = node();
    final Node client = node();
    connect(client, server);
    final Connection connection = client.host().connection(server.host().peerId()).orElseThrow();

    final Stream stream = connection.newStream(List.of(BitswapProtocol.BITSWAP_1_2),
        (channel, protocol) -> channel.pipeline().addLast(UvarintFrameEncoder.INSTANCE))
        .get(10, TimeUnit.SECONDS);
    stream.channel().writeAndFlush(Unpooled.wrappedBuffer(new byte[] {(byte) 0xff, 1, 2, 3}));

    await().atMost(WAIT).until(() -> !stream.channel().isActive());
    assertThat(server.bitswap().stats().rejected()).containsEntry("malformed", 1L);
  }

  @Test
  void server_shouldKeepServingAnotherPeer_whenOnePeerWantsManyMissingBlocks() throws Exception {
    final Node server = node(BitswapConfig.builder().maxWantsPerPeer(1_000).build());
    final Node greedy = node();
    final Node normal = node();
    connect(greedy, server);
    connect(normal, server);
    final byte[] content = new byte[1024 * 1024];
    new Random(3).nextBytes(content);
    final Cid root = new UnixFsImporter(server.blocks(), UnixFsImporter.Options.IMPORTER)
        .importBytes(content);
    // The greedy peer asks for 5,000 blocks nobody has: its ledger is capped at 1,000.
    final Connection connection = greedy.host().connection(server.host().peerId())
        .orElseThrow();
    final BitswapFrameCodec codec = new BitswapFrameCodec(BitswapConfig.DEFAULT);
    final Stream stream = connection.newStream(List.of(BitswapProtocol.BITSWAP_1_2),
        (channel, protocol) -> channel.pipeline().addLast(UvarintFrameEncoder.INSTANCE))
        .get(10, TimeUnit.SECONDS);
    for (int batch = 0; batch < 5; batch++) {
      final List<BitswapFrame.Want> wants = new ArrayList<>();
      for (int i = 0; i < 1_000; i++) {
        wants.add(BitswapFrame.Want.block(raw(("missing " + batch + "/" + i)
            .getBytes(StandardCharsets.UTF_8)), true));
      }
      stream.channel().writeAndFlush(Unpooled.wrappedBuffer(codec.encode(
          new BitswapFrame(wants, false, List.of(), List.of(), 0),
          BitswapProtocol.Version.V1_2)));
    }
    await().atMost(WAIT).until(() -> server.bitswap().stats().wantlistEntries() == 1_000);

    final PinStore pins = new PinStore(new MemoryDatastore(), normal.blocks(),
        CodecLinkResolver.standard());
    new NetworkPinner(normal.bitswap(), pins, CodecLinkResolver.standard(), storage)
        .pin(root, HOLDER, NetworkPinner.Limits.DEFAULT).get(60, TimeUnit.SECONDS);

    assertThat(new UnixFsReader(normal.blocks()).open(root).readAllBytes()).isEqualTo(content);
    assertThat(server.bitswap().stats().rejected()).containsEntry("wantlist-full", 4L);
    assertThat(server.bitswap().wantlistSizes().get(10, TimeUnit.SECONDS))
        .containsEntry(greedy.host().peerId(), 1_000);
  }

  /** Opens a raw bitswap stream from {@code from} to {@code to} that writes framed bytes. */
  private static Stream rawStream(final Node from, final Node to, final String protocol)
      throws Exception {
    final Connection connection = from.host().connection(to.host().peerId()).orElseThrow();
    return connection.newStream(List.of(protocol),
        (channel, negotiated) -> channel.pipeline().addLast(UvarintFrameEncoder.INSTANCE))
        .get(10, TimeUnit.SECONDS);
  }

  private static void send(final Stream stream, final BitswapFrame frame,
      final BitswapProtocol.Version version) throws Exception {
    stream.channel().writeAndFlush(Unpooled.wrappedBuffer(
        new BitswapFrameCodec(BitswapConfig.DEFAULT).encode(frame, version))).sync();
  }

  @Test
  void ledger_shouldDropCancelledWants_andReplaceOnFullWantlist() throws Exception {
    final Node server = node();
    final Node client = node();
    connect(client, server);
    final Stream stream = rawStream(client, server, BitswapProtocol.BITSWAP_1_2);
    final List<BitswapFrame.Want> wants = new ArrayList<>();
    for (int i = 0; i < 10; i++) {
      wants.add(BitswapFrame.Want.block(raw(("want " + i).getBytes(StandardCharsets.UTF_8)),
          false));
    }

    send(stream, new BitswapFrame(wants, false, List.of(), List.of(), 0),
        BitswapProtocol.Version.V1_2);
    await().atMost(WAIT).until(() -> server.bitswap().stats().wantlistEntries() == 10);
    send(stream, new BitswapFrame(List.of(BitswapFrame.Want.cancel(wants.get(0).cid()),
        BitswapFrame.Want.cancel(wants.get(1).cid())), false, List.of(), List.of(), 0),
        BitswapProtocol.Version.V1_2);
    await().atMost(WAIT).until(() -> server.bitswap().stats().wantlistEntries() == 8);
    send(stream, new BitswapFrame(wants.subList(0, 3), true, List.of(), List.of(), 0),
        BitswapProtocol.Version.V1_2);

    await().atMost(WAIT).until(() -> server.bitswap().stats().wantlistEntries() == 3);
    assertThat(server.bitswap().wantlistSizes().get(10, TimeUnit.SECONDS))
        .containsExactly(Map.entry(client.host().peerId(), 3));
    // No DONT_HAVE without sendDontHave.
    assertThat(server.bitswap().stats().dontHaveSent()).isZero();
  }

  @Test
  void server_shouldAnswerA10Peer_withBareBlocksOnA10Stream() throws Exception {
    final Node server = node();
    final Host legacy = new Host(Keys.generate(KeyType.ED25519, random), HostConfig.builder()
        .listenAddresses(List.of(Multiaddr.parse("/ip4/127.0.0.1/tcp/0")))
        .agentVersion("legacy/test").build(), loops, Clock.systemUTC());
    hosts.add(legacy);
    legacy.start().get(5, TimeUnit.SECONDS);
    final List<byte[]> received = new CopyOnWriteArrayList<>();
    // A bitswap 1.0.0-only peer: whatever the server sends must come as 1.0.0 messages.
    legacy.protocols().register(BitswapProtocol.BITSWAP_1_0, (channel, protocol) -> {
      channel.pipeline().addLast(new UvarintFrameDecoder(
          BitswapConfig.MAX_MESSAGE_SIZE));
      channel.pipeline().addLast(new ChannelInboundHandlerAdapter() {
        @Override
        public void channelRead(final ChannelHandlerContext ctx,
            final Object msg) {
          final ByteBuf frame = (ByteBuf) msg;
          final byte[] bytes = new byte[frame.readableBytes()];
          frame.readBytes(bytes);
          frame.release();
          received.add(bytes);
        }
      });
    });
    final byte[] data = "a dag-pb-ish v0 block".getBytes(StandardCharsets.UTF_8);
    final Cid v0 = Cid.v0(Multihash.sha2_256(data));
    server.blocks().put(v0, data);
    final Connection connection = legacy.dial(server.host().listenAddresses().get(0)
        .withPeerId(server.host().peerId())).get(10, TimeUnit.SECONDS);
    final Stream stream = connection.newStream(List.of(BitswapProtocol.BITSWAP_1_0),
        (channel, protocol) -> channel.pipeline().addLast(UvarintFrameEncoder.INSTANCE))
        .get(10, TimeUnit.SECONDS);

    send(stream, new BitswapFrame(List.of(BitswapFrame.Want.block(v0, false)), false,
        List.of(), List.of(), 0), BitswapProtocol.Version.V1_0);

    await().atMost(WAIT).until(() -> !received.isEmpty());
    final Message message =
        Message.parseFrom(received.get(0));
    assertThat(message.getBlocksCount()).isEqualTo(1);
    assertThat(message.getBlocks(0).toByteArray()).isEqualTo(data);
    assertThat(message.getPayloadCount()).isZero();
  }

  /** A blockstore whose reads wait for a gate and are recorded in order. */
  private static final class GatedBlockstore implements Blockstore {
    private final MemoryBlockstore inner = new MemoryBlockstore();
    private final CountDownLatch gate = new CountDownLatch(1);
    private final List<Cid> reads = new CopyOnWriteArrayList<>();

    @Override
    public boolean has(final Cid cid) {
      return inner.has(cid);
    }

    @Override
    public Optional<byte[]> get(final Cid cid) {
      try {
        gate.await();
      } catch (final InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException(e);
      }
      reads.add(cid);
      return inner.get(cid);
    }

    @Override
    public Optional<Integer> size(final Cid cid) {
      return inner.size(cid);
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

  /** A host without bitswap whose received bitswap blocks are recorded, once {@link #listen}. */
  private record RawPeer(Host host, Connection connection, List<Cid> blocks) {
    void listen() {
      final BitswapFrameCodec codec = new BitswapFrameCodec(BitswapConfig.DEFAULT);
      host.protocols().register(BitswapProtocol.BITSWAP_1_2, (channel, protocol) -> {
        channel.pipeline().addLast(new UvarintFrameDecoder(BitswapConfig.MAX_MESSAGE_SIZE));
        channel.pipeline().addLast(new ChannelInboundHandlerAdapter() {
          @Override
          public void channelRead(final ChannelHandlerContext ctx, final Object msg) {
            final ByteBuf frame = (ByteBuf) msg;
            try {
              for (final BitswapFrame.Block block : codec.decode(frame.nioBuffer()).frame()
                  .blocks()) {
                blocks.add(block.cid());
              }
            } catch (final Exception e) {
              throw new IllegalStateException(e);
            } finally {
              frame.release();
            }
          }
        });
      });
    }
  }

  private RawPeer rawPeer(final Node server, final boolean listening) throws Exception {
    final Host host = new Host(Keys.generate(KeyType.ED25519, random), HostConfig.builder()
        .listenAddresses(List.of(Multiaddr.parse("/ip4/127.0.0.1/tcp/0")))
        .agentVersion("raw/test").build(), loops, Clock.systemUTC());
    hosts.add(host);
    host.start().get(5, TimeUnit.SECONDS);
    final Connection connection = host.dial(server.host().listenAddresses().get(0)
        .withPeerId(server.host().peerId())).get(10, TimeUnit.SECONDS);
    final RawPeer peer = new RawPeer(host, connection, new CopyOnWriteArrayList<>());
    if (listening) {
      peer.listen();
    }
    return peer;
  }

  private static Stream rawStream(final RawPeer from, final Node to) throws Exception {
    return from.connection().newStream(List.of(BitswapProtocol.BITSWAP_1_2),
        (channel, negotiated) -> channel.pipeline().addLast(UvarintFrameEncoder.INSTANCE))
        .get(10, TimeUnit.SECONDS);
  }

  private static void wantBlocks(final Stream stream, final List<Cid> cids) throws Exception {
    final List<BitswapFrame.Want> wants = new ArrayList<>();
    for (final Cid cid : cids) {
      wants.add(BitswapFrame.Want.block(cid, false));
    }
    send(stream, new BitswapFrame(wants, false, List.of(), List.of(), 0),
        BitswapProtocol.Version.V1_2);
  }

  @Test
  void server_shouldServeRoundRobinByBytes_notFirstComeFirstServed() throws Exception {
    final GatedBlockstore store = new GatedBlockstore();
    final Host host = new Host(Keys.generate(KeyType.ED25519, random), HostConfig.builder()
        .listenAddresses(List.of(Multiaddr.parse("/ip4/127.0.0.1/tcp/0")))
        .agentVersion("relay-pinner/test").build(), loops, Clock.systemUTC());
    hosts.add(host);
    host.start().get(5, TimeUnit.SECONDS);
    final Node server = new Node(host, Bitswap.start(host, store, storage,
        BitswapConfig.DEFAULT, host.clock()), null);
    nodes.add(server.bitswap());
    final Random data = new Random(11);
    final List<Cid> big = new ArrayList<>();
    for (int i = 0; i < 40; i++) {
      final byte[] block = new byte[256 * 1024];
      data.nextBytes(block);
      final Cid cid = raw(block);
      store.put(cid, block);
      big.add(cid);
    }
    final byte[] small = "the other peer's block".getBytes(StandardCharsets.UTF_8);
    final Cid smallCid = raw(small);
    store.put(smallCid, small);
    final RawPeer greedy = rawPeer(server, true);
    final RawPeer normal = rawPeer(server, true);

    // The greedy peer asks first for 10 MiB; the other peer asks for one block after it.
    wantBlocks(rawStream(greedy, server), big);
    await().atMost(WAIT).until(() -> server.bitswap().wantlistSizes().get()
        .getOrDefault(greedy.host().peerId(), 0) == 40);
    wantBlocks(rawStream(normal, server), List.of(smallCid));
    await().atMost(WAIT).until(() -> server.bitswap().wantlistSizes().get()
        .getOrDefault(normal.host().peerId(), 0) == 1);
    store.gate.countDown();

    await().atMost(WAIT).until(() -> normal.blocks().contains(smallCid)
        && greedy.blocks().size() == 40);
    // Round-robin by bytes (1 MiB turns): the small block is read within the first turns. A
    // first-come-first-served server would read all 40 big blocks first.
    assertThat(store.reads.indexOf(smallCid)).isLessThan(10);
  }

  @Test
  void server_shouldKeepAServedWant_whenNoStreamOpens_andServeItOnThePeersNextMessage()
      throws Exception {
    final Node server = node();
    final byte[] data = "served after all".getBytes(StandardCharsets.UTF_8);
    final Cid cid = raw(data);
    server.blocks().put(cid, data);
    // The peer wants the block but cannot take our stream (it has no bitswap handler yet).
    final RawPeer peer = rawPeer(server, false);
    final Stream stream = rawStream(peer, server);
    wantBlocks(stream, List.of(cid));
    await().atMost(WAIT).until(() -> server.bitswap().stats().rejected()
        .getOrDefault("stream-open-failed", 0L) >= 3);
    assertThat(server.bitswap().wantlistSizes().get(10, TimeUnit.SECONDS))
        .containsEntry(peer.host().peerId(), 1);

    peer.listen();
    wantBlocks(stream, List.of(raw("anything".getBytes(StandardCharsets.UTF_8))));

    await().atMost(WAIT).until(() -> peer.blocks().contains(cid));
    // The served want left the ledger once written; the new (missing) one stays.
    await().atMost(WAIT).until(() -> server.bitswap().wantlistSizes().get()
        .getOrDefault(peer.host().peerId(), 0) == 1);
  }

  @Test
  void get_shouldFailNotHang_whenCloseRacesItsBlockstoreLookup() throws Exception {
    final ExecutorService slow = Executors.newSingleThreadExecutor();
    try {
      final Host host = new Host(Keys.generate(KeyType.ED25519, random), HostConfig.builder()
          .listenAddresses(List.of(Multiaddr.parse("/ip4/127.0.0.1/tcp/0")))
          .agentVersion("relay-pinner/test").build(), loops, Clock.systemUTC());
      hosts.add(host);
      host.start().get(5, TimeUnit.SECONDS);
      final Bitswap bitswap = Bitswap.start(host, new MemoryBlockstore(), slow,
          BitswapConfig.DEFAULT, host.clock());
      final CountDownLatch lookups = new CountDownLatch(1);
      slow.execute(() -> {
        try {
          lookups.await();
        } catch (final InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      });
      final List<CompletableFuture<byte[]>> gets = new ArrayList<>();
      for (int i = 0; i < 20; i++) {
        gets.add(bitswap.get(raw(("missing " + i).getBytes(StandardCharsets.UTF_8)),
            Duration.ofHours(1)));
      }
      // Closed while every lookup still waits; the lookups then find nothing.
      bitswap.close();
      lookups.countDown();

      await().atMost(WAIT).until(() -> gets.stream().allMatch(CompletableFuture::isDone));
      assertThat(gets).allSatisfy(get -> assertThat(get).isCompletedExceptionally());
    } finally {
      slow.shutdownNow();
    }
  }
}
