package io.relaypinner.libp2p.protocol.identify;

import java.time.Duration;
import java.util.Objects;

/**
 * Limits of identify and identify-push (libp2p/specs identify/README.md). The defaults are those
 * of js-libp2p ({@code @libp2p/identify} 3.0.x and 4.1.x): 8 KiB per message, 10 messages per
 * stream, 5 s per stream.
 *
 * @param maxMessageSize largest Identify protobuf in bytes (without its varint length prefix),
 *     both sent and accepted; what we send is trimmed to fit
 * @param maxMessages messages read from one stream before the reader stops and uses what it has
 *     (js-libp2p 4.1.x and go-libp2p read up to 10; js-libp2p 3.0.x sends and reads one)
 * @param timeout how long one identify or push stream may take, in either role
 */
public record IdentifyConfig(int maxMessageSize, int maxMessages, Duration timeout) {
  /** js-libp2p's {@code MAX_IDENTIFY_MESSAGE_SIZE}. */
  public static final int DEFAULT_MAX_MESSAGE_SIZE = 8 * 1024;

  /** js-libp2p's {@code MAX_IDENTIFY_MESSAGES}, go-libp2p's {@code maxMessages}. */
  public static final int DEFAULT_MAX_MESSAGES = 10;

  /** js-libp2p's identify {@code timeout} default. */
  public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(5);

  /** Below this our own key, versions and observed address might not fit. */
  public static final int MIN_MESSAGE_SIZE = 2 * 1024;

  /** More than this is a memory lever for a hostile peer, not a real identify. */
  public static final int MAX_MESSAGE_SIZE = 1024 * 1024;

  /** Upper bound for {@link #maxMessages}. */
  public static final int MAX_MESSAGES = 100;

  /** Upper bound for {@link #timeout}. */
  public static final Duration MAX_TIMEOUT = Duration.ofMinutes(5);

  public static final IdentifyConfig DEFAULT = builder().build();

  /** Validates every limit. */
  public IdentifyConfig {
    if (maxMessageSize < MIN_MESSAGE_SIZE || maxMessageSize > MAX_MESSAGE_SIZE) {
      throw new IllegalArgumentException(
          "maxMessageSize must be in [" + MIN_MESSAGE_SIZE + ", " + MAX_MESSAGE_SIZE + "]: "
              + maxMessageSize);
    }
    if (maxMessages < 1 || maxMessages > MAX_MESSAGES) {
      throw new IllegalArgumentException(
          "maxMessages must be in [1, " + MAX_MESSAGES + "]: " + maxMessages);
    }
    Objects.requireNonNull(timeout, "timeout");
    if (timeout.isNegative() || timeout.isZero() || timeout.compareTo(MAX_TIMEOUT) > 0) {
      throw new IllegalArgumentException(
          "timeout must be positive and at most " + MAX_TIMEOUT + ": " + timeout);
    }
  }

  public static Builder builder() {
    return new Builder();
  }

  public Builder toBuilder() {
    return new Builder().maxMessageSize(maxMessageSize).maxMessages(maxMessages).timeout(timeout);
  }

  /** Builds an {@link IdentifyConfig}; {@link #build()} validates. */
  public static final class Builder {
    private int maxMessageSize = DEFAULT_MAX_MESSAGE_SIZE;
    private int maxMessages = DEFAULT_MAX_MESSAGES;
    private Duration timeout = DEFAULT_TIMEOUT;

    private Builder() {}

    public Builder maxMessageSize(final int bytes) {
      this.maxMessageSize = bytes;
      return this;
    }

    public Builder maxMessages(final int count) {
      this.maxMessages = count;
      return this;
    }

    public Builder timeout(final Duration timeout) {
      this.timeout = timeout;
      return this;
    }

    /**
     * The config.
     *
     * @throws IllegalArgumentException naming the first limit out of range
     */
    public IdentifyConfig build() {
      return new IdentifyConfig(maxMessageSize, maxMessages, timeout);
    }
  }
}
