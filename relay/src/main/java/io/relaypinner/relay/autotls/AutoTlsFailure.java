package io.relaypinner.relay.autotls;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * One attempt failed (an expected outcome against remote services, not our bug).
 *
 * @param reason the bounded reason
 * @param detail one line for the log, never a stack trace
 * @param retryAfter what the server asked for (Retry-After), if anything
 */
public final class AutoTlsFailure extends Exception {
  private static final long serialVersionUID = 1L;
  private final FailureReason reason;
  private final transient Optional<Duration> retryAfter;

  public AutoTlsFailure(final FailureReason reason, final String detail,
      final Optional<Duration> retryAfter) {
    super(detail);
    this.reason = Objects.requireNonNull(reason, "reason");
    this.retryAfter = Objects.requireNonNull(retryAfter, "retryAfter");
  }

  public AutoTlsFailure(final FailureReason reason, final String detail) {
    this(reason, detail, Optional.empty());
  }

  public FailureReason reason() {
    return reason;
  }

  public Optional<Duration> retryAfter() {
    return retryAfter;
  }
}
