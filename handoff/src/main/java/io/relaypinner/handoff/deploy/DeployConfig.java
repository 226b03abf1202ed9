package io.relaypinner.handoff.deploy;

import java.net.URI;
import java.time.Duration;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;

/**
 * Settings of one {@link DeployController} run. Immutable; {@link #builder()} validates.
 *
 * @param handoff a forced handoff (empty: the manifest decides)
 * @param origin the origin of the page the deployer runs in, if any (an {@code https} origin
 *     makes push impossible: mixed content)
 * @param maxCandidates hosts tried at most (1-5)
 * @param instanceName the name in registration ids ({@code relay:<profile>:<name>:<hash>})
 * @param setupAttempts push: {@code GET /health} tries on the setup endpoint before the attempt
 *     fails
 * @param setupBackoff push: first delay between those tries, doubled up to 8 times this
 * @param ackTimeout pull: wait for the acknowledgement (spec: 2 minutes)
 * @param pollInterval pull and registration: how often the record store is read
 * @param relayTimeout wait for the relay to prove the PeerId (libp2p handshake at the instance's
 *     libp2p port) and for its own {@code GET /health} to answer with it
 * @param registrationTimeout wait for the guest's registration (reported, not fatal)
 * @param httpTimeout per HTTP request
 * @param authorizationValidity how long the owner authorization is valid
 * @param entryValidity how long the pull configuration entry is valid ({@code expiresAt})
 * @param derivePublisherKey push only: derive the publisher key from the wallet (HMAC-SHA256 over
 *     the profile label) and send it to the guest, for a publisher address that is stable across
 *     redeployments; sends a secret over plain HTTP
 * @param channel the channel of the deployer's messages
 */
public record DeployConfig(Optional<HandoffMode> handoff, Optional<URI> origin,
    int maxCandidates, String instanceName, int setupAttempts, Duration setupBackoff,
    Duration ackTimeout, Duration pollInterval, Duration relayTimeout,
    Duration registrationTimeout, Duration httpTimeout, Duration authorizationValidity,
    Duration entryValidity, boolean derivePublisherKey, String channel) {
  /** Most candidates per deployment (spec 8). */
  public static final int MAX_CANDIDATES = 5;
  /** Default acknowledgement wait (spec 8). */
  public static final Duration DEFAULT_ACK_TIMEOUT = Duration.ofMinutes(2);
  /** The browser deployer's channel (notes/handoff.md 1). */
  public static final String DEFAULT_CHANNEL = "ALEPH-CLOUDSOLUTIONS";

  public static final DeployConfig DEFAULT = builder().build();

  public DeployConfig {
    Objects.requireNonNull(handoff, "handoff");
    Objects.requireNonNull(origin, "origin");
    Objects.requireNonNull(instanceName, "instanceName");
    Objects.requireNonNull(channel, "channel");
    if (maxCandidates < 1 || maxCandidates > MAX_CANDIDATES) {
      throw new IllegalArgumentException("max candidates must be 1-" + MAX_CANDIDATES + ", got "
          + maxCandidates);
    }
    if (setupAttempts < 1) {
      throw new IllegalArgumentException("setup attempts must be positive");
    }
    if (!instanceName.matches("[A-Za-z0-9._-]{1,64}")) {
      throw new IllegalArgumentException("instance name must be 1-64 of A-Z a-z 0-9 . _ -");
    }
    for (final Duration d : new Duration[] {setupBackoff, ackTimeout, pollInterval, relayTimeout,
        registrationTimeout, httpTimeout, authorizationValidity, entryValidity}) {
      if (d.isNegative() || d.isZero()) {
        throw new IllegalArgumentException("durations must be positive");
      }
    }
    origin.ifPresent(o -> {
      final String scheme = o.getScheme() == null ? "" : o.getScheme().toLowerCase(Locale.ROOT);
      if (!scheme.equals("http") && !scheme.equals("https") || o.getHost() == null) {
        throw new IllegalArgumentException("origin must be an http:// or https:// URL, got "
            + o);
      }
    });
  }

  /**
   * Whether the deployer can open TCP connections to instances (a libp2p handshake, plain-HTTP
   * probes): everywhere but in a page served over HTTPS.
   */
  public boolean canDial() {
    return !httpsOrigin();
  }

  /** Whether the deployer runs in a page served over HTTPS. */
  public boolean httpsOrigin() {
    return origin.map(o -> "https".equalsIgnoreCase(o.getScheme())).orElse(false);
  }

  public static Builder builder() {
    return new Builder();
  }

  public Builder toBuilder() {
    final Builder b = new Builder();
    b.handoff = handoff;
    b.origin = origin;
    b.maxCandidates = maxCandidates;
    b.instanceName = instanceName;
    b.setupAttempts = setupAttempts;
    b.setupBackoff = setupBackoff;
    b.ackTimeout = ackTimeout;
    b.pollInterval = pollInterval;
    b.relayTimeout = relayTimeout;
    b.registrationTimeout = registrationTimeout;
    b.httpTimeout = httpTimeout;
    b.authorizationValidity = authorizationValidity;
    b.entryValidity = entryValidity;
    b.derivePublisherKey = derivePublisherKey;
    b.channel = channel;
    return b;
  }

  /** Builds a {@link DeployConfig}. */
  public static final class Builder {
    private Optional<HandoffMode> handoff = Optional.empty();
    private Optional<URI> origin = Optional.empty();
    private int maxCandidates = MAX_CANDIDATES;
    private String instanceName = "relay-pinner";
    private int setupAttempts = 45;
    private Duration setupBackoff = Duration.ofMillis(500);
    private Duration ackTimeout = DEFAULT_ACK_TIMEOUT;
    private Duration pollInterval = Duration.ofSeconds(1);
    private Duration relayTimeout = Duration.ofSeconds(60);
    private Duration registrationTimeout = Duration.ofSeconds(60);
    private Duration httpTimeout = Duration.ofSeconds(10);
    private Duration authorizationValidity = Duration.ofDays(90);
    private Duration entryValidity = Duration.ofMinutes(30);
    private boolean derivePublisherKey;
    private String channel = DEFAULT_CHANNEL;

    private Builder() {}

    public Builder handoff(final HandoffMode value) {
      this.handoff = Optional.ofNullable(value);
      return this;
    }

    public Builder origin(final URI value) {
      this.origin = Optional.ofNullable(value);
      return this;
    }

    public Builder maxCandidates(final int value) {
      this.maxCandidates = value;
      return this;
    }

    public Builder instanceName(final String value) {
      this.instanceName = value;
      return this;
    }

    public Builder setupAttempts(final int value) {
      this.setupAttempts = value;
      return this;
    }

    public Builder setupBackoff(final Duration value) {
      this.setupBackoff = value;
      return this;
    }

    public Builder ackTimeout(final Duration value) {
      this.ackTimeout = value;
      return this;
    }

    public Builder pollInterval(final Duration value) {
      this.pollInterval = value;
      return this;
    }

    public Builder relayTimeout(final Duration value) {
      this.relayTimeout = value;
      return this;
    }

    public Builder registrationTimeout(final Duration value) {
      this.registrationTimeout = value;
      return this;
    }

    public Builder httpTimeout(final Duration value) {
      this.httpTimeout = value;
      return this;
    }

    public Builder authorizationValidity(final Duration value) {
      this.authorizationValidity = value;
      return this;
    }

    public Builder entryValidity(final Duration value) {
      this.entryValidity = value;
      return this;
    }

    public Builder derivePublisherKey(final boolean value) {
      this.derivePublisherKey = value;
      return this;
    }

    public Builder channel(final String value) {
      this.channel = value;
      return this;
    }

    /**
     * @throws IllegalArgumentException naming the bad value
     */
    public DeployConfig build() {
      return new DeployConfig(handoff, origin, maxCandidates, instanceName, setupAttempts,
          setupBackoff, ackTimeout, pollInterval, relayTimeout, registrationTimeout, httpTimeout,
          authorizationValidity, entryValidity, derivePublisherKey, channel);
    }
  }
}
