package io.relaypinner.libp2p.host;

import io.relaypinner.libp2p.multistream.MultistreamConfig;
import io.relaypinner.libp2p.mux.yamux.YamuxConfig;
import io.relaypinner.libp2p.protocol.identify.IdentifyConfig;
import io.relaypinner.libp2p.protocol.ping.PingConfig;
import io.relaypinner.libp2p.security.noise.NoiseConfig;
import io.relaypinner.multiformats.Multiaddr;
import java.time.Duration;
import java.util.List;
import java.util.Objects;

/**
 * Everything a {@link Host} is configured with. Immutable; {@link #DEFAULT} listens nowhere.
 *
 * @param listenAddresses TCP addresses to bind ({@code /ip4/0.0.0.0/tcp/9091}; port 0 allowed)
 * @param agentVersion what identify reports, e.g. {@code relay-pinner/0.1.0}
 * @param dialTimeout TCP connect limit
 * @param upgradeTimeout limit for multistream + Noise + yamux on a new connection (js: 10 s)
 * @param peerStoreCapacity peers remembered before the least recently used is forgotten
 */
public record HostConfig(
    List<Multiaddr> listenAddresses,
    String agentVersion,
    Duration dialTimeout,
    Duration upgradeTimeout,
    int peerStoreCapacity,
    MultistreamConfig multistream,
    NoiseConfig noise,
    YamuxConfig yamux,
    IdentifyConfig identify,
    PingConfig ping) {
  public static final HostConfig DEFAULT = builder().build();

  public HostConfig {
    listenAddresses = List.copyOf(listenAddresses);
    Objects.requireNonNull(agentVersion, "agentVersion");
    requirePositive(dialTimeout, "dialTimeout");
    requirePositive(upgradeTimeout, "upgradeTimeout");
    if (peerStoreCapacity < 1) {
      throw new IllegalArgumentException("peerStoreCapacity must be >= 1: " + peerStoreCapacity);
    }
    Objects.requireNonNull(multistream, "multistream");
    Objects.requireNonNull(noise, "noise");
    Objects.requireNonNull(yamux, "yamux");
    Objects.requireNonNull(identify, "identify");
    Objects.requireNonNull(ping, "ping");
  }

  private static void requirePositive(final Duration value, final String name) {
    if (value == null || value.isNegative() || value.isZero()) {
      throw new IllegalArgumentException(name + " must be positive: " + value);
    }
  }

  public static Builder builder() {
    return new Builder();
  }

  public Builder toBuilder() {
    return new Builder().listenAddresses(listenAddresses).agentVersion(agentVersion)
        .dialTimeout(dialTimeout).upgradeTimeout(upgradeTimeout)
        .peerStoreCapacity(peerStoreCapacity).multistream(multistream).noise(noise).yamux(yamux)
        .identify(identify).ping(ping);
  }

  /** Validating builder; {@link #build()} checks every value. */
  public static final class Builder {
    private List<Multiaddr> listenAddresses = List.of();
    private String agentVersion = "relay-pinner";
    private Duration dialTimeout = Duration.ofSeconds(10);
    private Duration upgradeTimeout = Duration.ofSeconds(10);
    private int peerStoreCapacity = 10_000;
    private MultistreamConfig multistream = MultistreamConfig.DEFAULT;
    private NoiseConfig noise = NoiseConfig.DEFAULT;
    // One yamux frame (12-byte header + payload) per Noise message: 65519 - 12.
    private YamuxConfig yamux = YamuxConfig.builder().maxFramePayload(65_507).build();
    private IdentifyConfig identify = IdentifyConfig.DEFAULT;
    private PingConfig ping = PingConfig.DEFAULT;

    public Builder listenAddresses(final List<Multiaddr> value) {
      this.listenAddresses = value;
      return this;
    }

    public Builder agentVersion(final String value) {
      this.agentVersion = value;
      return this;
    }

    public Builder dialTimeout(final Duration value) {
      this.dialTimeout = value;
      return this;
    }

    public Builder upgradeTimeout(final Duration value) {
      this.upgradeTimeout = value;
      return this;
    }

    public Builder peerStoreCapacity(final int value) {
      this.peerStoreCapacity = value;
      return this;
    }

    public Builder multistream(final MultistreamConfig value) {
      this.multistream = value;
      return this;
    }

    public Builder noise(final NoiseConfig value) {
      this.noise = value;
      return this;
    }

    public Builder yamux(final YamuxConfig value) {
      this.yamux = value;
      return this;
    }

    public Builder identify(final IdentifyConfig value) {
      this.identify = value;
      return this;
    }

    public Builder ping(final PingConfig value) {
      this.ping = value;
      return this;
    }

    public HostConfig build() {
      return new HostConfig(listenAddresses, agentVersion, dialTimeout, upgradeTimeout,
          peerStoreCapacity, multistream, noise, yamux, identify, ping);
    }
  }
}
