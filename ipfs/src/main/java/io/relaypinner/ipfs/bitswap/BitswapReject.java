package io.relaypinner.ipfs.bitswap;

import io.relaypinner.libp2p.core.LimitExceededException;

/**
 * Why bitswap refused or lost a message, block or want; {@link #label()} is the key in {@link
 * BitswapStats#rejected()} and the metric label. One fault has one reason.
 */
public enum BitswapReject {
  /** A message, list or block over a limit ({@link LimitExceededException}): stream reset. */
  TOO_LARGE("too-large"),
  /** Bytes that are not a bitswap message, or a bad CID or prefix: stream reset. */
  MALFORMED("malformed"),
  /** A received block that does not match its CID (dropped, the message stands). */
  BAD_BLOCK("bad-block"),
  /** A want beyond the peer's wantlist cap (ignored). */
  WANTLIST_FULL("wantlist-full"),
  /** A message to a peer that does not read dropped (its served wants are kept). */
  SEND_QUEUE_FULL("send-queue-full"),
  /** A write to a peer failed (its served wants are kept). */
  SEND_FAILED("send-failed"),
  /** Opening our stream to a peer failed. */
  STREAM_OPEN_FAILED("stream-open-failed");

  private final String label;

  BitswapReject(final String label) {
    this.label = label;
  }

  public String label() {
    return label;
  }

  /** The reason for a stream's decoding failure: by the exception's type. */
  static BitswapReject of(final Throwable cause) {
    return cause instanceof LimitExceededException ? TOO_LARGE : MALFORMED;
  }
}
