package io.relaypinner.libp2p.protocol.ping;

import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.netty.util.concurrent.Ticker;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.function.LongSupplier;
import java.util.random.RandomGenerator;

/**
 * Ping {@value #PROTOCOL_ID} (libp2p/specs ping/ping.md), compatible with js-libp2p
 * {@code @libp2p/ping} 2.0.x and 3.1.x and with the js-libp2p connection monitor, which pings
 * every connection every 10 s and aborts the connection when a ping fails or is slow.
 *
 * <p>Both roles run on a stream {@link Channel} on which multistream-select has already chosen
 * {@value #PROTOCOL_ID}: {@link #installResponder} echoes 32-byte payloads until the remote's FIN;
 * {@link #installInitiator} returns a {@link PingController} that measures round trips.
 *
 * <p>Streams per connection are the host's business: js-libp2p accepts 2 inbound ping streams and
 * opens 1 outbound per connection, so open at most one ping stream to a peer at a time.
 *
 * <p>Thread-safe; one instance serves every connection.
 */
public final class PingProtocol {
  public static final String PROTOCOL_ID = "/ipfs/ping/1.0.0";

  /** The payload size, fixed by the spec. */
  public static final int PING_LENGTH = 32;

  private final PingConfig config;
  private final RandomGenerator random;
  private final LongSupplier nanoTime;

  /** Payloads from a {@link SecureRandom}, round trips timed on {@code ticker} (the host's). */
  public PingProtocol(final PingConfig config, final Ticker ticker) {
    this(config, new SecureRandom(), ticker::nanoTime);
  }

  /**
   * @param random source of the payloads; shared by every stream, so it must be thread-safe
   * @param nanoTime clock for round-trip times (timeouts use the event loop's ticker)
   */
  public PingProtocol(final PingConfig config, final RandomGenerator random,
      final LongSupplier nanoTime) {
    this.config = Objects.requireNonNull(config, "config");
    this.random = Objects.requireNonNull(random, "random");
    this.nanoTime = Objects.requireNonNull(nanoTime, "nanoTime");
  }

  public PingConfig config() {
    return config;
  }

  /** A responder handler for one inbound ping stream. */
  public ChannelHandler newResponder() {
    return new PingResponder(config);
  }

  /** Adds {@link #newResponder} at the end of the stream's pipeline. */
  public void installResponder(final Channel stream) {
    stream.pipeline().addLast(newResponder());
  }

  /**
   * Adds an initiator handler at the end of the stream's pipeline.
   *
   * @return the controller for pings on this stream
   */
  public PingController installInitiator(final Channel stream) {
    final PingInitiator initiator = new PingInitiator(stream, config, random, nanoTime);
    stream.pipeline().addLast(initiator);
    return initiator;
  }

  /**
   * One ping on a fresh stream, then closes it: what the js-libp2p connection monitor does.
   *
   * @return the round-trip time; failures as for {@link PingController}
   */
  public CompletableFuture<Duration> pingOnce(final Channel stream) {
    return installInitiator(stream).pingAndClose();
  }
}
