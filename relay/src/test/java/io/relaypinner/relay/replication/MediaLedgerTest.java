package io.relaypinner.relay.replication;

import static org.assertj.core.api.Assertions.assertThat;

import io.relaypinner.ipfs.dagcbor.DagCbor;
import io.relaypinner.multiformats.Cid;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/** Media is eligible per (database, entry): only once that entry's history is complete. */
class MediaLedgerTest {
  private static Cid cid(final String text) {
    return DagCbor.cid(text.getBytes(StandardCharsets.UTF_8));
  }

  private final Cid entry = cid("entry");
  private final Cid media = cid("media");

  @Test
  void media_shouldBeReportedOnlyOnceItsEntryIsComplete() {
    final MediaLedger ledger = new MediaLedger();
    final AtomicBoolean complete = new AtomicBoolean(false);

    assertThat(ledger.onEntry(entry, Set.of(media), complete::get)).isEmpty();
    assertThat(ledger.report(media)).isFalse();
    assertThat(ledger.onCompleted(List.of(cid("other")))).isEmpty();

    assertThat(ledger.onCompleted(List.of(entry))).containsExactly(media);
    assertThat(ledger.report(media)).isTrue();
    assertThat(ledger.report(media)).isFalse();
    assertThat(ledger.awaitingCount()).isZero();
  }

  @Test
  void media_shouldBeEligibleAtOnce_whenTheEntryIsCompleteAlready() {
    final MediaLedger ledger = new MediaLedger();
    assertThat(ledger.onEntry(entry, Set.of(media), () -> true)).containsExactly(media);
    assertThat(ledger.report(media)).isTrue();
  }

  @Test
  void media_shouldNotBeReportedForADatabase_whenAnotherDatabaseCompletedTheSameCid() {
    final MediaLedger a = new MediaLedger();
    final MediaLedger b = new MediaLedger();
    // Database A completes an entry naming the media; database B has one whose history is not.
    assertThat(a.onEntry(entry, Set.of(media), () -> true)).containsExactly(media);
    assertThat(b.onEntry(cid("b-entry"), Set.of(media), () -> false)).isEmpty();

    assertThat(a.report(media)).isTrue();
    assertThat(b.isEligible(media)).isFalse();
    assertThat(b.report(media)).isFalse();
  }

  private static Set<Cid> media(final String prefix, final int count) {
    final Set<Cid> out = new java.util.LinkedHashSet<>();
    for (int i = 0; i < count; i++) {
      out.add(cid(prefix + i));
    }
    return out;
  }

  @Test
  void awaiting_shouldBeBounded() {
    final MediaLedger ledger = new MediaLedger();
    for (int i = 0; i < MediaLedger.MAX_AWAITING; i++) {
      assertThat(ledger.onEntry(cid("e" + i), Set.of(cid("m" + i)), () -> false)).isEmpty();
    }
    assertThat(ledger.onEntry(cid("one more"), Set.of(media), () -> false)).isNull();
    assertThat(ledger.awaitingCount()).isEqualTo(MediaLedger.MAX_AWAITING);
  }

  @Test
  void awaiting_shouldBeBoundedInMediaCids_notOnlyInEntries() {
    // A hostile writer's incomplete entries each naming 1,000 media (the extractor's cap per
    // payload): ten of them fill the ledger; before, 10,000 such entries (10 million CIDs) fit.
    final MediaLedger ledger = new MediaLedger();
    for (int i = 0; i < 10; i++) {
      assertThat(ledger.onEntry(cid("e" + i), media("e" + i + "/", 1_000), () -> false))
          .isEmpty();
    }
    assertThat(ledger.onEntry(cid("e10"), media("e10/", 1_000), () -> false)).isNull();
    assertThat(ledger.heldCids()).isEqualTo(MediaLedger.MAX_AWAITING);
  }

  @Test
  void ledgersOfAllDatabases_shouldShareOneBudget_andGiveItBackWhenClosed() {
    final CountBudget budget = new CountBudget(2_500);
    final MediaLedger a = new MediaLedger(budget);
    final MediaLedger b = new MediaLedger(budget);
    assertThat(a.onEntry(cid("a"), media("a/", 2_000), () -> false)).isEmpty();
    // B's entry does not fit in what A left: not remembered (its media waits for a scan).
    assertThat(b.onEntry(cid("b"), media("b/", 1_000), () -> false)).isNull();
    assertThat(b.onEntry(cid("b2"), media("b2/", 500), () -> false)).isEmpty();
    assertThat(budget.usedCount()).isEqualTo(2_500);

    // Eligible media of A replaces A's own oldest when the budget is spent.
    assertThat(a.onCompleted(List.of(cid("a")))).hasSize(2_000);
    assertThat(a.heldCids()).isEqualTo(2_000);
    assertThat(a.onEntry(cid("a3"), Set.of(cid("late")), () -> true)).containsExactly(
        cid("late"));
    assertThat(a.isEligible(cid("late"))).isTrue();
    assertThat(a.isEligible(cid("a/0"))).isFalse();
    assertThat(budget.usedCount()).isEqualTo(2_500);

    a.close();
    assertThat(budget.usedCount()).isEqualTo(500);
    b.close();
    assertThat(budget.usedCount()).isZero();
    assertThat(a.onEntry(cid("after"), Set.of(media), () -> false)).isNull();
  }
}
