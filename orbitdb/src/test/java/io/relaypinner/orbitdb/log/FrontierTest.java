package io.relaypinner.orbitdb.log;

import static org.assertj.core.api.Assertions.assertThat;

import io.relaypinner.ipfs.dagcbor.DagCbor;
import io.relaypinner.ipfs.dagcbor.DagCborValue;
import io.relaypinner.multiformats.Cid;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The frontier's retry schedule on explicit times (no clock, no fetches): the back-off doubles
 * from {@link Frontier#RETRY_MIN} to {@link Frontier#RETRY_MAX}, a store outage does not grow
 * it, a block is due once its back-off passed; the budget of missing blocks; the walk's unnamed
 * blocks.
 */
class FrontierTest {
  private static final long T0 = 1_000_000L;
  private final Counters counters = new Counters();
  private final Cid a = cid("a");
  private final Cid b = cid("b");
  private final Cid c = cid("c");

  private static Cid cid(final String seed) {
    return DagCbor.cid(DagCbor.encode(DagCborValue.of(seed)));
  }

  private Frontier frontier(final LogMemory memory) {
    return new Frontier(memory.share(this), counters, () -> 0);
  }

  @Test
  void aBlockThatKeepsFailing_shouldBeRetriedWithADoublingBackOff_upToTheLongest() {
    final Frontier frontier = frontier(new LogMemory());

    frontier.failed(a, T0);
    assertThat(frontier.due(T0).deferred()).isEqualTo(1);
    assertThat(frontier.due(T0 + 999).due()).isEmpty();
    assertThat(frontier.due(T0 + 1_000).due()).containsExactly(a);

    long now = T0;
    long delay = 0;
    for (int i = 0; i < 12; i++) {
      now += 1_000_000;
      frontier.failed(a, now);
      delay = firstDue(frontier, now) - now;
    }
    assertThat(delay).isEqualTo(Frontier.RETRY_MAX.toMillis());
    assertThat(Frontier.Retry.now().failed(T0).failed(T0).notBeforeMillis())
        .isEqualTo(T0 + 2 * Frontier.RETRY_MIN.toMillis());
  }

  /** The first time after {@code now} at which a block is due, to the millisecond. */
  private static long firstDue(final Frontier frontier, final long now) {
    long t = now;
    while (frontier.due(t).due().isEmpty()) {
      t += 1_000;
    }
    return t;
  }

  @Test
  void aStoreOutage_shouldRetryAfterTheShortestDelay_withoutGrowingTheBackOff() {
    final Frontier frontier = frontier(new LogMemory());
    frontier.failed(a, T0);
    frontier.failed(a, T0);
    frontier.failed(a, T0);

    frontier.storeDown(a, T0);

    assertThat(frontier.due(T0 + Frontier.RETRY_MIN.toMillis()).due()).containsExactly(a);
    // Three failures still count: the next one waits 8 s.
    frontier.failed(a, T0);
    assertThat(frontier.due(T0 + 7_999).due()).isEmpty();
    assertThat(frontier.due(T0 + 8_000).due()).containsExactly(a);
  }

  @Test
  void retryAllNow_shouldMakeEveryBlockDue() {
    final Frontier frontier = frontier(new LogMemory());
    frontier.failed(a, T0);
    frontier.add(b, Frontier.Retry.now());
    assertThat(frontier.due(T0).due()).containsExactly(b);

    frontier.retryAllNow();

    assertThat(frontier.due(T0)).isEqualTo(new Frontier.Due(List.of(a, b), 0));
  }

  @Test
  void overTheBudget_aBlockShouldNotBeAdded_andTheBoundCounted() {
    final LogMemory memory = new LogMemory(64, 64, 20, 4);
    final Frontier frontier = frontier(memory);
    frontier.add(a, Frontier.Retry.now());
    frontier.add(b, Frontier.Retry.now());

    frontier.add(c, Frontier.Retry.now());
    frontier.named(c, true);

    assertThat(frontier.blocks()).containsExactly(a, b);
    assertThat(memory.missing()).isEqualTo(2);
    assertThat(counters.snapshot()).containsEntry("bound.missing", 1L);
    frontier.named(c, false);
    assertThat(frontier.blocks()).containsExactly(a, b, c);
  }

  @Test
  void duringAWalk_theBlocksNoEntryNames_shouldBeKnown_andTheWalkEndWhenTheFrontierEmpties() {
    final Frontier frontier = frontier(new LogMemory());
    frontier.add(a, Frontier.Retry.now());
    frontier.add(b, Frontier.Retry.now());

    // An incomplete entry waits on a: b is a peer's head no verified entry names.
    frontier.beginWalk(Set.of(a), Set.of());
    frontier.add(c, Frontier.Retry.now());

    assertThat(frontier.isWalking()).isTrue();
    assertThat(frontier.walkRecord()).containsExactlyInAnyOrder(b, c);
    assertThat(frontier.verified(a)).isTrue();
    assertThat(frontier.verified(b)).isFalse();
    assertThat(frontier.endWalkIfDone()).isFalse();
    frontier.refused(c);
    assertThat(frontier.endWalkIfDone()).isTrue();
    assertThat(frontier.isWalking()).isFalse();
    assertThat(frontier.walkRecord()).isNull();
    assertThat(frontier.walkChanged()).isTrue();
    frontier.written();
    assertThat(frontier.walkChanged()).isFalse();
  }

  @Test
  void aStoredFrontier_shouldBeRestoredUpToTheLogsShare_unlessItWalks() {
    final Frontier bounded = frontier(new LogMemory(64, 64, 20, 4));
    bounded.restore(List.of(a, b, c), cid -> true);
    assertThat(bounded.blocks()).containsExactly(a, b);

    final Frontier walking = frontier(new LogMemory(64, 64, 20, 4));
    walking.restoreWalk(List.of(c));
    walking.restore(List.of(a, b, c), cid -> !cid.equals(b));
    assertThat(walking.blocks()).containsExactly(a, c);
    assertThat(walking.walkRecord()).containsExactly(c);
  }
}
