package io.relaypinner.relay.autotls;

import io.relaypinner.common.Backoff;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.EnumMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * When the AutoTLS client works, without I/O or Netty: the schedule of attempts, renewal and
 * back-off on an injected {@link Clock}. Not thread-safe: the service calls it from its one
 * thread (snapshots are immutable).
 *
 * <ul>
 *   <li>Without a certificate, an attempt is due at once; with one, at {@code notBefore +
 *       renewAt * lifetime} (Let's Encrypt's 90 days: renewal 30 days before expiry).
 *   <li>After a failure the next attempt waits {@code initialBackoff * 2^(n-1)} for the n-th
 *       failure in a row, at most {@code maxBackoff}; a server's Retry-After is honoured when
 *       longer (at most {@code maxRetryAfter}).
 *   <li>A failure is reported for logging at WARN once per streak of the same reason; repeats are
 *       DEBUG, so a relay behind an unreachable broker logs one line, not one per attempt.
 * </ul>
 */
public final class AutoTlsEngine {
  /** What the client is doing. */
  public enum State { STARTING, OBTAINING, VALID, BACKING_OFF, IDLE }

  /**
   * Timing.
   *
   * @param initialBackoff wait after the first failure
   * @param maxBackoff longest wait between failures
   * @param maxRetryAfter longest Retry-After honoured
   * @param renewAt fraction of the lifetime after which the certificate is renewed (0-1)
   */
  public record Config(Duration initialBackoff, Duration maxBackoff, Duration maxRetryAfter,
      double renewAt) {
    public static final Config DEFAULT = new Config(Duration.ofMinutes(1), Duration.ofHours(6),
        Duration.ofDays(7), 2.0 / 3.0);

    public Config {
      Objects.requireNonNull(initialBackoff, "initialBackoff");
      Objects.requireNonNull(maxBackoff, "maxBackoff");
      Objects.requireNonNull(maxRetryAfter, "maxRetryAfter");
      if (initialBackoff.isNegative() || initialBackoff.isZero()
          || maxBackoff.compareTo(initialBackoff) < 0) {
        throw new IllegalArgumentException("need 0 < initialBackoff <= maxBackoff");
      }
      if (!(renewAt > 0 && renewAt < 1)) {
        throw new IllegalArgumentException("renewAt must be in (0, 1): " + renewAt);
      }
    }
  }

  /**
   * What the client knows now, for logs, metrics and the HTTP API.
   *
   * @param state what it is doing
   * @param notAfter expiry of the certificate in use, if any
   * @param lastAttempt start of the last attempt, if any
   * @param lastFailure reason of the last failure since the last success, if any
   * @param nextAttempt when the next attempt is due
   * @param failures failures by reason since start
   * @param obtained certificates obtained since start
   */
  public record Snapshot(State state, Optional<Instant> notAfter, Optional<Instant> lastAttempt,
      Optional<FailureReason> lastFailure, Instant nextAttempt, Map<FailureReason, Long> failures,
      long obtained) {}

  private final Config config;
  private final Backoff backoff;
  private final Clock clock;
  private State state = State.STARTING;
  private Instant notBefore;
  private Instant notAfter;
  private Instant lastAttempt;
  private Instant nextAttempt;
  private FailureReason lastFailure;
  private int consecutiveFailures;
  private final EnumMap<FailureReason, Long> failures = new EnumMap<>(FailureReason.class);
  private long obtained;

  public AutoTlsEngine(final Config config, final Clock clock) {
    this.config = Objects.requireNonNull(config, "config");
    this.clock = Objects.requireNonNull(clock, "clock");
    this.backoff = Backoff.of(config.initialBackoff(), config.maxBackoff());
    this.nextAttempt = clock.instant();
  }

  /** A certificate of ours is in place (found at start or just obtained). */
  public void onCertificate(final Instant validFrom, final Instant validUntil,
      final boolean fresh) {
    notBefore = validFrom;
    notAfter = validUntil;
    state = State.VALID;
    consecutiveFailures = 0;
    lastFailure = null;
    if (fresh) {
      obtained++;
    }
    nextAttempt = renewalTime();
  }

  /** Someone else's certificate is in the directory: AutoTLS leaves it alone. */
  public void onForeignCertificate() {
    state = State.IDLE;
    nextAttempt = Instant.MAX;
  }

  /** When the certificate in use should be replaced. */
  public Instant renewalTime() {
    if (notAfter == null) {
      return clock.instant();
    }
    final long lifetime = Math.max(0, Duration.between(notBefore, notAfter).toMillis());
    return notBefore.plusMillis((long) (lifetime * config.renewAt()));
  }

  /** Whether an attempt should start now. */
  public boolean due() {
    return state != State.IDLE && state != State.OBTAINING
        && !clock.instant().isBefore(nextAttempt);
  }

  /** How long until the next attempt is due (zero when due). */
  public Duration untilNextAttempt() {
    if (nextAttempt.equals(Instant.MAX)) {
      return Duration.ofDays(365);
    }
    final Duration d = Duration.between(clock.instant(), nextAttempt);
    return d.isNegative() ? Duration.ZERO : d;
  }

  /** An attempt starts. */
  public void onAttempt() {
    lastAttempt = clock.instant();
    state = State.OBTAINING;
  }

  /**
   * An attempt failed; schedules the next one.
   *
   * @return whether this failure starts a new streak (log it at WARN) rather than repeating the
   *     last one
   */
  public boolean onFailure(final FailureReason reason, final Optional<Duration> retryAfter) {
    failures.merge(reason, 1L, Long::sum);
    final boolean news = reason != lastFailure;
    lastFailure = reason;
    consecutiveFailures++;
    Duration wait = backoff.delay(consecutiveFailures);
    if (retryAfter.isPresent() && retryAfter.get().compareTo(wait) > 0) {
      wait = retryAfter.get().compareTo(config.maxRetryAfter()) > 0 ? config.maxRetryAfter()
          : retryAfter.get();
    }
    nextAttempt = clock.instant().plus(wait);
    // A certificate still valid keeps serving: the state says it is being renewed late.
    state = State.BACKING_OFF;
    return news;
  }

  /** The wait chosen by the last {@link #onFailure}. */
  public Instant nextAttempt() {
    return nextAttempt;
  }

  public Snapshot snapshot() {
    return new Snapshot(state, Optional.ofNullable(notAfter), Optional.ofNullable(lastAttempt),
        Optional.ofNullable(lastFailure), nextAttempt, Map.copyOf(failures), obtained);
  }
}
