package io.relaypinner.orbitdb.log;

import static org.assertj.core.api.Assertions.assertThat;

import io.relaypinner.ipfs.dagcbor.DagCbor;
import io.relaypinner.ipfs.dagcbor.DagCborValue;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.orbitdb.JavaWriter;
import io.relaypinner.orbitdb.OrbitDbAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The memory budget all logs of a node share ({@link LogMemory}): however many databases a node
 * follows, their incomplete entries, missing blocks and remembered entries stay within one
 * budget, and no single database takes more than half of it.
 */
class LogMemoryTest extends WithheldStores {
  private final JavaWriter writer = new JavaWriter();

  private OrbitDbAddress database(final String name) {
    remote.put(writer.identityCid(), writer.identityBlock());
    return JavaWriter.database(remote, name, List.of(writer.id()));
  }

  /** A log of {@code length} entries whose first entry never arrives, joined from its head. */
  private OrbitDbLog withGap(final String name, final int length, final LogMemory memory)
      throws Exception {
    final OrbitDbAddress address = database(name);
    final List<Entry> chain = writer.chain(remote, address, length);
    withheld.add(chain.get(0).cid());
    final OrbitDbLog log = log(address, memory);
    get(log.join(chain.get(length - 1).cid()));
    return log;
  }

  /** An entry naming {@code count} blocks that exist nowhere. */
  private Entry namingAbsentBlocks(final OrbitDbAddress address, final int count) {
    final List<Cid> absent = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      absent.add(DagCbor.cid(DagCbor.encode(DagCborValue.of(address + "/absent/" + i))));
    }
    final Entry entry = Entry.decode(writer.entry(address, count + 1L, absent.subList(0, 1),
        absent.subList(1, count), DagCborValue.of("x")));
    remote.put(entry.cid(), entry.block());
    return entry;
  }

  private static JoinResult get(final CompletableFuture<JoinResult> f) throws Exception {
    return f.get(10, TimeUnit.SECONDS);
  }

  @Test
  void incompleteEntries_shouldStayWithinHalfTheBudgetPerLog_andTheBudgetInAll()
      throws Exception {
    final LogMemory memory = new LogMemory(64, 64, 20, 1_000);

    // Over its half: the log forgets its incomplete entries and walks its history with its
    // frontier alone (OrbitDbLogHistoryWalkTest), holding none of the budget.
    final OrbitDbLog long1 = withGap("long", 30, memory);
    assertThat(long1.incompleteCount()).isZero();
    assertThat(long1.isWalkingHistory()).isTrue();
    assertThat(long1.counters()).containsEntry("bound.incomplete", 1L);
    assertThat(memory.incomplete()).isZero();

    final OrbitDbLog first = withGap("first", 9, memory);
    assertThat(first.incompleteCount()).isEqualTo(8);
    final OrbitDbLog second = withGap("second", 9, memory);
    assertThat(second.incompleteCount()).isEqualTo(8);
    assertThat(memory.incomplete()).isEqualTo(16);

    // Over all logs' budget: the same.
    final OrbitDbLog third = withGap("third", 7, memory);
    assertThat(third.isWalkingHistory()).isTrue();
    assertThat(third.counters()).containsEntry("bound.incomplete-all", 1L);
    assertThat(memory.incomplete()).isEqualTo(16);

    // Unfollowing a database gives its share back.
    first.release();
    assertThat(memory.incomplete()).isEqualTo(8);
  }

  @Test
  void aLogThatCompletes_shouldGiveItsIncompleteEntriesAndMissingBlocksBack() throws Exception {
    final LogMemory memory = new LogMemory(64, 64, 20, 20);
    final OrbitDbAddress address = database("gap");
    final List<Entry> chain = writer.chain(remote, address, 5);
    withheld.add(chain.get(0).cid());
    final OrbitDbLog log = log(address, memory);
    get(log.join(chain.get(4).cid()));
    assertThat(memory.incomplete()).isEqualTo(4);
    assertThat(memory.missing()).isEqualTo(1);

    withheld.clear();
    clock.advance(OrbitDbLog.RETRY_MIN);
    assertThat(get(log.resume()).complete()).isTrue();
    assertThat(memory.incomplete()).isZero();
    assertThat(memory.missing()).isZero();
  }

  @Test
  void missingBlocks_shouldStayWithinHalfTheBudgetPerLog_andTheBudgetInAll() throws Exception {
    final LogMemory memory = new LogMemory(64, 64, 1_000, 20);
    final OrbitDbAddress one = database("one");
    final OrbitDbLog first = log(one, memory);
    // One signed entry naming 50 blocks that do not exist is refused whole, not half-taken.
    get(first.join(namingAbsentBlocks(one, 50).cid()));
    assertThat(first.counters()).containsEntry("bound.missing", 1L);
    assertThat(first.size()).isZero();
    get(first.join(namingAbsentBlocks(one, 9).cid()));
    assertThat(first.size()).isEqualTo(1);

    final OrbitDbAddress two = database("two");
    final OrbitDbLog second = log(two, memory);
    get(second.join(namingAbsentBlocks(two, 9).cid()));
    assertThat(second.size()).isEqualTo(1);
    final long held = memory.missing();
    assertThat(held).isLessThanOrEqualTo(20);

    final OrbitDbAddress three = database("three");
    final OrbitDbLog third = log(three, memory);
    get(third.join(namingAbsentBlocks(three, 5).cid()));
    assertThat(third.size()).isZero();
    assertThat(third.counters()).containsKey("bound.missing-all");
    assertThat(memory.missing()).isLessThanOrEqualTo(20);
  }

  @Test
  void rejectedEntries_shouldBeRememberedInOneLruForAllLogs_andForgottenPerLog()
      throws Exception {
    final LogMemory memory = new LogMemory(64, 4, 1_000, 1_000);
    final JavaWriter stranger = new JavaWriter();
    remote.put(stranger.identityCid(), stranger.identityBlock());
    final List<OrbitDbLog> logs = new ArrayList<>();
    for (final String name : List.of("a", "b")) {
      final OrbitDbAddress address = database(name);
      final OrbitDbLog log = log(address, memory);
      logs.add(log);
      for (int i = 0; i < 3; i++) {
        final Entry refused = Entry.decode(stranger.entry(address, i + 1, List.of(), List.of(),
            DagCborValue.of(name + i)));
        remote.put(refused.cid(), refused.block());
        assertThat(get(log.join(refused.cid())).rejected()).isNotEmpty();
      }
    }
    assertThat(memory.rejectedCached()).isEqualTo(4);

    logs.get(1).forgetRejections();
    assertThat(memory.rejectedCached()).isEqualTo(1);
  }

  @Test
  void aLogDroppedWithoutRelease_shouldGiveItsShareBackOnceCollected() throws Exception {
    final LogMemory memory = new LogMemory(64, 64, 1_000, 1_000);
    withGap("dropped", 5, memory);
    assertThat(memory.incomplete()).isEqualTo(4);
    final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    while (memory.incomplete() != 0 && System.nanoTime() < deadline) {
      System.gc();
      Thread.sleep(50);
    }
    assertThat(memory.incomplete()).isZero();
    assertThat(memory.missing()).isZero();
  }
}
