package io.relaypinner.relay.config;

import java.util.Locale;

/**
 * Whether and how the relay runs the Kad-DHT {@code /ipfs/kad/1.0.0} ({@code RELAY_DHT_MODE};
 * {@code RELAY_DISABLE_DHT=true}, orbitdb-relay's switch, means {@link #OFF}). docs/dht.md.
 */
public enum DhtMode {
  /** No DHT. */
  OFF("off"),
  /**
   * The relay asks the DHT and does not answer it (the default): nobody routes lookups through
   * it, so a public relay is not flooded with the DHT's traffic (orbitdb-relay's lesson: a relay
   * pulled into server mode by its public address was flooded until it hung).
   */
  CLIENT("client"),
  /** The relay also answers {@code FIND_NODE}, {@code GET_PROVIDERS}, {@code ADD_PROVIDER}. */
  SERVER("server"),
  /**
   * {@link #SERVER} when the relay is publicly reachable (deployed mode with a public advertised
   * address), {@link #CLIENT} otherwise; decided once at start.
   */
  AUTO("auto");

  private final String value;

  DhtMode(final String value) {
    this.value = value;
  }

  /** The spelling used in the environment, e.g. {@code client}. */
  public String value() {
    return value;
  }

  static DhtMode parse(final String variable, final String text) {
    final String wanted = text.toLowerCase(Locale.ROOT);
    for (final DhtMode mode : values()) {
      if (mode.value.equals(wanted)) {
        return mode;
      }
    }
    throw InvalidConfigException.badValue(variable, text, "off, client, server or auto");
  }
}
