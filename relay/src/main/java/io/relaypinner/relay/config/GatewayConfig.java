package io.relaypinner.relay.config;

import java.time.Duration;
import java.util.Objects;

/**
 * The raw content gateway {@code GET /ipfs/<cid>}, spec 4.6 (CONTRACT.md:
 * {@code RELAY_IPFS_GATEWAY_MODE}, {@code RELAY_IPFS_FALLBACK_TIMEOUT_MS}).
 *
 * @param mode where content is looked up
 * @param fallbackTimeout how long the network fallback may take before a 504
 */
public record GatewayConfig(GatewayMode mode, Duration fallbackTimeout) {
  static final long MAX_FALLBACK_TIMEOUT_MS = 3_600_000;

  public GatewayConfig {
    Objects.requireNonNull(mode, "mode");
    Checks.millis("RELAY_IPFS_FALLBACK_TIMEOUT_MS", fallbackTimeout, 1, MAX_FALLBACK_TIMEOUT_MS);
  }
}
