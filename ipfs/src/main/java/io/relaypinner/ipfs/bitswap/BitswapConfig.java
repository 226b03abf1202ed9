package io.relaypinner.ipfs.bitswap;

import java.time.Duration;

/**
 * Limits and timings of the bitswap server and client ({@link Bitswap}, {@link BitswapEngine}).
 * Defaults follow the spec and Helia's {@code @helia/bitswap} where they have one (4 MiB
 * messages, blocks up to 1 KiB answered in place of HAVE); the rest bound what one peer can make
 * us hold or do. Build with {@link #builder()}; every value is checked.
 *
 * @param maxMessageSize largest length-prefixed message we read; a larger prefix closes the stream
 * @param maxWantlistEntries most wantlist entries in one received message (more: stream closed)
 * @param maxBlocksPerMessage most blocks in one received message (more: stream closed)
 * @param maxPresencesPerMessage most block presences in one received message (more: closed)
 * @param maxWantsPerPeer entries one peer's wantlist may hold; further wants are ignored
 * @param maxSendMessageSize a message we send carries blocks up to about this many bytes (one
 *     block larger than that still goes alone)
 * @param bytesPerTurn the quantum of the deficit round robin: block bytes one peer is credited
 *     per round before the next peer's turn
 * @param maxConcurrentLoads blockstore reads (turns) in flight on the storage executor at once
 * @param maxSizeReplaceHaveWithBlock a WANT-HAVE for a block this small gets the block
 * @param inboundIdleTimeout an inbound stream silent this long is closed
 * @param outboundIdleTimeout our outbound stream to a peer is closed after this long unused
 *     (Helia aborts inbound streams idle for 5 s, so this stays below)
 * @param maxOutboxMessages messages queued for one peer while its stream is not writable; beyond
 *     this the oldest is dropped (the wants it served stay in the ledger)
 * @param rebroadcastInterval unanswered wants are sent again this often (doubling per round
 *     without an answer, up to {@code 8 x} this)
 * @param maxClientWants distinct CIDs the client wants at once; more fail at once
 */
public record BitswapConfig(
    int maxMessageSize, int maxWantlistEntries, int maxBlocksPerMessage,
    int maxPresencesPerMessage, int maxWantsPerPeer, int maxSendMessageSize, int bytesPerTurn,
    int maxConcurrentLoads, int maxSizeReplaceHaveWithBlock, Duration inboundIdleTimeout,
    Duration outboundIdleTimeout, int maxOutboxMessages, Duration rebroadcastInterval,
    int maxClientWants) {

  /** 4 MiB, the spec's and Helia's message limit. */
  public static final int MAX_MESSAGE_SIZE = 4 * 1024 * 1024;

  public static final BitswapConfig DEFAULT = builder().build();

  /** Validates. */
  public BitswapConfig {
    atLeast(maxMessageSize, 1024, "maxMessageSize");
    atLeast(maxWantlistEntries, 1, "maxWantlistEntries");
    atLeast(maxBlocksPerMessage, 1, "maxBlocksPerMessage");
    atLeast(maxPresencesPerMessage, 1, "maxPresencesPerMessage");
    atLeast(maxWantsPerPeer, 1, "maxWantsPerPeer");
    atLeast(maxSendMessageSize, 1, "maxSendMessageSize");
    if (maxSendMessageSize > maxMessageSize) {
      throw new IllegalArgumentException("maxSendMessageSize (" + maxSendMessageSize
          + ") must be <= maxMessageSize (" + maxMessageSize + ")");
    }
    atLeast(bytesPerTurn, 1, "bytesPerTurn");
    atLeast(maxConcurrentLoads, 1, "maxConcurrentLoads");
    atLeast(maxSizeReplaceHaveWithBlock, 0, "maxSizeReplaceHaveWithBlock");
    atLeast(maxOutboxMessages, 1, "maxOutboxMessages");
    atLeast(maxClientWants, 1, "maxClientWants");
    positive(inboundIdleTimeout, "inboundIdleTimeout");
    positive(outboundIdleTimeout, "outboundIdleTimeout");
    positive(rebroadcastInterval, "rebroadcastInterval");
  }

  private static void atLeast(final int value, final int min, final String name) {
    if (value < min) {
      throw new IllegalArgumentException(name + " must be >= " + min + ": " + value);
    }
  }

  private static void positive(final Duration value, final String name) {
    if (value == null || value.isNegative() || value.isZero()) {
      throw new IllegalArgumentException(name + " must be positive: " + value);
    }
  }

  public static Builder builder() {
    return new Builder();
  }

  /** A builder starting from this config's values. */
  public Builder toBuilder() {
    final Builder builder = new Builder();
    builder.maxMessageSize = maxMessageSize;
    builder.maxWantlistEntries = maxWantlistEntries;
    builder.maxBlocksPerMessage = maxBlocksPerMessage;
    builder.maxPresencesPerMessage = maxPresencesPerMessage;
    builder.maxWantsPerPeer = maxWantsPerPeer;
    builder.maxSendMessageSize = maxSendMessageSize;
    builder.bytesPerTurn = bytesPerTurn;
    builder.maxConcurrentLoads = maxConcurrentLoads;
    builder.maxSizeReplaceHaveWithBlock = maxSizeReplaceHaveWithBlock;
    builder.inboundIdleTimeout = inboundIdleTimeout;
    builder.outboundIdleTimeout = outboundIdleTimeout;
    builder.maxOutboxMessages = maxOutboxMessages;
    builder.rebroadcastInterval = rebroadcastInterval;
    builder.maxClientWants = maxClientWants;
    return builder;
  }

  /** Builds a {@link BitswapConfig}; {@link #build()} validates. */
  public static final class Builder {
    private int maxMessageSize = MAX_MESSAGE_SIZE;
    private int maxWantlistEntries = 16_384;
    private int maxBlocksPerMessage = 1_024;
    private int maxPresencesPerMessage = 16_384;
    private int maxWantsPerPeer = 8_192;
    private int maxSendMessageSize = 1024 * 1024;
    private int bytesPerTurn = 1024 * 1024;
    private int maxConcurrentLoads = 4;
    private int maxSizeReplaceHaveWithBlock = 1_024;
    private Duration inboundIdleTimeout = Duration.ofSeconds(60);
    private Duration outboundIdleTimeout = Duration.ofSeconds(3);
    private int maxOutboxMessages = 1_024;
    private Duration rebroadcastInterval = Duration.ofSeconds(5);
    private int maxClientWants = 100_000;

    private Builder() {}

    /** Also lowers {@code maxSendMessageSize} to at most this. */
    public Builder maxMessageSize(final int value) {
      maxMessageSize = value;
      maxSendMessageSize = Math.min(maxSendMessageSize, value);
      return this;
    }

    public Builder maxWantlistEntries(final int value) {
      maxWantlistEntries = value;
      return this;
    }

    public Builder maxBlocksPerMessage(final int value) {
      maxBlocksPerMessage = value;
      return this;
    }

    public Builder maxPresencesPerMessage(final int value) {
      maxPresencesPerMessage = value;
      return this;
    }

    public Builder maxWantsPerPeer(final int value) {
      maxWantsPerPeer = value;
      return this;
    }

    public Builder maxSendMessageSize(final int value) {
      maxSendMessageSize = value;
      return this;
    }

    public Builder bytesPerTurn(final int value) {
      bytesPerTurn = value;
      return this;
    }

    public Builder maxConcurrentLoads(final int value) {
      maxConcurrentLoads = value;
      return this;
    }

    public Builder maxSizeReplaceHaveWithBlock(final int value) {
      maxSizeReplaceHaveWithBlock = value;
      return this;
    }

    public Builder inboundIdleTimeout(final Duration value) {
      inboundIdleTimeout = value;
      return this;
    }

    public Builder outboundIdleTimeout(final Duration value) {
      outboundIdleTimeout = value;
      return this;
    }

    public Builder maxOutboxMessages(final int value) {
      maxOutboxMessages = value;
      return this;
    }

    public Builder rebroadcastInterval(final Duration value) {
      rebroadcastInterval = value;
      return this;
    }

    public Builder maxClientWants(final int value) {
      maxClientWants = value;
      return this;
    }

    /**
     * The config.
     *
     * @throws IllegalArgumentException naming the first value out of range
     */
    public BitswapConfig build() {
      return new BitswapConfig(maxMessageSize, maxWantlistEntries, maxBlocksPerMessage,
          maxPresencesPerMessage, maxWantsPerPeer, maxSendMessageSize, bytesPerTurn,
          maxConcurrentLoads, maxSizeReplaceHaveWithBlock, inboundIdleTimeout,
          outboundIdleTimeout, maxOutboxMessages, rebroadcastInterval, maxClientWants);
    }
  }
}
