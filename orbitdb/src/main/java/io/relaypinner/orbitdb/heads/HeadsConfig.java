package io.relaypinner.orbitdb.heads;

import java.time.Duration;
import java.util.Objects;

/**
 * Limits of one heads-exchange stream.
 *
 * @param maxEntrySize largest entry block accepted in one item (a bigger one closes the stream)
 * @param maxHeadsPerStream most entries accepted on one stream
 * @param sendDelay how long to wait for the peer's first bytes or FIN before sending our heads
 *     after the first anyway (js-libp2p 3 merges frames that arrive before its reader is
 *     attached; a single head is sent, and the stream half-closed, at once)
 * @param timeout how long a stream may stay open in all
 */
public record HeadsConfig(int maxEntrySize, int maxHeadsPerStream, Duration sendDelay,
    Duration timeout) {
  /** 256 KiB entries, 1024 heads, 2 s send delay, 30 s per stream. */
  public static final HeadsConfig DEFAULT =
      new HeadsConfig(256 * 1024, 1024, Duration.ofSeconds(2), Duration.ofSeconds(30));

  public HeadsConfig {
    Objects.requireNonNull(sendDelay, "sendDelay");
    Objects.requireNonNull(timeout, "timeout");
    if (maxEntrySize < 1 || maxHeadsPerStream < 1) {
      throw new IllegalArgumentException("heads limits must be positive");
    }
    if (sendDelay.isNegative() || timeout.isNegative() || timeout.isZero()) {
      throw new IllegalArgumentException("heads durations must be positive");
    }
  }

  public HeadsConfig withTimeout(final Duration value) {
    return new HeadsConfig(maxEntrySize, maxHeadsPerStream, sendDelay, value);
  }

  public HeadsConfig withSendDelay(final Duration value) {
    return new HeadsConfig(maxEntrySize, maxHeadsPerStream, value, timeout);
  }
}
