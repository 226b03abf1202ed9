package io.relaypinner.relay.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.relaypinner.ipfs.blockstore.MemoryBlockstore;
import io.relaypinner.ipfs.pin.CodecLinkResolver;
import io.relaypinner.ipfs.unixfs.UnixFsImporter;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.multiformats.Multicodec;
import io.relaypinner.multiformats.Multihash;
import io.relaypinner.relay.gateway.TrustlessRequest.Scope;
import java.util.List;
import java.util.Map;
import java.util.Optional;
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
}
