package io.relaypinner.orbitdb.log;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;

/** A clock that stands still until a test advances it. */
final class FixedClock extends Clock {
  private volatile Instant now = Instant.parse("2026-01-01T00:00:00Z");

  void advance(final Duration by) {
    now = now.plus(by);
  }

  @Override
  public ZoneId getZone() {
    return ZoneOffset.UTC;
  }

  @Override
  public Clock withZone(final ZoneId zone) {
    return this;
  }

  @Override
  public Instant instant() {
    return now;
  }
}
