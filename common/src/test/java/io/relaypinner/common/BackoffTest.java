package io.relaypinner.common;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class BackoffTest {
  private static List<Long> millis(final Backoff backoff, final int failures) {
    final List<Long> delays = new ArrayList<>();
    for (int n = 1; n <= failures; n++) {
      delays.add(backoff.delayMillis(n));
    }
    return delays;
  }

  private static List<Duration> durations(final Backoff backoff, final int failures) {
    final List<Duration> delays = new ArrayList<>();
    for (int n = 1; n <= failures; n++) {
      delays.add(backoff.delay(n));
    }
    return delays;
  }

  @Test
  void delayMillis_shouldDoubleFromMinUpToMax_asTheLogsMissingBlocksWait() {
    // Frontier.Retry: min(2 min, 1 s << min(attempts, 20)).
    assertThat(millis(Backoff.of(Duration.ofSeconds(1), Duration.ofMinutes(2)), 10))
        .containsExactly(1_000L, 2_000L, 4_000L, 8_000L, 16_000L, 32_000L, 64_000L, 120_000L,
            120_000L, 120_000L);
  }

  @Test
  void delayMillis_shouldMatchTheSyncEnginesStoreRetries() {
    // SyncEngine: min(60 s, 2 s << min(n - 1, 16)).
    assertThat(millis(Backoff.of(Duration.ofSeconds(2), Duration.ofSeconds(60)), 7))
        .containsExactly(2_000L, 4_000L, 8_000L, 16_000L, 32_000L, 60_000L, 60_000L);
  }

  @Test
  void delayMillis_shouldMatchTheMediaPinQueuesStoreRetries() {
    // MediaPinQueue: min(30 s, 1 s << min(tries - 1, 16)).
    assertThat(millis(Backoff.of(Duration.ofSeconds(1), Duration.ofSeconds(30)), 7))
        .containsExactly(1_000L, 2_000L, 4_000L, 8_000L, 16_000L, 30_000L, 30_000L);
  }

  @Test
  void delayMillis_shouldMatchThePeerBans() {
    // PeerBanEngine (defaults): min(30 min, 1 min << min(20, bans so far)).
    assertThat(millis(Backoff.of(Duration.ofMinutes(1), Duration.ofMinutes(30)), 7))
        .containsExactly(60_000L, 120_000L, 240_000L, 480_000L, 960_000L, 1_800_000L,
            1_800_000L);
    // A ban duration of zero bans for no time, however often.
    assertThat(millis(Backoff.of(Duration.ZERO, Duration.ofMinutes(30)), 100))
        .containsOnly(0L);
  }

  @Test
  void delayMillis_shouldMatchTheBitswapRebroadcast_doublingThreeTimes() {
    // WantManager: 5 s << min(rounds, 3).
    assertThat(millis(Backoff.of(Duration.ofSeconds(5), Duration.ofSeconds(40)), 6))
        .containsExactly(5_000L, 10_000L, 20_000L, 40_000L, 40_000L, 40_000L);
  }

  @Test
  void delay_shouldMatchTheDeployersHealthPolls_andAutoTls() {
    // PushHandoff: 500 ms, doubled up to 8 times that.
    assertThat(durations(Backoff.of(Duration.ofMillis(500), Duration.ofMillis(4_000)), 6))
        .containsExactly(Duration.ofMillis(500), Duration.ofSeconds(1), Duration.ofSeconds(2),
            Duration.ofSeconds(4), Duration.ofSeconds(4), Duration.ofSeconds(4));
    // AutoTlsEngine (defaults): 1 min * 2^(n-1), at most 6 h.
    assertThat(durations(Backoff.of(Duration.ofMinutes(1), Duration.ofHours(6)), 11))
        .containsExactly(Duration.ofMinutes(1), Duration.ofMinutes(2), Duration.ofMinutes(4),
            Duration.ofMinutes(8), Duration.ofMinutes(16), Duration.ofMinutes(32),
            Duration.ofMinutes(64), Duration.ofMinutes(128), Duration.ofMinutes(256),
            Duration.ofHours(6), Duration.ofHours(6));
  }

  @Test
  void delay_shouldKeepSubMillisecondPrecision_whileDelayMillisTruncatesMinAndMax() {
    final Backoff backoff = Backoff.of(Duration.ofNanos(1_500_000), Duration.ofMillis(5));
    assertThat(durations(backoff, 4)).containsExactly(Duration.ofNanos(1_500_000),
        Duration.ofMillis(3), Duration.ofMillis(5), Duration.ofMillis(5));
    assertThat(millis(backoff, 4)).containsExactly(1L, 2L, 4L, 5L);
  }

  @Test
  void delay_shouldEqualTheOldShiftFormulas_forEveryStreakTheirShiftCapLeftAlone() {
    // The copies computed min(max, min << min(n - 1, cap)) with caps of 16, 20 or 30 against
    // overflow; wherever min << cap passes max (every constant and default) they agree exactly.
    final long[][] pairs = {{1_000, 120_000}, {2_000, 60_000}, {1_000, 30_000},
        {60_000, 1_800_000}, {60_000, 1_800_000}, {1, 1}, {7, 1_000}, {0, 5}, {3, 3 << 16}};
    for (final long[] pair : pairs) {
      final Backoff backoff = Backoff.of(Duration.ofMillis(pair[0]), Duration.ofMillis(pair[1]));
      for (int n = 1; n <= 200; n++) {
        final long old = Math.min(pair[1], pair[0] << Math.min(n - 1, 16));
        assertThat(backoff.delayMillis(n)).as("%s, failure %d", backoff, n).isEqualTo(old);
        assertThat(backoff.delay(n)).isEqualTo(Duration.ofMillis(old));
      }
    }
  }

  @Test
  void delay_shouldSaturateAtMax_forAnyStreak() {
    final Backoff backoff = Backoff.of(Duration.ofMillis(3), Duration.ofSeconds(Long.MAX_VALUE));
    assertThat(backoff.delay(Integer.MAX_VALUE)).isEqualTo(backoff.max());
    assertThat(backoff.delay(62)).isEqualTo(Duration.ofMillis(3).multipliedBy(1L << 61));
    final Backoff millis = Backoff.of(Duration.ofMillis(3), Duration.ofMillis(Long.MAX_VALUE));
    assertThat(millis.delayMillis(Integer.MAX_VALUE)).isEqualTo(Long.MAX_VALUE);
    assertThat(millis.delayMillis(62)).isEqualTo(3L << 61);
    assertThat(millis.delayMillis(63)).isEqualTo(Long.MAX_VALUE);
  }

  @Test
  void of_shouldRefuseNegativeOrInvertedBounds_andDelayAFailureCountBelowOne() {
    assertThatThrownBy(() -> Backoff.of(Duration.ofMillis(-1), Duration.ofSeconds(1)))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> Backoff.of(Duration.ofSeconds(2), Duration.ofSeconds(1)))
        .isInstanceOf(IllegalArgumentException.class);
    final Backoff backoff = Backoff.of(Duration.ofSeconds(1), Duration.ofSeconds(1));
    assertThat(backoff.delay(1)).isEqualTo(Duration.ofSeconds(1));
    assertThatThrownBy(() -> backoff.delay(0)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> backoff.delayMillis(-3))
        .isInstanceOf(IllegalArgumentException.class);
  }
}
