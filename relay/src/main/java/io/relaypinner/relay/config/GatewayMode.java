package io.relaypinner.relay.config;

import java.util.Locale;

/** How {@code GET /ipfs/<cid>} finds content, spec 4.6 ({@code RELAY_IPFS_GATEWAY_MODE}). */
public enum GatewayMode {
  /** Locally pinned content first, then the network (the default relay's mode). */
  PINNED_FIRST("pinned-first"),
  /** Strictly local. */
  PINNED_ONLY("pinned-only");

  private final String value;

  GatewayMode(final String value) {
    this.value = value;
  }

  /** The spelling used in the environment, e.g. {@code pinned-first}. */
  public String value() {
    return value;
  }

  static GatewayMode parse(final String variable, final String text) {
    final String wanted = text.toLowerCase(Locale.ROOT);
    for (final GatewayMode mode : values()) {
      if (mode.value.equals(wanted)) {
        return mode;
      }
    }
    throw InvalidConfigException.badValue(variable, text, "pinned-first or pinned-only");
  }
}
