package io.relaypinner.relay.autotls;

import static org.assertj.core.api.Assertions.assertThat;

import io.relaypinner.relay.testing.MutableClock;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class AutoTlsEngineTest {
  private final MutableClock clock = new MutableClock(Instant.parse("2026-01-01T00:00:00Z"));
  private final AutoTlsEngine engine = new AutoTlsEngine(new AutoTlsEngine.Config(
      Duration.ofMinutes(1), Duration.ofMinutes(30), Duration.ofDays(1), 2.0 / 3.0), clock);

  @Test
  void due_shouldBeTrueAtOnce_whenThereIsNoCertificate() {
    assertThat(engine.due()).isTrue();
    engine.onAttempt();
    assertThat(engine.due()).isFalse();
    assertThat(engine.snapshot().state()).isEqualTo(AutoTlsEngine.State.OBTAINING);
  }

  @Test
  void renewal_shouldBeDueAfterTwoThirdsOfTheLifetime() {
    final Instant now = clock.instant();
    engine.onAttempt();
    engine.onCertificate(now, now.plus(Duration.ofDays(90)), true);
    assertThat(engine.snapshot().state()).isEqualTo(AutoTlsEngine.State.VALID);
    assertThat(engine.renewalTime()).isEqualTo(now.plus(Duration.ofDays(60)));
    clock.advance(Duration.ofDays(59));
    assertThat(engine.due()).isFalse();
    clock.advance(Duration.ofDays(1));
    assertThat(engine.due()).isTrue();
    assertThat(engine.snapshot().obtained()).isEqualTo(1);
  }

  @Test
  void failures_shouldBackOffExponentially_upToTheMaximum() {
    final long[] expectedMinutes = {1, 2, 4, 8, 16, 30, 30};
    for (final long minutes : expectedMinutes) {
      engine.onAttempt();
      engine.onFailure(FailureReason.BROKER_UNAVAILABLE, Optional.empty());
      assertThat(engine.untilNextAttempt()).isEqualTo(Duration.ofMinutes(minutes));
      clock.advance(Duration.ofMinutes(minutes));
      assertThat(engine.due()).isTrue();
    }
    assertThat(engine.snapshot().failures()).containsEntry(FailureReason.BROKER_UNAVAILABLE, 7L);
  }

  @Test
  void retryAfter_shouldBeHonoured_whenLongerThanTheBackoff_andCapped() {
    engine.onAttempt();
    engine.onFailure(FailureReason.ACME_RATE_LIMITED, Optional.of(Duration.ofHours(3)));
    assertThat(engine.untilNextAttempt()).isEqualTo(Duration.ofHours(3));
    engine.onAttempt();
    engine.onFailure(FailureReason.ACME_RATE_LIMITED, Optional.of(Duration.ofDays(30)));
    assertThat(engine.untilNextAttempt()).isEqualTo(Duration.ofDays(1));
    engine.onAttempt();
    engine.onFailure(FailureReason.ACME_RATE_LIMITED, Optional.of(Duration.ofSeconds(1)));
    assertThat(engine.untilNextAttempt()).isEqualTo(Duration.ofMinutes(4));
  }

  @Test
  void onFailure_shouldReportNewsOncePerStreakOfTheSameReason() {
    engine.onAttempt();
    assertThat(engine.onFailure(FailureReason.BROKER_TIMEOUT, Optional.empty())).isTrue();
    engine.onAttempt();
    assertThat(engine.onFailure(FailureReason.BROKER_TIMEOUT, Optional.empty())).isFalse();
    engine.onAttempt();
    assertThat(engine.onFailure(FailureReason.ACME_ERROR, Optional.empty())).isTrue();
    final Instant now = clock.instant();
    engine.onCertificate(now, now.plus(Duration.ofDays(1)), true);
    engine.onAttempt();
    assertThat(engine.onFailure(FailureReason.ACME_ERROR, Optional.empty())).isTrue();
  }

  @Test
  void success_shouldResetTheBackoff() {
    for (int i = 0; i < 4; i++) {
      engine.onAttempt();
      engine.onFailure(FailureReason.BROKER_REFUSED, Optional.empty());
    }
    final Instant now = clock.instant();
    engine.onCertificate(now, now.plus(Duration.ofMinutes(3)), true);
    clock.advance(Duration.ofMinutes(2));
    engine.onAttempt();
    engine.onFailure(FailureReason.BROKER_REFUSED, Optional.empty());
    assertThat(engine.untilNextAttempt()).isEqualTo(Duration.ofMinutes(1));
  }

  @Test
  void foreignCertificate_shouldMakeTheEngineIdle() {
    engine.onForeignCertificate();
    assertThat(engine.due()).isFalse();
    assertThat(engine.snapshot().state()).isEqualTo(AutoTlsEngine.State.IDLE);
  }
}
