package io.relaypinner.relay.replication;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class CountBudgetTest {
  @Test
  void forHeap_shouldFollowTheHeapBelowOneGib_withinASixteenthAndTheWhole() {
    final long mib = 1L << 20;
    assertThat(CountBudget.media().forHeap(160 * mib).total()).isEqualTo(31_250);
    assertThat(CountBudget.peers().forHeap(160 * mib).total()).isEqualTo(10_240);
    assertThat(CountBudget.named().forHeap(160 * mib).total()).isEqualTo(15_625);
    assertThat(CountBudget.media().forHeap(1024 * mib).total()).isEqualTo(200_000);
    assertThat(CountBudget.media().forHeap(8192 * mib).total()).isEqualTo(200_000);
    assertThat(CountBudget.media().forHeap(16 * mib).total()).isEqualTo(12_500);
    // A fresh budget: nothing reserved from the one it was sized from.
    final CountBudget small = new CountBudget(32);
    assertThat(small.reserve(32)).isTrue();
    assertThat(small.forHeap(1024 * mib).reserve(32)).isTrue();
  }
}
