package io.relaypinner.libp2p.mux.yamux;

/** How a yamux stream ended ({@link YamuxStreamChannel#termination()}). */
public enum YamuxStreamTermination {
  /** The stream channel was closed locally (FIN sent if it was not yet); no reset happened. */
  CLOSED,
  /** We reset the stream ({@link YamuxStreamChannel#reset()}), or a stream-level error did. */
  LOCAL_RESET,
  /** The remote reset the stream (RST flag). */
  REMOTE_RESET,
  /** We closed the stream but the remote never sent FIN within the linger timeout; we reset it. */
  LINGER_TIMEOUT,
  /** The connection (the yamux session) closed under the stream. */
  SESSION_CLOSED
}
