package io.relaypinner.libp2p.transport.quic;

import java.time.Duration;

/**
 * QUIC transport parameters (RFC 9000 §18.2) of the {@code /quic-v1} transport. The stream
 * limit ({@code initial_max_streams_bidi}) is not here: it is the host's
 * {@code ConnectionLimits.maxStreamsPerConnection()}, as for yamux.
 *
 * @param maxIdleTimeout {@code max_idle_timeout}: a connection that receives nothing (not even
 *     an ACK or a PING) this long is gone; go-libp2p uses 30 s. The libp2p idle timeout (no
 *     stream) is the connection manager's, as over TCP.
 * @param initialMaxData {@code initial_max_data}: what one connection may have in flight to us
 *     in all its streams; bounds the memory a connection's unread bytes take
 * @param initialMaxStreamData {@code initial_max_stream_data_bidi_*}: per stream, yamux's 256 KiB
 *     window
 */
public record QuicConfig(Duration maxIdleTimeout, long initialMaxData,
    long initialMaxStreamData) {
  public static final QuicConfig DEFAULT =
      new QuicConfig(Duration.ofSeconds(30), 4L << 20, 256L << 10);

  public QuicConfig {
    if (maxIdleTimeout == null || maxIdleTimeout.isNegative() || maxIdleTimeout.isZero()) {
      throw new IllegalArgumentException("maxIdleTimeout must be positive: " + maxIdleTimeout);
    }
    if (initialMaxStreamData < 1 || initialMaxData < initialMaxStreamData) {
      throw new IllegalArgumentException("need 0 < initialMaxStreamData <= initialMaxData: "
          + initialMaxStreamData + ", " + initialMaxData);
    }
  }
}
