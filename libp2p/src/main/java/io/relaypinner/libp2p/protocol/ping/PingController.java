package io.relaypinner.libp2p.protocol.ping;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;

/**
 * Drives the initiator side of one ping stream (libp2p/specs ping/ping.md). Pings on a stream
 * are sequential: start the next one when the previous future has completed. Methods may be
 * called from any thread; futures complete on the stream's event loop.
 *
 * <p>Futures fail with {@link io.relaypinner.libp2p.core.BadPeerException} (wrong echo), {@link
 * io.relaypinner.libp2p.core.ProtocolViolationException} (bytes we did not ask for, FIN before
 * the echo), {@link java.util.concurrent.TimeoutException} (no echo within {@link
 * PingConfig#timeout()}), {@link java.nio.channels.ClosedChannelException} (stream closed or
 * reset) or {@link IllegalStateException} (a ping already in flight). Every failure but the
 * last closes the stream.
 */
public interface PingController {
  /** Sends 32 random bytes and completes with the round-trip time when the echo matches. */
  CompletableFuture<Duration> ping();

  /**
   * The last ping: like {@link #ping()}, but our side is half-closed right after the payload is
   * written (as js-libp2p 3.x does, and as the spec recommends), and the stream is closed once
   * the echo arrives. Without half-close support the stream is simply closed after the echo.
   */
  CompletableFuture<Duration> pingAndClose();

  /**
   * Closes the stream; a ping in flight fails with {@link
   * java.nio.channels.ClosedChannelException}.
   */
  void close();
}
