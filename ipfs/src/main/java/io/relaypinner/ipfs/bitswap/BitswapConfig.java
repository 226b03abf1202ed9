package io.relaypinner.ipfs.bitswap;

import java.time.Duration;

/**
 * Limits and timings of the bitswap server and client ({@link Bitswap}). Defaults follow the
 * spec and Helia's {@code @helia/bitswap} where they have one (4 MiB messages, blocks up to 1 KiB
 * answered in place of HAVE); the rest bound what one peer can make us hold or do.
 *
 * @param maxMessageSize largest length-prefixed message we read; a larger prefix closes the stream
 * @param maxWantlistEntries most wantlist entries in one received message (more: stream closed)
 * @param maxBlocksPerMessage most blocks in one received message (more: stream closed)
 * @param maxPresencesPerMessage most block presences in one received message (more: closed)
 * @param maxWantsPerPeer entries one peer's wantlist may hold; further wants are ignored
 * @param maxSendMessageSize a message we send carries blocks up to about this many bytes (one
 *     block larger than that still goes alone)
 * @param bytesPerTurn block bytes one peer gets per scheduling turn before the next peer's turn
 * @param maxConcurrentLoads blockstore reads (turns) in flight on the storage executor at once
 * @param maxSizeReplaceHaveWithBlock a WANT-HAVE for a block this small gets the block
 * @param inboundIdleTimeout an inbound stream silent this long is closed
 * @param outboundIdleTimeout our outbound stream to a peer is closed after this long unused
 *     (Helia aborts inbound streams idle for 5 s, so this stays below)
 * @param maxOutboxMessages messages (wants, presences) queued for one peer while its stream is
 *     not writable; beyond this the oldest presences are dropped
 * @param rebroadcastInterval unanswered wants are sent again to every bitswap peer this often
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

  public static final BitswapConfig DEFAULT = new BitswapConfig(MAX_MESSAGE_SIZE, 16_384, 1_024,
      16_384, 8_192, 1024 * 1024, 1024 * 1024, 4, 1_024, Duration.ofSeconds(60),
      Duration.ofSeconds(3), 1_024, Duration.ofSeconds(5), 100_000);

  /** Validates. */
  public BitswapConfig {
    if (maxMessageSize < 1024 || maxWantlistEntries < 1 || maxBlocksPerMessage < 1
        || maxPresencesPerMessage < 1 || maxWantsPerPeer < 1 || maxSendMessageSize < 1
        || maxSendMessageSize > maxMessageSize || bytesPerTurn < 1 || maxConcurrentLoads < 1
        || maxSizeReplaceHaveWithBlock < 0 || maxOutboxMessages < 1 || maxClientWants < 1) {
      throw new IllegalArgumentException("bitswap limits must be positive and "
          + "maxSendMessageSize <= maxMessageSize");
    }
    positive(inboundIdleTimeout, "inboundIdleTimeout");
    positive(outboundIdleTimeout, "outboundIdleTimeout");
    positive(rebroadcastInterval, "rebroadcastInterval");
  }

  private static void positive(final Duration value, final String name) {
    if (value == null || value.isNegative() || value.isZero()) {
      throw new IllegalArgumentException(name + " must be positive: " + value);
    }
  }

  /** This config with another per-peer wantlist bound. */
  public BitswapConfig withMaxWantsPerPeer(final int value) {
    return new BitswapConfig(maxMessageSize, maxWantlistEntries, maxBlocksPerMessage,
        maxPresencesPerMessage, value, maxSendMessageSize, bytesPerTurn, maxConcurrentLoads,
        maxSizeReplaceHaveWithBlock, inboundIdleTimeout, outboundIdleTimeout, maxOutboxMessages,
        rebroadcastInterval, maxClientWants);
  }

  /** This config with another received-message size limit. */
  public BitswapConfig withMaxMessageSize(final int value) {
    return new BitswapConfig(value, maxWantlistEntries, maxBlocksPerMessage,
        maxPresencesPerMessage, maxWantsPerPeer, Math.min(maxSendMessageSize, value),
        bytesPerTurn, maxConcurrentLoads, maxSizeReplaceHaveWithBlock, inboundIdleTimeout,
        outboundIdleTimeout, maxOutboxMessages, rebroadcastInterval, maxClientWants);
  }

  /** This config with another scheduling turn size. */
  public BitswapConfig withBytesPerTurn(final int value) {
    return new BitswapConfig(maxMessageSize, maxWantlistEntries, maxBlocksPerMessage,
        maxPresencesPerMessage, maxWantsPerPeer, maxSendMessageSize, value, maxConcurrentLoads,
        maxSizeReplaceHaveWithBlock, inboundIdleTimeout, outboundIdleTimeout, maxOutboxMessages,
        rebroadcastInterval, maxClientWants);
  }
}
