package io.relaypinner.handoff.records;

import java.time.Clock;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;

/** A clock that starts at a fixed instant and moves one second forward each time it is read. */
public final class TickingClock extends Clock {
  private long millis;

  public TickingClock(final long startMillis) {
    this.millis = startMillis;
  }

  @Override
  public synchronized long millis() {
    final long now = millis;
    millis += 1000;
    return now;
  }

  @Override
  public Instant instant() {
    return Instant.ofEpochMilli(millis());
  }

  @Override
  public ZoneId getZone() {
    return ZoneOffset.UTC;
  }

  @Override
  public Clock withZone(final ZoneId zone) {
    throw new UnsupportedOperationException();
  }
}
