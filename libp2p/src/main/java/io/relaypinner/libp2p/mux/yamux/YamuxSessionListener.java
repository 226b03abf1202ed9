package io.relaypinner.libp2p.mux.yamux;

/**
 * Observes one yamux session ({@code /yamux/1.0.0}); for the connection manager's stream counts,
 * metrics and limits. Every method is called on the connection's event loop and must not block; an
 * exception thrown here is logged and otherwise ignored.
 */
public interface YamuxSessionListener {
  /** Does nothing. */
  YamuxSessionListener NOOP = new YamuxSessionListener() {};

  /**
   * A stream was opened, by either side; called just before its pipeline is initialized, so it
   * always precedes {@link #streamClosed} for the same stream.
   */
  default void streamOpened(final YamuxStreamChannel stream) {}

  /**
   * The session forgot a stream: both sides finished it, or it was reset, timed out lingering, or
   * the connection closed. {@link YamuxStreamChannel#termination()} says which. The stream no
   * longer counts against the stream limits.
   */
  default void streamClosed(final YamuxStreamChannel stream) {}

  /** The remote opened a stream beyond {@link YamuxConfig#maxInboundStreams()}; it was reset. */
  default void inboundStreamRejected(final long streamId) {}

  /** The remote sent GO_AWAY with this code ({@code YamuxFrame.GO_AWAY_*}). */
  default void goAwayReceived(final long code) {}

  /**
   * The session is closing the connection because of {@code cause}: a protocol violation by the
   * remote, a keep-alive timeout, or an internal error.
   */
  default void sessionFailed(final Throwable cause) {}
}
