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

  @Test
  void awaiting_shouldBeBounded() {
    final MediaLedger ledger = new MediaLedger();
    for (int i = 0; i < MediaLedger.MAX_AWAITING; i++) {
      assertThat(ledger.onEntry(cid("e" + i), Set.of(media), () -> false)).isEmpty();
    }
    assertThat(ledger.onEntry(cid("one more"), Set.of(media), () -> false)).isNull();
    assertThat(ledger.awaitingCount()).isEqualTo(MediaLedger.MAX_AWAITING);
  }
}
