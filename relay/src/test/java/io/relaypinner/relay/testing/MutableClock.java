package io.relaypinner.relay.testing;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;

/** A clock that moves only when a test says so. */
public final class MutableClock extends Clock {
  private volatile Instant now;

  public MutableClock(final Instant start) {
    this.now = start;
  }

  public void advance(final Duration duration) {
    now = now.plus(duration);
  }

  @Override
  public ZoneId getZone() {
    return ZoneOffset.UTC;
  }

  @Override
  public Clock withZone(final ZoneId zone) {
    throw new UnsupportedOperationException("UTC only");
  }

  @Override
  public Instant instant() {
    return now;
  }
}
