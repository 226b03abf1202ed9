package io.relaypinner.libp2p.security.noise;

import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;

/**
 * Settings of the libp2p Noise secure channel (libp2p/specs noise/README.md). Immutable; build with
 * {@link #builder()} or start from {@link #DEFAULT}.
 *
 * @param handshakeTimeout how long the whole handshake may take before the connection is closed
 * @param streamMuxers the muxer protocol ids we advertise in {@code NoiseExtensions.stream_muxers},
 *     most preferred first (connections/inlined-muxer-negotiation.md). Empty disables early muxer
 *     negotiation: we send no extensions and always fall back to multistream-select.
 * @param maxMessageLength the largest Noise message (handshake or transport, tag included) we send
 *     and accept. The spec maximum, {@value #SPEC_MAX_MESSAGE_LENGTH}, is the default; js-libp2p
 *     sends messages of that size, so a lower value only suits tests and Java-only links.
 */
public record NoiseConfig(
    Duration handshakeTimeout, List<String> streamMuxers, int maxMessageLength) {
  /** The largest Noise message the 16-bit length prefix can carry (spec, "Wire Format"). */
  public static final int SPEC_MAX_MESSAGE_LENGTH = 65535;

  /** Lower bound of {@link #maxMessageLength}: room for our handshake messages and payload. */
  public static final int MIN_MESSAGE_LENGTH = 1024;

  /** Upper bound of {@link #streamMuxers}; real peers advertise one to three. */
  public static final int MAX_STREAM_MUXERS = 16;

  /** Upper bound of one muxer protocol id (multistream-select caps whole messages near 1 KiB). */
  public static final int MAX_PROTOCOL_ID_LENGTH = 256;

  /** Yamux 1.0.0, the only muxer js-libp2p 2.x and 3.x enable by default. */
  public static final String YAMUX = "/yamux/1.0.0";

  public static final Duration DEFAULT_HANDSHAKE_TIMEOUT = Duration.ofSeconds(10);

  public static final NoiseConfig DEFAULT = builder().build();

  /** Validates; use the {@link Builder} rather than calling this directly. */
  public NoiseConfig {
    Objects.requireNonNull(handshakeTimeout, "handshakeTimeout");
    if (handshakeTimeout.isNegative() || handshakeTimeout.isZero()) {
      throw new IllegalArgumentException("handshakeTimeout must be positive: " + handshakeTimeout);
    }
    streamMuxers = List.copyOf(streamMuxers);
    if (streamMuxers.size() > MAX_STREAM_MUXERS) {
      throw new IllegalArgumentException(
          streamMuxers.size() + " stream muxers exceed the limit of " + MAX_STREAM_MUXERS);
    }
    final HashSet<String> seen = new HashSet<>();
    for (final String muxer : streamMuxers) {
      if (muxer.isEmpty()
          || muxer.length() > MAX_PROTOCOL_ID_LENGTH
          || muxer.charAt(0) != '/'
          || muxer.indexOf('\n') >= 0) {
        throw new IllegalArgumentException("not a muxer protocol id: \"" + muxer + "\"");
      }
      if (!seen.add(muxer)) {
        throw new IllegalArgumentException("duplicate stream muxer " + muxer);
      }
    }
    if (maxMessageLength < MIN_MESSAGE_LENGTH || maxMessageLength > SPEC_MAX_MESSAGE_LENGTH) {
      throw new IllegalArgumentException(
          "maxMessageLength must be in ["
              + MIN_MESSAGE_LENGTH
              + ", "
              + SPEC_MAX_MESSAGE_LENGTH
              + "]: "
              + maxMessageLength);
    }
  }

  /** The largest plaintext one transport message carries: {@code maxMessageLength - 16}. */
  public int maxPlaintextLength() {
    return maxMessageLength - CipherState.TAG_LENGTH;
  }

  public static Builder builder() {
    return new Builder();
  }

  public Builder toBuilder() {
    return new Builder()
        .handshakeTimeout(handshakeTimeout)
        .streamMuxers(streamMuxers)
        .maxMessageLength(maxMessageLength);
  }

  /** Builds a {@link NoiseConfig}; {@link #build()} validates. */
  public static final class Builder {
    private Duration handshakeTimeout = DEFAULT_HANDSHAKE_TIMEOUT;
    private List<String> streamMuxers = List.of(YAMUX);
    private int maxMessageLength = SPEC_MAX_MESSAGE_LENGTH;

    private Builder() {}

    public Builder handshakeTimeout(final Duration timeout) {
      this.handshakeTimeout = Objects.requireNonNull(timeout, "timeout");
      return this;
    }

    public Builder streamMuxers(final List<String> muxers) {
      this.streamMuxers = List.copyOf(muxers);
      return this;
    }

    public Builder maxMessageLength(final int length) {
      this.maxMessageLength = length;
      return this;
    }

    public NoiseConfig build() {
      return new NoiseConfig(handshakeTimeout, streamMuxers, maxMessageLength);
    }
  }
}
