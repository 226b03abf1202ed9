package io.relaypinner.libp2p.multistream;

import java.time.Duration;
import java.util.Objects;

/**
 * Limits of one multistream-select 1.0 negotiation ({@code multiformats/multistream-select}),
 * shared by {@link MultistreamResponder} and {@link MultistreamInitiator}. Immutable; build with
 * {@link #builder()} or use {@link #DEFAULT}.
 *
 * @param timeout how long a negotiation may take before the channel is closed; js-libp2p uses 10 s
 *     for the connection upgrade and for protocol negotiation on every stream
 * @param maxMessageLength the largest message accepted, newline included, at most {@value
 *     MultistreamProtocol#MAX_MESSAGE_LENGTH} and at least the header's 19 bytes
 * @param maxProposals how many messages after the header a responder answers before it gives up;
 *     js-libp2p dialers send one to three
 * @param maxNegotiationBytes how many bytes of negotiation messages, prefixes included, either side
 *     reads before it gives up
 */
public record MultistreamConfig(
    Duration timeout, int maxMessageLength, int maxProposals, int maxNegotiationBytes) {
  /** 10 s, 1024 bytes, 32 proposals, 16 KiB. */
  public static final MultistreamConfig DEFAULT = builder().build();

  /** The header message {@code /multistream/1.0.0\n} must always fit. */
  static final int MIN_MESSAGE_LENGTH = MultistreamProtocol.PROTOCOL_ID.length() + 1;

  private static final int MAX_PROPOSALS = 1024;
  private static final int MAX_NEGOTIATION_BYTES = 1 << 20;

  /** Validates every limit. */
  public MultistreamConfig {
    Objects.requireNonNull(timeout, "timeout");
    if (timeout.isNegative() || timeout.isZero()) {
      throw new IllegalArgumentException("timeout must be positive: " + timeout);
    }
    if (maxMessageLength < MIN_MESSAGE_LENGTH
        || maxMessageLength > MultistreamProtocol.MAX_MESSAGE_LENGTH) {
      throw new IllegalArgumentException("maxMessageLength must be in [" + MIN_MESSAGE_LENGTH
          + ", " + MultistreamProtocol.MAX_MESSAGE_LENGTH + "]: " + maxMessageLength);
    }
    if (maxProposals < 1 || maxProposals > MAX_PROPOSALS) {
      throw new IllegalArgumentException(
          "maxProposals must be in [1, " + MAX_PROPOSALS + "]: " + maxProposals);
    }
    // Room for the header and one full-size proposal, each with a 2-byte prefix.
    final int floor = MIN_MESSAGE_LENGTH + maxMessageLength + 4;
    if (maxNegotiationBytes < floor || maxNegotiationBytes > MAX_NEGOTIATION_BYTES) {
      throw new IllegalArgumentException("maxNegotiationBytes must be in [" + floor + ", "
          + MAX_NEGOTIATION_BYTES + "]: " + maxNegotiationBytes);
    }
  }

  /** A builder holding the defaults. */
  public static Builder builder() {
    return new Builder();
  }

  /** A builder holding this configuration's values. */
  public Builder toBuilder() {
    return new Builder()
        .timeout(timeout)
        .maxMessageLength(maxMessageLength)
        .maxProposals(maxProposals)
        .maxNegotiationBytes(maxNegotiationBytes);
  }

  /** Collects values; {@link #build()} validates them. */
  public static final class Builder {
    private Duration timeout = Duration.ofSeconds(10);
    private int maxMessageLength = MultistreamProtocol.MAX_MESSAGE_LENGTH;
    private int maxProposals = 32;
    private int maxNegotiationBytes = 16 * 1024;

    private Builder() {}

    public Builder timeout(final Duration value) {
      this.timeout = value;
      return this;
    }

    public Builder maxMessageLength(final int value) {
      this.maxMessageLength = value;
      return this;
    }

    public Builder maxProposals(final int value) {
      this.maxProposals = value;
      return this;
    }

    public Builder maxNegotiationBytes(final int value) {
      this.maxNegotiationBytes = value;
      return this;
    }

    /**
     * The configuration.
     *
     * @throws IllegalArgumentException when a value is out of range
     */
    public MultistreamConfig build() {
      return new MultistreamConfig(timeout, maxMessageLength, maxProposals, maxNegotiationBytes);
    }
  }
}
