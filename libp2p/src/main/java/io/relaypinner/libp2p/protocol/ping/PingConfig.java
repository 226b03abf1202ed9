package io.relaypinner.libp2p.protocol.ping;

import java.time.Duration;
import java.util.Objects;

/**
 * Limits of ping (libp2p/specs ping/ping.md).
 *
 * @param timeout how long the initiator waits for one echo (js-libp2p's ping {@code TIMEOUT}, 10
 *     s); a late echo fails the ping and closes the stream
 * @param idleTimeout the responder closes a stream that brings no byte for this long
 * @param maxStreamDuration the responder closes a stream this long after it opened, busy or not,
 *     so no peer holds a ping stream forever (js-libp2p 3.x aborts its own after 10 s)
 */
public record PingConfig(Duration timeout, Duration idleTimeout, Duration maxStreamDuration) {
  public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(10);
  public static final Duration DEFAULT_IDLE_TIMEOUT = Duration.ofSeconds(60);
  public static final Duration DEFAULT_MAX_STREAM_DURATION = Duration.ofMinutes(10);

  /** Upper bound for every duration. */
  public static final Duration MAX_DURATION = Duration.ofHours(1);

  public static final PingConfig DEFAULT = builder().build();

  /** Validates every limit. */
  public PingConfig {
    check("timeout", timeout);
    check("idleTimeout", idleTimeout);
    check("maxStreamDuration", maxStreamDuration);
  }

  private static void check(final String name, final Duration value) {
    Objects.requireNonNull(value, name);
    if (value.isNegative() || value.isZero() || value.compareTo(MAX_DURATION) > 0) {
      throw new IllegalArgumentException(
          name + " must be positive and at most " + MAX_DURATION + ": " + value);
    }
  }

  public static Builder builder() {
    return new Builder();
  }

  public Builder toBuilder() {
    return new Builder().timeout(timeout).idleTimeout(idleTimeout)
        .maxStreamDuration(maxStreamDuration);
  }

  /** Builds a {@link PingConfig}; {@link #build()} validates. */
  public static final class Builder {
    private Duration timeout = DEFAULT_TIMEOUT;
    private Duration idleTimeout = DEFAULT_IDLE_TIMEOUT;
    private Duration maxStreamDuration = DEFAULT_MAX_STREAM_DURATION;

    private Builder() {}

    public Builder timeout(final Duration timeout) {
      this.timeout = timeout;
      return this;
    }

    public Builder idleTimeout(final Duration idleTimeout) {
      this.idleTimeout = idleTimeout;
      return this;
    }

    public Builder maxStreamDuration(final Duration maxStreamDuration) {
      this.maxStreamDuration = maxStreamDuration;
      return this;
    }

    /**
     * The config.
     *
     * @throws IllegalArgumentException naming the first limit out of range
     */
    public PingConfig build() {
      return new PingConfig(timeout, idleTimeout, maxStreamDuration);
    }
  }
}
