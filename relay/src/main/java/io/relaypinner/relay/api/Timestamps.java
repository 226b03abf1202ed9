package io.relaypinner.relay.api;

import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Locale;

/**
 * The {@code timestamp} fields of spec 2: ISO 8601 UTC with milliseconds, always 24 characters,
 * as JavaScript's {@code Date.toISOString()} writes them (e.g. {@code 2026-11-22T10:00:00.123Z}).
 */
public final class Timestamps {
  private static final DateTimeFormatter ISO_MILLIS =
      DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ss.SSS'Z'", Locale.ROOT)
          .withZone(ZoneOffset.UTC);

  private Timestamps() {}

  /** The current time of {@code clock}. */
  public static String now(final Clock clock) {
    return format(clock.instant());
  }

  /** An instant, truncated to milliseconds. */
  public static String format(final Instant instant) {
    return ISO_MILLIS.format(instant);
  }
}
