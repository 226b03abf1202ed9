package io.relaypinner.libp2p.protocol.identify;

import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.relaypinner.multiformats.Multiaddr;
import io.relaypinner.multiformats.PeerId;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;

/**
 * Identify {@value #PROTOCOL_ID} (libp2p/specs identify/README.md), compatible with js-libp2p
 * {@code @libp2p/identify} 3.0.x and 4.1.x.
 *
 * <p>Both roles run on a stream {@link Channel} on which multistream-select has already chosen
 * {@value #PROTOCOL_ID}:
 *
 * <ul>
 *   <li>Responder ({@link #installResponder}): writes one length-prefixed Identify message with
 *       our key, {@link #PROTOCOL_VERSION}, agent version, listen addresses, protocols and the
 *       observed address, then closes the stream at once (js-libp2p 4.1.x reads until FIN).
 *   <li>Initiator ({@link #installInitiator}): reads up to {@link IdentifyConfig#maxMessages()}
 *       messages until the remote's FIN, merges them and completes the future with an {@link
 *       IdentifyResult} whose public key is checked against the connection's remote peer.
 * </ul>
 *
 * <p>Thread-safe; one instance serves every connection.
 */
public final class IdentifyProtocol {
  public static final String PROTOCOL_ID = "/ipfs/id/1.0.0";

  /** The {@code protocolVersion} we send, as js-libp2p and go-libp2p do. */
  public static final String PROTOCOL_VERSION = "ipfs/0.1.0";

  private final IdentifyConfig config;
  private final IdentifyMessageFactory messages;

  public IdentifyProtocol(final IdentifyLocal local, final IdentifyConfig config) {
    this.config = Objects.requireNonNull(config, "config");
    this.messages = new IdentifyMessageFactory(Objects.requireNonNull(local, "local"),
        config.maxMessageSize());
  }

  public IdentifyConfig config() {
    return config;
  }

  /**
   * A responder handler: sends our Identify message when added to an active stream (or when the
   * stream becomes active), then closes the stream.
   *
   * @param observedAddr the connection's remote address as we see it (e.g. {@code
   *     /ip4/198.51.100.7/tcp/53122}, without {@code /p2p}), or null for a connection without
   *     one (js-libp2p leaves the field out when the address is not IP or DNS based, e.g. relayed)
   * @param sent completed when the message is written; exceptionally on failure or timeout
   */
  public ChannelHandler newResponder(final Multiaddr observedAddr,
      final CompletableFuture<Void> sent) {
    return new IdentifyWriteHandler(messages, observedAddr, config.timeout(),
        Objects.requireNonNull(sent, "sent"));
  }

  /**
   * Adds {@link #newResponder} at the end of the stream's pipeline.
   *
   * @return completed when our message is written
   */
  public CompletableFuture<Void> installResponder(final Channel stream,
      final Multiaddr observedAddr) {
    final CompletableFuture<Void> sent = new CompletableFuture<>();
    stream.pipeline().addLast(newResponder(observedAddr, sent));
    return sent;
  }

  /**
   * An initiator handler (it adds its own frame decoder before itself).
   *
   * @param remotePeer the connection's remote peer, authenticated by the secure channel
   * @param result completed with the merged result; exceptionally with a {@link
   *     io.relaypinner.libp2p.core.BadPeerException} (wrong or malformed key), a {@link
   *     io.relaypinner.libp2p.core.ProtocolViolationException} (oversized or malformed message,
   *     no message, no key), a {@link java.util.concurrent.TimeoutException} or a {@link
   *     java.nio.channels.ClosedChannelException} (stream reset)
   */
  public ChannelHandler newInitiator(final PeerId remotePeer,
      final CompletableFuture<IdentifyResult> result) {
    return new IdentifyReadHandler(config, Objects.requireNonNull(remotePeer, "remotePeer"),
        true, Objects.requireNonNull(result, "result"));
  }

  /**
   * Adds {@link #newInitiator} at the end of the stream's pipeline. Install it before reading
   * resumes, so no byte after the negotiation is lost.
   *
   * @return the result future, completed on the stream's event loop
   */
  public CompletableFuture<IdentifyResult> installInitiator(final Channel stream,
      final PeerId remotePeer) {
    final CompletableFuture<IdentifyResult> result = new CompletableFuture<>();
    stream.pipeline().addLast(newInitiator(remotePeer, result));
    return result;
  }
}
