package io.relaypinner.relay.config;

import java.time.Duration;

/**
 * Bounds of the relay's block storage (CONTRACT.md "Milestone 2 names": {@code
 * RELAY_STORAGE_MAX_BYTES}, {@code RELAY_GATEWAY_CACHE_MAX_BYTES}; ours: {@code
 * RELAY_GC_INTERVAL_MS}, {@code RELAY_GC_GRACE_MS}). See docs/operators.md.
 *
 * @param maxBytes the storage quota in block bytes; 0 = none
 * @param gatewayCacheMaxBytes block bytes the {@code /ipfs/} network fallback may keep cached
 *     (unpinned); 0 turns the network fallback off
 * @param gcInterval time between scheduled garbage collections; zero = only under pressure
 * @param gcGrace how long an unpinned block is kept after GC first saw it (blocks of pins and
 *     replication still running)
 */
public record StorageLimits(long maxBytes, long gatewayCacheMaxBytes, Duration gcInterval,
    Duration gcGrace) {
  static final long MAX_BYTES = 1L << 50;
  static final long MAX_GC_MS = 7L * 24 * 3_600_000;

  /** No quota, a 1 GiB gateway cache, GC every 10 minutes with a 15-minute grace period. */
  public static final StorageLimits DEFAULT = new StorageLimits(0, 1L << 30,
      Duration.ofMinutes(10), Duration.ofMinutes(15));

  public StorageLimits {
    Checks.range("RELAY_STORAGE_MAX_BYTES", maxBytes, 0, MAX_BYTES);
    Checks.range("RELAY_GATEWAY_CACHE_MAX_BYTES", gatewayCacheMaxBytes, 0, MAX_BYTES);
    Checks.millis("RELAY_GC_INTERVAL_MS", gcInterval, 0, MAX_GC_MS);
    Checks.millis("RELAY_GC_GRACE_MS", gcGrace, 0, MAX_GC_MS);
  }
}
