package io.relaypinner.ipfs.pin;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.relaypinner.ipfs.blockstore.MemoryBlockstore;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.multiformats.Multicodec;
import io.relaypinner.multiformats.Multihash;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class DagWalkerTest {
  private final MemoryBlockstore store = new MemoryBlockstore();
  private final TestDag dag = new TestDag();

  @Test
  void walk_shouldReachEveryBlockOnce_whenSubtreesAreShared() {
    final Cid shared = dag.leaf("shared");
    final Cid left = dag.node("left", shared, dag.leaf("l"));
    final Cid right = dag.node("right", shared);
    final Cid root = dag.node("root", left, right, shared);
    dag.putAll(store);

    final DagWalker.Result result = new DagWalker(store, TestListCodec.resolver(), 5)
        .walk(List.of(root));
    assertThat(result.complete()).isTrue();
    assertThat(result.reached()).hasSize(5).contains(shared.multihash(), root.multihash());
    assertThat(result.bytes()).isEqualTo(dag.bytes(root).length + dag.bytes(left).length
        + dag.bytes(right).length + "shared".length() + "l".length());
  }

  @Test
  void walk_shouldReportEveryMissingBlock_andWalkTheOtherBranches() {
    final Cid a = dag.leaf("a");
    final Cid absentLeaf = dag.leaf("absent");
    final Cid absentNode = dag.node("absent-node", dag.leaf("under-absent"));
    final Cid root = dag.node("root", absentNode, a, absentLeaf);
    dag.putAll(store, absentNode, absentLeaf);

    final DagWalker.Result result = new DagWalker(store, TestListCodec.resolver(), 100)
        .walk(List.of(root));
    assertThat(result.complete()).isFalse();
    assertThat(result.missing()).containsExactly(absentNode, absentLeaf);
    assertThat(result.reached()).containsExactlyInAnyOrder(root.multihash(), a.multihash());
  }

  @Test
  void walk_shouldStop_whenLinksFormACycle() {
    // Hashes make real cycles impossible; a resolver that invents links can still produce one.
    final Cid a = putRaw("a");
    final Cid b = putRaw("b");
    final Map<Cid, List<Cid>> links = Map.of(a, List.of(b), b, List.of(a, b));
    final DagWalker walker = new DagWalker(store, (cid, block) -> links.get(cid), 10);

    final DagWalker.Result result = walker.walk(List.of(a));
    assertThat(result.reached()).containsExactlyInAnyOrder(a.multihash(), b.multihash());
  }

  @Test
  void walk_shouldThrow_whenTheDagExceedsMaxBlocks() {
    final List<Cid> leaves = new ArrayList<>();
    for (int i = 0; i < 10; i++) {
      leaves.add(dag.leaf("leaf " + i));
    }
    final Cid root = dag.node("root", leaves.toArray(Cid[]::new));
    dag.putAll(store);

    assertThat(new DagWalker(store, TestListCodec.resolver(), 11).walk(List.of(root)).reached())
        .hasSize(11);
    assertThatThrownBy(() -> new DagWalker(store, TestListCodec.resolver(), 10)
        .walk(List.of(root))).isInstanceOf(DagLimitExceededException.class)
        .hasMessageContaining("10 blocks");
  }

  @Test
  void walk_shouldFail_whenACodecHasNoResolver() {
    final byte[] data = "cbor?".getBytes(StandardCharsets.UTF_8);
    final Cid cid = Cid.v1(Multicodec.DAG_CBOR, Multihash.sha2_256(data));
    store.put(cid, data);
    assertThatThrownBy(() -> new DagWalker(store, TestListCodec.resolver(), 10)
        .walk(List.of(cid))).isInstanceOf(LinkResolutionException.class)
        .hasMessageContaining("dag-cbor");
  }

  @Test
  void walk_shouldWrapDecodeErrors_namingTheBlock() {
    final byte[] data = {3, 'a', 'b', 'c', 0x01};
    final Cid cid = TestListCodec.cidOf(data);
    store.put(cid, data);
    assertThatThrownBy(() -> new DagWalker(store, TestListCodec.resolver(), 10)
        .walk(List.of(cid))).isInstanceOf(LinkResolutionException.class)
        .hasMessageContaining(cid.toString());
  }

  @Test
  void walk_shouldReadIdentityCidsInline_andNeverReportThemMissing() {
    final byte[] inline = "tiny".getBytes(StandardCharsets.UTF_8);
    final Cid identity = Cid.v1(Multicodec.RAW, Multihash.identity(inline));
    final Cid root = dag.node("root", identity);
    dag.putAll(store);

    final DagWalker.Result result = new DagWalker(store, TestListCodec.resolver(), 10)
        .walk(List.of(root));
    assertThat(result.complete()).isTrue();
    assertThat(result.reached()).containsExactly(root.multihash());
  }

  private Cid putRaw(final String text) {
    final byte[] data = text.getBytes(StandardCharsets.UTF_8);
    final Cid cid = Cid.v1(Multicodec.RAW, Multihash.sha2_256(data));
    store.put(cid, data);
    return cid;
  }
}
