package io.relaypinner.relay.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.util.concurrent.MockTicker;
import io.netty.util.concurrent.Ticker;
import io.relaypinner.ipfs.blockstore.MemoryBlockstore;
import io.relaypinner.ipfs.dagcbor.DagCbor;
import io.relaypinner.ipfs.dagcbor.DagCborValue;
import io.relaypinner.ipfs.unixfs.UnixFsImporter;
import io.relaypinner.ipfs.unixfs.UnixFsReader;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.multiformats.Multicodec;
import io.relaypinner.multiformats.Multihash;
import io.relaypinner.relay.config.GatewayConfig;
import io.relaypinner.relay.config.GatewayMode;
import io.relaypinner.relay.testing.UnixFsFixtures;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The one network fallback of {@code /ipfs/} on memory stores, a fake network that copies blocks
 * from a "remote" store, a {@link MockTicker} and a direct executor: what it fetches for each
 * {@link GatewayFallback.Need}, its limits and its one time limit.
 */
class GatewayFallbackTest {
  private static final Duration TIMEOUT = Duration.ofSeconds(10);

  private final MemoryBlockstore local = new MemoryBlockstore();
  private final MemoryBlockstore remote = new MemoryBlockstore();
  private final MockTicker ticker = Ticker.newMockTicker();
  private final FakeNetwork network = new FakeNetwork();

  /** Peers that hold {@link #remote}; each fetch takes {@link #fetchTime} of the ticker. */
  private final class FakeNetwork implements NetworkContent {
    final List<String> calls = new ArrayList<>();
    final List<Duration> timeouts = new ArrayList<>();
    boolean peers = true;
    Duration fetchTime = Duration.ZERO;

    @Override
    public boolean hasPeers() {
      return peers;
    }

    @Override
    public CompletableFuture<?> block(final Cid cid, final Duration timeout) {
      calls.add("block " + cid);
      timeouts.add(timeout);
      ticker.advance(fetchTime.toNanos(), TimeUnit.NANOSECONDS);
      remote.get(cid).ifPresent(data -> local.put(cid, data));
      return CompletableFuture.completedFuture(null);
    }

    @Override
    public CompletableFuture<?> dag(final Cid root, final Duration timeout) {
      calls.add("dag " + root);
      timeouts.add(timeout);
      ticker.advance(fetchTime.toNanos(), TimeUnit.NANOSECONDS);
      return CompletableFuture.completedFuture(null);
    }
  }

  private GatewayFallback fallback(final GatewayMode mode) {
    return new GatewayFallback(new GatewayConfig(mode, TIMEOUT), Optional.of(network),
        new UnixFsReader(local), Runnable::run, ticker);
  }

  private Cid file() {
    return new UnixFsImporter(remote, UnixFsImporter.Options.HELIA)
        .importBytes("a file".getBytes(StandardCharsets.UTF_8));
  }

  @Test
  void fetch_shouldDoNothing_whenOffPinnedOnlyOrWithoutPeers() {
    final Cid cid = file();

    assertThat(GatewayFallback.off().enabled()).isFalse();
    assertThat(GatewayFallback.off().fetch(cid, "", GatewayFallback.Need.DAG)).isDone();
    assertThat(fallback(GatewayMode.PINNED_ONLY).enabled()).isFalse();
    assertThat(fallback(GatewayMode.PINNED_ONLY).fetch(cid, "", GatewayFallback.Need.DAG))
        .isCompleted();
    assertThat(new GatewayFallback(new GatewayConfig(GatewayMode.PINNED_FIRST, TIMEOUT),
        Optional.empty(), new UnixFsReader(local), Runnable::run, ticker).enabled()).isFalse();
    network.peers = false;
    assertThat(fallback(GatewayMode.PINNED_FIRST).fetch(cid, "", GatewayFallback.Need.DAG))
        .isCompleted();

    assertThat(network.calls).isEmpty();
  }

  @Test
  void fetch_shouldResolveThePathBlockByBlock_thenFetchTheTargetsDag() {
    final Cid file = file();
    final Cid inner = UnixFsFixtures.directory(remote, "b.jpg", file);
    final Cid root = UnixFsFixtures.directory(remote, "a", inner);

    final CompletableFuture<Void> done =
        fallback(GatewayMode.PINNED_FIRST).fetch(root, "/a/b.jpg", GatewayFallback.Need.UNIXFS);

    assertThat(done).isCompleted();
    assertThat(network.calls).containsExactly("block " + root, "block " + inner,
        "block " + file, "dag " + file);
  }

  @Test
  void fetch_shouldTakeTheCidAsIs_forBlocksAndDagsWithoutAPath_whateverItsCodec() {
    final byte[] block = DagCbor.encode(DagCborValue.map(Map.of("a", DagCborValue.of(1))));
    final Cid cbor = Cid.v1(Multicodec.DAG_CBOR, Multihash.sha2_256(block));
    remote.put(cbor, block);

    fallback(GatewayMode.PINNED_FIRST).fetch(cbor, "", GatewayFallback.Need.DAG);
    fallback(GatewayMode.PINNED_FIRST).fetch(cbor, "", GatewayFallback.Need.BLOCK);

    assertThat(network.calls).containsExactly("dag " + cbor, "block " + cbor);
  }

  @Test
  void fetch_forAPlainAnswer_shouldNotFetchTheDagOfARootThatIsNotUnixFs() {
    final byte[] block = DagCbor.encode(DagCborValue.map(Map.of("a", DagCborValue.of(1))));
    final Cid cbor = Cid.v1(Multicodec.DAG_CBOR, Multihash.sha2_256(block));
    remote.put(cbor, block);

    assertThat(fallback(GatewayMode.PINNED_FIRST).fetch(cbor, "", GatewayFallback.Need.UNIXFS))
        .isCompleted();

    assertThat(network.calls).containsExactly("block " + cbor);
  }

  @Test
  void fetch_shouldStop_whenThePathNamesNothing() {
    final Cid root = UnixFsFixtures.directory(remote, "a", file());

    assertThat(fallback(GatewayMode.PINNED_FIRST)
        .fetch(root, "/missing", GatewayFallback.Need.DAG)).isCompleted();

    assertThat(network.calls).containsExactly("block " + root);
  }

  @Test
  void fetch_shouldGiveUpThePath_afterMaxPathFetches() {
    // Nobody really has the root: every fetch "succeeds" and the block is still missing.
    final Cid nowhere = Cid.v1(Multicodec.DAG_PB, Multihash.sha2_256(new byte[] {1}));

    assertThat(fallback(GatewayMode.PINNED_FIRST)
        .fetch(nowhere, "/a", GatewayFallback.Need.DAG)).isCompleted();

    assertThat(network.calls).hasSize(GatewayFallback.MAX_PATH_FETCHES)
        .allMatch(call -> call.equals("block " + nowhere));
  }

  @Test
  void fetch_shouldBoundTheWholeFallback_byOneTimeLimit_onTheTicker() {
    final Cid root = UnixFsFixtures.directory(remote, "a", file());
    network.fetchTime = Duration.ofSeconds(3);

    fallback(GatewayMode.PINNED_FIRST).fetch(root, "/a", GatewayFallback.Need.UNIXFS);

    // Each fetch gets what is left of the request's 10 s, not 10 s of its own.
    assertThat(network.timeouts).containsExactly(Duration.ofSeconds(10),
        Duration.ofSeconds(7), Duration.ofSeconds(4));
    assertThat(fallback(GatewayMode.PINNED_FIRST).timeout()).isEqualTo(TIMEOUT);

    // Past the limit, what is left is never zero (which a fetch could take for "no limit").
    network.timeouts.clear();
    network.fetchTime = Duration.ofSeconds(11);
    fallback(GatewayMode.PINNED_FIRST).fetch(UnixFsFixtures.directory(remote, "b",
        new UnixFsImporter(remote, UnixFsImporter.Options.HELIA).importBytes(new byte[] {7})),
        "/b", GatewayFallback.Need.UNIXFS);
    assertThat(network.timeouts).containsExactly(Duration.ofSeconds(10), Duration.ofNanos(1),
        Duration.ofNanos(1));
  }
}
