package io.relaypinner.relay.config;

import java.time.Duration;
import java.util.Objects;

/**
 * {@code POST /pinning/import} ({@code RELAY_IMPORT_TIMEOUT_MS}, {@code RELAY_IMPORT_SLOTS}):
 * how long the whole body may take to arrive, and how many imports run at once (one per client
 * address whatever this says, so one address cannot take every slot). Each slot may stage up to
 * the import's byte limit on disk.
 *
 * @param timeout the whole upload's deadline, from the request's head to the body's last byte
 * @param slots imports at once
 */
public record ImportConfig(Duration timeout, int slots) {
  /** 10 min: 128 MiB at about 1.8 Mbit/s. */
  public static final Duration DEFAULT_TIMEOUT = Duration.ofMinutes(10);
  public static final int DEFAULT_SLOTS = 2;
  static final long MAX_TIMEOUT_MS = 24L * 3600 * 1000;
  static final int MAX_SLOTS = 16;
  public static final ImportConfig DEFAULT = new ImportConfig(DEFAULT_TIMEOUT, DEFAULT_SLOTS);

  public ImportConfig {
    Objects.requireNonNull(timeout, "timeout");
    if (timeout.isNegative() || timeout.isZero() || timeout.toMillis() > MAX_TIMEOUT_MS) {
      throw InvalidConfigException.badValue("RELAY_IMPORT_TIMEOUT_MS",
          Long.toString(timeout.toMillis()), Checks.millisExpectation(1, MAX_TIMEOUT_MS));
    }
    if (slots < 1 || slots > MAX_SLOTS) {
      throw InvalidConfigException.badValue("RELAY_IMPORT_SLOTS", Integer.toString(slots),
          Checks.intExpectation(1, MAX_SLOTS));
    }
  }
}
