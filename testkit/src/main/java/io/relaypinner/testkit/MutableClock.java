package io.relaypinner.testkit;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;

/** A UTC clock tests move by hand; safe to read from any thread. */
public final class MutableClock extends Clock {
  private volatile Instant now;

  public MutableClock(final Instant start) {
    this.now = start;
  }

  public synchronized void advance(final Duration by) {
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
