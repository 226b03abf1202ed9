package io.relaypinner.relay.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.relaypinner.ipfs.blockstore.Blockstore;
import io.relaypinner.ipfs.blockstore.MemoryBlockstore;
import io.relaypinner.ipfs.dagcbor.DagCbor;
import io.relaypinner.ipfs.dagcbor.DagCborValue;
import io.relaypinner.ipfs.pin.CodecLinkResolver;
import io.relaypinner.ipfs.unixfs.UnixFsImporter;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.multiformats.Multicodec;
import io.relaypinner.multiformats.Multihash;
import io.relaypinner.relay.gateway.TrustlessRequest.Scope;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

class CarPlannerTest {
  private final MemoryBlockstore store = new MemoryBlockstore();
  /** Four identical 1 MiB chunks: one leaf CID linked four times. */
  private final Cid zeros = new UnixFsImporter(store, UnixFsImporter.Options.HELIA)
      .importBytes(new byte[4 * 1024 * 1024]);

  private CarPlanner planner(final long maxBlocks, final long maxBytes) {
    return new CarPlanner(store, CodecLinkResolver.standard(),
        new CarPlanner.Limits(maxBlocks, maxBytes));
  }

  @Test
  void dupsY_repeatsASharedLeaf_dupsN_sendsItOnce() throws Exception {
    final CarPlanner.Plan once = planner(100, 1L << 30)
        .plan(zeros, List.of(), zeros, Scope.ALL, Optional.empty(), false);
    final CarPlanner.Plan every = planner(100, 1L << 30)
        .plan(zeros, List.of(), zeros, Scope.ALL, Optional.empty(), true);
    assertThat(once.blocks()).hasSize(2);
    assertThat(every.blocks()).hasSize(5);
    assertThat(every.length()).isGreaterThan(4L * 1024 * 1024);
    assertThat(once.complete()).isTrue();
  }

  @Test
  void aCarOverTheBlockOrByteLimitIsRefusedBeforeAnythingIsSent() {
    assertThatThrownBy(() -> planner(3, 1L << 30)
        .plan(zeros, List.of(), zeros, Scope.ALL, Optional.empty(), true))
        .isInstanceOf(CarPlanner.TooLargeException.class).hasMessageContaining("3 blocks");
    assertThatThrownBy(() -> planner(100, 2 * 1024 * 1024)
        .plan(zeros, List.of(), zeros, Scope.ALL, Optional.empty(), true))
        .isInstanceOf(CarPlanner.TooLargeException.class).hasMessageContaining("bytes");
  }

  @Test
  void aMissingRootIsReported_aMissingChildEndsThePlanIncomplete() throws Exception {
    final Cid absent = Cid.v1(Multicodec.RAW, Multihash.sha2_256(new byte[] {1}));
    assertThatThrownBy(() -> planner(10, 1 << 20)
        .plan(absent, List.of(), absent, Scope.ALL, Optional.empty(), false))
        .isInstanceOf(CarPlanner.RootMissingException.class);
    final MemoryBlockstore partial = new MemoryBlockstore();
    partial.put(zeros, store.get(zeros).orElseThrow());
    final CarPlanner.Plan plan = new CarPlanner(partial, CodecLinkResolver.standard(),
        CarPlanner.Limits.DEFAULT).plan(zeros, List.of(), zeros, Scope.ALL, Optional.empty(),
        false);
    assertThat(plan.complete()).isFalse();
    assertThat(plan.blocks()).containsExactly(zeros);
  }

  @Test
  void requestParsing_formatWinsOverAccept_andBadValuesAre400() throws Exception {
    assertThat(TrustlessRequest.parse("application/vnd.ipld.raw", Map.of("format",
        List.of("car"))).kind()).isEqualTo(TrustlessRequest.Kind.CAR);
    assertThat(TrustlessRequest.parse("text/html, */*", Map.of()).kind())
        .isEqualTo(TrustlessRequest.Kind.PLAIN);
    assertThat(TrustlessRequest.parse("application/vnd.ipld.car; dups=y; order=dfs", Map.of())
        .dups()).isTrue();
    assertThat(TrustlessRequest.parse(null, Map.of("format", List.of("car"),
        "entity-bytes", List.of("0:*"))).scope()).isEqualTo(Scope.ENTITY);
    assertThatThrownBy(() -> TrustlessRequest.parse("application/vnd.ipld.car; order=bfs",
        Map.of())).isInstanceOf(TrustlessRequest.BadRequest.class);
    assertThatThrownBy(() -> TrustlessRequest.parse(null, Map.of("format", List.of("raw"),
        "dag-scope", List.of("all")))).isInstanceOf(TrustlessRequest.BadRequest.class);
    assertThatThrownBy(() -> TrustlessRequest.parse(null, Map.of("format", List.of("car"),
        "entity-bytes", List.of("1:x")))).isInstanceOf(TrustlessRequest.BadRequest.class);
    final TrustlessRequest.EntityBytes tail =
        new TrustlessRequest.EntityBytes(-10, Optional.empty());
    assertThat(tail.resolve(100).orElseThrow()).containsExactly(90, 100);
    assertThat(new TrustlessRequest.EntityBytes(0, Optional.of(-200L)).resolve(100)).isEmpty();
  }

  /**
   * The car-dups attack (issue 36): a dag-cbor root with 100 links to one 2 MiB dag-cbor block.
   * The walk used to read the child once per link into its frontier before the limits were
   * checked (about 200 MiB for one request); now a plan holds one block at a time, a duplicate
   * is sized and read again, never kept, and a limit is met before anything over it is read.
   */
  @Test
  void carDupsAttack_shouldHoldOneBlockAtATime_andMeetTheLimitBeforeReading() throws Exception {
    final MemoryBlockstore attack = new MemoryBlockstore();
    final Cid child = bigCborBlock(attack);
    final Cid root = rootLinking(attack, child, 100);
    final Map<Cid, Integer> reads = new ConcurrentHashMap<>();
    final Blockstore counting = reading(attack, reads);

    final CarPlanner planner = new CarPlanner(counting, CodecLinkResolver.standard(),
        CarPlanner.Limits.DEFAULT);
    final CarPlanner.Plan plan = planner.plan(root, List.of(), root, Scope.ALL,
        Optional.empty(), true);
    assertThat(plan.blocks()).hasSize(101);
    assertThat(plan.length()).isGreaterThan(100L * 2_000_000);
    // One block in heap at a time: the 2 MiB child (and the CIDs), never two of them.
    assertThat(planner.peakHeldBytes())
        .isLessThanOrEqualTo(planner.maxHeldBytes())
        .isLessThan(2L * 2_000_000)
        .isGreaterThanOrEqualTo(2_000_000);

    // Over the byte limit: refused from the sizes alone, before the child is read once.
    reads.clear();
    final CarPlanner small = new CarPlanner(counting, CodecLinkResolver.standard(),
        new CarPlanner.Limits(100_000, 64L << 20));
    assertThatThrownBy(() -> small.plan(root, List.of(), root, Scope.ALL, Optional.empty(),
        true)).isInstanceOfSatisfying(CarPlanner.TooLargeException.class,
            e -> assertThat(e.limit()).isEqualTo(CarPlanner.Limit.BYTES));
    assertThat(reads.getOrDefault(child, 0)).isZero();
    assertThat(small.peakHeldBytes()).isLessThan(1 << 20);
  }

  /**
   * What a plan holds is reserved from the node budget's gateway memory before it is held: a
   * 2 MB child needs room for itself, and a plan that finds none stops with
   * {@link CarPlanner.MemoryRefusedException} before reading it (counted by the budget); every
   * reservation is given back when the plan ends, whatever the outcome.
   */
  @Test
  void plans_shouldReserveWhatTheyHoldFromTheGatewayMemory_andStopWhenItHasNoRoom()
      throws Exception {
    final MemoryBlockstore attack = new MemoryBlockstore();
    final Cid child = bigCborBlock(attack);
    final Cid root = rootLinking(attack, child, 100);
    final Map<Cid, Integer> reads = new ConcurrentHashMap<>();
    final Blockstore counting = reading(attack, reads);
    final List<io.relaypinner.common.budget.Scope> refused = new ArrayList<>();
    final io.relaypinner.common.budget.Scope gateway = io.relaypinner.common.budget.Scope.root(
        "gateway", io.relaypinner.common.budget.Limits.NONE.with(
            io.relaypinner.common.budget.Resource.MEMORY, 3L << 20),
        (scope, resource) -> refused.add(scope));

    final CarPlanner planner = new CarPlanner(counting, CodecLinkResolver.standard(),
        CarPlanner.Limits.DEFAULT, gateway);
    final CarPlanner.Plan plan = planner.plan(root, List.of(), root, Scope.ALL,
        Optional.empty(), true);
    assertThat(plan.blocks()).hasSize(101);
    assertThat(refused).isEmpty();
    assertThat(gateway.used(io.relaypinner.common.budget.Resource.MEMORY)).isZero();

    // 2 MiB taken by other CARs: the child does not fit, and is never read.
    assertThat(gateway.tryReserve(io.relaypinner.common.budget.Resource.MEMORY, 2L << 20))
        .isTrue();
    reads.clear();
    assertThatThrownBy(() -> planner.plan(root, List.of(), root, Scope.ALL, Optional.empty(),
        true)).isInstanceOf(CarPlanner.MemoryRefusedException.class);
    assertThat(reads.getOrDefault(child, 0)).isZero();
    assertThat(refused).containsExactly(gateway);
    assertThat(gateway.used(io.relaypinner.common.budget.Resource.MEMORY)).isEqualTo(2L << 20);

    // The frontier and the plan's CIDs count too: no room for 100 of them, refused as well.
    final io.relaypinner.common.budget.Scope tiny = io.relaypinner.common.budget.Scope.root(
        "gateway", io.relaypinner.common.budget.Limits.NONE.with(
            io.relaypinner.common.budget.Resource.MEMORY,
            50L * CarPlanner.CID_HEAP_BYTES), io.relaypinner.common.budget.LimitListener.NONE);
    assertThatCode(() -> new CarPlanner(counting, CodecLinkResolver.standard(),
        CarPlanner.Limits.DEFAULT, tiny).plan(root, List.of(), root, Scope.BLOCK,
            Optional.empty(), true)).doesNotThrowAnyException();
    assertThatThrownBy(() -> new CarPlanner(counting, CodecLinkResolver.standard(),
        CarPlanner.Limits.DEFAULT, tiny).plan(root, List.of(), root, Scope.ALL,
            Optional.empty(), true)).isInstanceOf(CarPlanner.MemoryRefusedException.class);
    assertThat(tiny.used(io.relaypinner.common.budget.Resource.MEMORY)).isZero();
  }

  /** A dag-cbor block of about 2 MB (under the 2 MiB block limit) with no links. */
  private static Cid bigCborBlock(final MemoryBlockstore store) {
    final byte[] filler = new byte[2_000_000];
    new Random(3).nextBytes(filler);
    final byte[] block = DagCbor.encode(
        DagCborValue.map(Map.of("filler",
            DagCborValue.of(filler))));
    final Cid cid = Cid.v1(Multicodec.DAG_CBOR, Multihash.sha2_256(block));
    store.put(cid, block);
    return cid;
  }

  /** A dag-cbor block linking {@code child} {@code times} times. */
  private static Cid rootLinking(final MemoryBlockstore store, final Cid child, final int times) {
    final List<DagCborValue> links = new ArrayList<>();
    for (int i = 0; i < times; i++) {
      links.add(DagCborValue.of(child));
    }
    final byte[] block = DagCbor.encode(
        DagCborValue.map(Map.of("links",
            DagCborValue.list(links))));
    final Cid cid = Cid.v1(Multicodec.DAG_CBOR, Multihash.sha2_256(block));
    store.put(cid, block);
    return cid;
  }

  /** {@code store}, counting the full reads ({@code get}) of each block; sizes are not reads. */
  private static Blockstore reading(final MemoryBlockstore store,
      final Map<Cid, Integer> reads) {
    return new Blockstore() {
      @Override
      public boolean has(final Cid cid) {
        return store.has(cid);
      }

      @Override
      public Optional<byte[]> get(final Cid cid) {
        reads.merge(cid, 1, Integer::sum);
        return store.get(cid);
      }

      @Override
      public Optional<Integer> size(final Cid cid) {
        return store.size(cid);
      }

      @Override
      public void put(final Cid cid, final byte[] data) {
        store.put(cid, data);
      }

      @Override
      public boolean delete(final Cid cid) {
        return store.delete(cid);
      }

      @Override
      public void forEachKey(final Consumer<Cid> visitor) {
        store.forEachKey(visitor);
      }
    };
  }
}
