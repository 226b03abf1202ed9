package io.relaypinner.relay.config;

import java.time.Duration;
import java.util.Objects;

/**
 * {@code POST /pinning/import} ({@code RELAY_IMPORT_TIMEOUT_MS}, {@code RELAY_IMPORT_SLOTS},
 * {@code RELAY_IMPORT_STAGING_MAX_BYTES}): how long the whole body may take to arrive, how many
 * imports run at once (one per client address whatever this says, so one address cannot take
 * every slot), and how many bytes all imports together may stage on disk (the node budget's
 * {@code import} scope: work and disk).
 *
 * @param timeout the whole upload's deadline, from the request's head to the body's last byte
 * @param slots imports at once
 * @param stagingMaxBytes bytes staged on disk by all imports together; 0: {@code slots} times
 *     {@link #MAX_IMPORT_BYTES} ({@link #stagingBytes()}), what the slots could stage anyway
 */
public record ImportConfig(Duration timeout, int slots, long stagingMaxBytes) {
  /** 10 min: 128 MiB at about 1.8 Mbit/s. */
  public static final Duration DEFAULT_TIMEOUT = Duration.ofMinutes(10);
  public static final int DEFAULT_SLOTS = 2;
  /**
   * The largest CAR an import takes (staged on disk while it arrives, so each import slot may
   * use this much of the data directory): 128 MiB.
   */
  public static final long MAX_IMPORT_BYTES = 128L << 20;
  /** The smallest staging cap: a CAR of a few small entries, with room to spare. */
  public static final long MIN_STAGING_BYTES = 1L << 20;
  static final long MAX_TIMEOUT_MS = 24L * 3600 * 1000;
  static final int MAX_SLOTS = 16;
  public static final ImportConfig DEFAULT = new ImportConfig(DEFAULT_TIMEOUT, DEFAULT_SLOTS);

  /** The staging cap at its default: {@code slots} times {@link #MAX_IMPORT_BYTES}. */
  public ImportConfig(final Duration timeout, final int slots) {
    this(timeout, slots, 0);
  }

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
    if (stagingMaxBytes != 0 && stagingMaxBytes < MIN_STAGING_BYTES) {
      throw InvalidConfigException.badValue("RELAY_IMPORT_STAGING_MAX_BYTES",
          Long.toString(stagingMaxBytes), stagingExpectation());
    }
  }

  /**
   * Bytes all imports together may stage on disk: {@code RELAY_IMPORT_STAGING_MAX_BYTES}, by
   * default {@code slots} times {@link #MAX_IMPORT_BYTES} (256 MiB with 2 slots).
   */
  public long stagingBytes() {
    return stagingMaxBytes != 0 ? stagingMaxBytes : slots * MAX_IMPORT_BYTES;
  }

  static String stagingExpectation() {
    return "a number of bytes, at least " + MIN_STAGING_BYTES + " (0 or unset: "
        + "RELAY_IMPORT_SLOTS x " + MAX_IMPORT_BYTES + ")";
  }
}
