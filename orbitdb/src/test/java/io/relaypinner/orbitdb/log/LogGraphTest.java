package io.relaypinner.orbitdb.log;

import static org.assertj.core.api.Assertions.assertThat;

import io.relaypinner.ipfs.blockstore.MemoryBlockstore;
import io.relaypinner.ipfs.dagcbor.DagCborValue;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.orbitdb.JavaWriter;
import io.relaypinner.orbitdb.OrbitDbAddress;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The completeness graph alone, without fetches, verification or a datastore: entries linked in
 * any order complete when their history does, a refused parent resolves its children, a write
 * carries only what changed, the incomplete entries' budget turns the graph into a history walk,
 * and a stored state is re-linked.
 */
class LogGraphTest {
  private final MemoryBlockstore blocks = new MemoryBlockstore();
  private final JavaWriter writer = new JavaWriter();
  private final OrbitDbAddress address = JavaWriter.database(blocks, "graph",
      List.of(writer.id()));
  /** Entries 0 to 4, each naming the previous one (and refs 2, 4 back). */
  private final List<Entry> chain = writer.chain(blocks, address, 5);
  /** The markers "in the datastore". */
  private final Set<Cid> marked = new HashSet<>();
  private final Counters counters = new Counters();

  private LogGraph graph(final LogMemory memory) {
    return new LogGraph(address, memory.share(this), counters, marked::contains);
  }

  private Cid cid(final int i) {
    return chain.get(i).cid();
  }

  /** Links entry {@code i} as a join does; returns the entries it completed. */
  private static List<Cid> link(final LogGraph graph, final Entry entry) {
    final List<Cid> done = new ArrayList<>();
    assertThat(graph.link(entry, done, new ArrayList<>(), true, true)).isNull();
    return done;
  }

  @Test
  void entriesLinkedBeforeTheirParents_shouldWait_andCompleteWithTheFirstEntry() {
    final LogGraph graph = graph(new LogMemory());
    final List<Cid> follow = new ArrayList<>();

    assertThat(graph.link(chain.get(2), new ArrayList<>(), follow, true, true)).isNull();
    assertThat(follow).containsExactly(cid(1), cid(0));
    assertThat(graph.frontier().blocks()).containsExactly(cid(1), cid(0));
    assertThat(graph.isComplete(cid(2))).isFalse();
    assertThat(link(graph, chain.get(1))).isEmpty();
    assertThat(graph.incompleteCount()).isEqualTo(2);
    assertThat(graph.frontier().blocks()).containsExactly(cid(0));

    assertThat(link(graph, chain.get(0))).containsExactly(cid(0), cid(1), cid(2));

    assertThat(graph.isComplete()).isTrue();
    assertThat(graph.isComplete(cid(1))).isTrue();
    assertThat(graph.heads()).containsExactly(cid(2));
    assertThat(graph.size()).isEqualTo(3);
    assertThat(graph.isVerified(cid(0))).isTrue();
    assertThat(graph.isVerified(cid(3))).isFalse();
  }

  @Test
  void aRefusedParent_shouldResolveTheEntriesWaitingOnIt() {
    final LogGraph graph = graph(new LogMemory());
    link(graph, chain.get(1));
    final List<Cid> done = new ArrayList<>();

    graph.refused(cid(0), done);

    assertThat(done).containsExactly(cid(1));
    assertThat(graph.frontier().isEmpty()).isTrue();
    assertThat(graph.isComplete()).isTrue();
  }

  @Test
  void aWrite_shouldCarryOnlyWhatChangedSinceTheLastOne() {
    final LogGraph graph = graph(new LogMemory());
    link(graph, chain.get(2));
    final LogStore.Write first = graph.changes();
    assertThat(first.marked()).containsExactly(cid(2));
    assertThat(first.incompleteAdded()).containsExactly(cid(2));
    assertThat(first.frontier()).containsExactly(cid(1), cid(0));
    graph.written(first);

    link(graph, chain.get(1));
    link(graph, chain.get(0));

    final LogStore.Write second = graph.changes();
    // Entry 1 became incomplete and completed between the writes: no record either way.
    assertThat(second.marked()).containsExactlyInAnyOrder(cid(0), cid(1));
    assertThat(second.incompleteAdded()).isEmpty();
    assertThat(second.incompleteGone()).containsExactly(cid(2));
    assertThat(second.frontier()).isEmpty();
    assertThat(second.size()).isEqualTo(3);
    graph.written(second);
    assertThat(graph.changes().marked()).isEmpty();
  }

  @Test
  void anEntryMarkedInTheDatastore_shouldBeVerified_withoutBeingHeldInMemory() {
    final LogGraph graph = graph(new LogMemory());
    marked.add(cid(0));

    assertThat(link(graph, chain.get(1))).containsExactly(cid(1));
    assertThat(graph.frontier().isEmpty()).isTrue();
  }

  @Test
  void overTheIncompleteBudget_theGraphShouldWalkTheHistoryWithItsFrontierAlone() {
    // Two incomplete entries per log at most.
    final LogMemory memory = new LogMemory(64, 64, 4, 1_000);
    final LogGraph graph = graph(memory);
    link(graph, chain.get(4));
    link(graph, chain.get(3));
    assertThat(graph.isWalking()).isFalse();

    link(graph, chain.get(2));

    assertThat(graph.isWalking()).isTrue();
    assertThat(graph.incompleteCount()).isZero();
    assertThat(memory.incomplete()).isZero();
    assertThat(graph.frontier().blocks()).containsExactlyInAnyOrder(cid(1), cid(0));
    assertThat(graph.heads()).containsExactly(cid(4));
    assertThat(graph.isComplete(cid(4))).isFalse();
    assertThat(counters.snapshot()).containsEntry("bound.incomplete", 1L)
        .containsEntry("history-walks", 1L);
    assertThat(graph.changes().walk()).isEmpty();
    assertThat(graph.changes().incompleteAdded()).isEmpty();

    link(graph, chain.get(1));
    link(graph, chain.get(0));
    assertThat(graph.frontier().endWalkIfDone()).isTrue();
    assertThat(graph.isComplete()).isTrue();
    assertThat(graph.isComplete(cid(3))).isTrue();
    assertThat(graph.heads()).containsExactly(cid(4));
    assertThat(graph.changes().walkEnded()).isTrue();
  }

  @Test
  void overTheMissingBudget_anEntryShouldBeRefused_andChangeNothing() {
    // One missing block per log at most; entry 2 names two.
    final LogGraph graph = graph(new LogMemory(64, 64, 20, 2));

    assertThat(graph.link(chain.get(2), new ArrayList<>(), new ArrayList<>(), true, true))
        .isEqualTo("bound.missing");

    assertThat(graph.size()).isZero();
    assertThat(graph.heads()).isEmpty();
    assertThat(graph.frontier().isEmpty()).isTrue();
  }

  @Test
  void aStoredState_shouldBeRelinked_soThatItsEntriesCompleteWithTheirHistory() {
    final LogGraph graph = graph(new LogMemory());
    marked.add(cid(1));
    marked.add(cid(2));
    // An incomplete entry whose block the blockstore no longer holds.
    final Cid lost = Entry.decode(writer.entry(address, 99, List.of(), List.of(),
        DagCborValue.of("lost"))).cid();

    final int missing = graph.restore(new LogStore.Stored(2, List.of(cid(2)), null,
        List.of(cid(0)), Set.of(cid(1), cid(2), lost), List.of(cid(2))), blocks::get);

    assertThat(missing).isEqualTo(1);
    assertThat(graph.size()).isEqualTo(2);
    assertThat(graph.incompleteCount()).isEqualTo(2);
    assertThat(graph.frontier().blocks()).containsExactly(cid(0));
    // The earlier layout's entry is to be written as a record; the lost one's record goes.
    assertThat(graph.changes().incompleteAdded()).containsExactly(cid(2));
    assertThat(graph.changes().incompleteGone()).containsExactly(lost);
    assertThat(graph.changes().marked()).isEmpty();

    assertThat(link(graph, chain.get(0))).containsExactly(cid(0), cid(1), cid(2));
    assertThat(graph.isComplete()).isTrue();
    assertThat(graph.heads()).containsExactly(cid(2));
  }

  @Test
  void theLayoutBeforeTheMarkers_shouldBeRelinkedAsNewlyVerifiedEntries() {
    final LogGraph graph = graph(new LogMemory());

    final int missing = graph.relink(List.of(cid(1), cid(2)), List.of(cid(0), cid(1)),
        blocks::get);

    assertThat(missing).isZero();
    assertThat(graph.size()).isEqualTo(2);
    assertThat(graph.heads()).containsExactly(cid(2));
    assertThat(graph.frontier().blocks()).containsExactly(cid(0));
    assertThat(graph.changes().marked()).containsExactlyInAnyOrder(cid(1), cid(2));
  }
}
