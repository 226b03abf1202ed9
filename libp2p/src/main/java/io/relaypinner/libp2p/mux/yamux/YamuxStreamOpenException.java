package io.relaypinner.libp2p.mux.yamux;

import io.relaypinner.libp2p.core.Libp2pException;

/** {@link YamuxHandler#newStream} could not open a stream; {@link #reason()} says why. */
public class YamuxStreamOpenException extends Libp2pException {
  private static final long serialVersionUID = 1L;

  /** Why no stream was opened. */
  public enum Reason {
    /** The connection is closed or closing. */
    SESSION_CLOSED,
    /** The remote sent GO_AWAY: open the stream on another connection. */
    GO_AWAY_RECEIVED,
    /** We sent GO_AWAY. */
    GO_AWAY_SENT,
    /** {@link YamuxConfig#maxOutboundStreams()} streams are open. */
    TOO_MANY_STREAMS,
    /** {@link YamuxConfig#maxAckBacklog()} streams wait for the remote's ACK. */
    ACK_BACKLOG_FULL,
    /** All 2^31 stream ids of our parity were used: open a new connection. */
    STREAM_IDS_EXHAUSTED,
    /** The stream channel failed to register (its initializer threw). */
    REGISTRATION_FAILED
  }

  private final Reason reason;

  public YamuxStreamOpenException(final Reason reason, final String message) {
    super(message);
    this.reason = reason;
  }

  public YamuxStreamOpenException(
      final Reason reason, final String message, final Throwable cause) {
    super(message, cause);
    this.reason = reason;
  }

  /** Why no stream was opened. */
  public Reason reason() {
    return reason;
  }
}
