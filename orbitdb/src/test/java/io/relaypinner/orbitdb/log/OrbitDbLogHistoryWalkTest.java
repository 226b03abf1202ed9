package io.relaypinner.orbitdb.log;

import static org.assertj.core.api.Assertions.assertThat;

import io.relaypinner.ipfs.dagcbor.DagCborValue;
import io.relaypinner.orbitdb.JavaWriter;
import io.relaypinner.orbitdb.OrbitDbAddress;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A history longer than the incomplete entries' budget ({@link LogMemory}): the log walks it
 * with its frontier alone ({@link OrbitDbLog#isWalkingHistory()}) and completes once the
 * frontier is empty, in bounded memory, across a restart, with the right heads.
 */
class OrbitDbLogHistoryWalkTest extends WithheldStores {
  private final JavaWriter writer = new JavaWriter();
  private final JavaWriter other = new JavaWriter();
  /** Ten incomplete entries per log at most, twenty in all. */
  private final LogMemory memory = new LogMemory(64, 64, 20, 1_000);

  private OrbitDbLog log(final OrbitDbAddress address) {
    return log(address, memory);
  }

  private OrbitDbAddress database(final String name) {
    remote.put(writer.identityCid(), writer.identityBlock());
    remote.put(other.identityCid(), other.identityBlock());
    return JavaWriter.database(remote, name, List.of(writer.id(), other.id()));
  }

  private static JoinResult get(final CompletableFuture<JoinResult> f) throws Exception {
    return f.get(10, TimeUnit.SECONDS);
  }

  @Test
  void aHistoryLongerThanTheBudget_shouldBeWalkedWithItsFrontierAlone_andComplete()
      throws Exception {
    final OrbitDbAddress address = database("long");
    final List<Entry> chain = writer.chain(remote, address, 200);
    withheld.add(chain.get(0).cid());
    final OrbitDbLog log = log(address);

    final JoinResult first = get(log.join(chain.get(199).cid()));

    // 199 entries wait for the first one: far over the log's 10. It walks on regardless.
    assertThat(first.added()).hasSize(199);
    assertThat(first.complete()).isFalse();
    assertThat(first.historyCompleted()).isFalse();
    assertThat(log.isWalkingHistory()).isTrue();
    assertThat(log.incompleteCount()).isZero();
    assertThat(memory.incomplete()).isZero();
    assertThat(log.missing()).containsExactly(chain.get(0).cid());
    assertThat(log.heads()).containsExactly(chain.get(199).cid());
    assertThat(log.isComplete()).isFalse();
    assertThat(log.isComplete(chain.get(150).cid())).isFalse();
    assertThat(log.counters()).containsEntry("history-walks", 1L)
        .containsEntry("bound.incomplete", 1L);

    withheld.clear();
    clock.advance(OrbitDbLog.RETRY_MIN);
    final JoinResult filled = get(log.resume());

    assertThat(filled.added()).extracting(Entry::cid).containsExactly(chain.get(0).cid());
    assertThat(filled.historyCompleted()).isTrue();
    assertThat(filled.complete()).isTrue();
    assertThat(log.isComplete()).isTrue();
    assertThat(log.isWalkingHistory()).isFalse();
    assertThat(log.isComplete(chain.get(150).cid())).isTrue();
    assertThat(log.size()).isEqualTo(200);
    assertThat(log.heads()).containsExactly(chain.get(199).cid());
    assertThat(log.counters()).containsEntry("histories-completed", 1L);

    // Entries on top are tracked one by one again.
    final Entry next = Entry.decode(writer.entry(address, 201, List.of(chain.get(199).cid()),
        List.of(chain.get(198).cid()), DagCborValue.of("201")));
    remote.put(next.cid(), next.block());
    final JoinResult appended = get(log.join(next.cid()));
    assertThat(appended.completed()).containsExactly(next.cid());
    assertThat(appended.historyCompleted()).isFalse();
    assertThat(log.heads()).containsExactly(next.cid());
  }

  @Test
  void aWalk_shouldSurviveARestart_andCompleteAfterIt() throws Exception {
    final OrbitDbAddress address = database("restart");
    final List<Entry> chain = writer.chain(remote, address, 60);
    withheld.add(chain.get(0).cid());
    final OrbitDbLog before = log(address);
    get(before.join(chain.get(59).cid()));
    assertThat(before.isWalkingHistory()).isTrue();
    before.release();

    final OrbitDbLog reopened = log(address);
    assertThat(reopened.isWalkingHistory()).isTrue();
    assertThat(reopened.isComplete()).isFalse();
    assertThat(reopened.missing()).containsExactly(chain.get(0).cid());
    assertThat(reopened.heads()).containsExactly(chain.get(59).cid());
    assertThat(reopened.size()).isEqualTo(59);

    withheld.clear();
    final JoinResult filled = get(reopened.resume());
    assertThat(filled.historyCompleted()).isTrue();
    assertThat(reopened.isComplete()).isTrue();
    reopened.release();

    final OrbitDbLog again = log(address);
    assertThat(again.isWalkingHistory()).isFalse();
    assertThat(again.isComplete()).isTrue();
    assertThat(again.isComplete(chain.get(30).cid())).isTrue();
    assertThat(again.size()).isEqualTo(60);
  }

  @Test
  void aPeersHeadThatArrivesDuringAWalk_shouldStayAHead() throws Exception {
    final OrbitDbAddress address = database("fork");
    final List<Entry> chain = writer.chain(remote, address, 40);
    // Another writer's head on an older entry, offered by a peer while the walk goes on; its
    // first fetch fails, so it waits on the frontier like the walk's own blocks.
    final Entry fork = Entry.decode(other.entry(address, 21, List.of(chain.get(19).cid()),
        List.of(), DagCborValue.of("fork")));
    remote.put(fork.cid(), fork.block());
    withheld.add(chain.get(0).cid());
    withheld.add(fork.cid());
    final OrbitDbLog log = log(address);
    get(log.join(chain.get(39).cid()));
    assertThat(log.isWalkingHistory()).isTrue();
    get(log.join(fork.cid()));
    assertThat(log.missing()).containsExactlyInAnyOrder(chain.get(0).cid(), fork.cid());

    // Reopened before it arrives: which blocks of the frontier are a peer's heads is kept.
    log.release();
    final OrbitDbLog reopened = log(address);
    withheld.clear();
    clock.advance(OrbitDbLog.RETRY_MAX);
    final JoinResult filled = get(reopened.resume());

    assertThat(filled.historyCompleted()).isTrue();
    assertThat(reopened.heads()).containsExactlyInAnyOrder(chain.get(39).cid(), fork.cid());
    assertThat(reopened.size()).isEqualTo(41);
  }

  @Test
  void aLogOverAllLogsBudget_shouldWalkItsHistoryToo_whileTheOthersKeepTheirs()
      throws Exception {
    final OrbitDbLog[] logs = new OrbitDbLog[3];
    final Entry[] firsts = new Entry[3];
    for (int i = 0; i < 3; i++) {
      final OrbitDbAddress address = database("small-" + i);
      final List<Entry> chain = writer.chain(remote, address, 9);
      firsts[i] = chain.get(0);
      withheld.add(chain.get(0).cid());
      logs[i] = log(address);
      get(logs[i].join(chain.get(8).cid()));
    }

    // Two logs hold 8 incomplete entries each; the third's would exceed the 20 of all logs.
    assertThat(logs[0].incompleteCount()).isEqualTo(8);
    assertThat(logs[1].incompleteCount()).isEqualTo(8);
    assertThat(logs[2].isWalkingHistory()).isTrue();
    assertThat(logs[2].counters()).containsEntry("bound.incomplete-all", 1L);
    assertThat(memory.incomplete()).isEqualTo(16);

    withheld.clear();
    clock.advance(OrbitDbLog.RETRY_MIN);
    for (final OrbitDbLog log : logs) {
      get(log.resume());
      assertThat(log.isComplete()).isTrue();
      assertThat(log.size()).isEqualTo(9);
    }
    assertThat(memory.incomplete()).isZero();
    assertThat(memory.missing()).isZero();
  }
}
