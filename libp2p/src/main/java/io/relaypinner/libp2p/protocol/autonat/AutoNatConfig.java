package io.relaypinner.libp2p.protocol.autonat;

import java.time.Duration;

/**
 * Limits of the AutoNAT v1 server (libp2p/specs autonat/autonat-v1.md), after go-libp2p's
 * defaults: 30 dial-backs a minute in all, 3 per peer, 15 s per dial.
 *
 * @param globalDialsPerWindow dial-back requests served per {@link #window} in all
 * @param peerDialsPerWindow dial-back requests served per {@link #window} per peer
 * @param window the rate window
 * @param dialTimeout how long one dial-back may take
 * @param maxAddresses addresses of one request that are tried (in order)
 * @param streamTimeout how long the request may take to arrive
 * @param maxMessageSize largest request read
 */
public record AutoNatConfig(int globalDialsPerWindow, int peerDialsPerWindow, Duration window,
    Duration dialTimeout, int maxAddresses, Duration streamTimeout, int maxMessageSize) {
  public static final AutoNatConfig DEFAULT = new AutoNatConfig(30, 3, Duration.ofMinutes(1),
      Duration.ofSeconds(15), 16, Duration.ofSeconds(60), 4_096);

  public AutoNatConfig {
    if (globalDialsPerWindow < 1 || peerDialsPerWindow < 1 || maxAddresses < 1
        || maxMessageSize < 256 || window.isNegative() || window.isZero()
        || dialTimeout.isNegative() || dialTimeout.isZero() || streamTimeout.isNegative()
        || streamTimeout.isZero()) {
      throw new IllegalArgumentException("AutoNAT limits must be positive");
    }
  }

  /** This config with other rate limits (tests). */
  public AutoNatConfig withRates(final int global, final int perPeer) {
    return new AutoNatConfig(global, perPeer, window, dialTimeout, maxAddresses, streamTimeout,
        maxMessageSize);
  }
}
