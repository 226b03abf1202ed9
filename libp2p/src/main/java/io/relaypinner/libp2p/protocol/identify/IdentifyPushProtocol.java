package io.relaypinner.libp2p.protocol.identify;

import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.relaypinner.multiformats.PeerId;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;

/**
 * Identify push {@value #PROTOCOL_ID} (libp2p/specs identify/README.md, "identify/push"),
 * compatible with js-libp2p {@code @libp2p/identify} 3.0.x and 4.1.x.
 *
 * <ul>
 *   <li>Initiator ({@link #installInitiator}): when our addresses or protocols change the host
 *       opens a push stream to every connected peer that lists {@value #PROTOCOL_ID}; this writes
 *       our current Identify message (no observed address) and closes the stream.
 *   <li>Responder ({@link #installResponder}): reads up to {@link IdentifyConfig#maxMessages()}
 *       messages until the remote's FIN and completes the future with a partial {@link
 *       IdentifyResult}: a public key, when present, is checked against the connection's remote
 *       peer; fields the push lacks are absent, and {@link IdentifyResult#updatedWith} applies it
 *       to what the host knew.
 * </ul>
 *
 * <p>Thread-safe; one instance serves every connection.
 */
public final class IdentifyPushProtocol {
  public static final String PROTOCOL_ID = "/ipfs/id/push/1.0.0";

  private final IdentifyConfig config;
  private final IdentifyMessageFactory messages;

  public IdentifyPushProtocol(final IdentifyLocal local, final IdentifyConfig config) {
    this.config = Objects.requireNonNull(config, "config");
    this.messages = new IdentifyMessageFactory(Objects.requireNonNull(local, "local"),
        config.maxMessageSize());
  }

  public IdentifyConfig config() {
    return config;
  }

  /**
   * A push initiator handler: sends our current Identify message when added to an active stream,
   * then closes it.
   *
   * @param sent completed when the message is written; exceptionally on failure or timeout
   */
  public ChannelHandler newInitiator(final CompletableFuture<Void> sent) {
    return new IdentifyWriteHandler(messages, null, config.timeout(),
        Objects.requireNonNull(sent, "sent"));
  }

  /**
   * Adds {@link #newInitiator} at the end of the stream's pipeline.
   *
   * @return completed when our message is written
   */
  public CompletableFuture<Void> installInitiator(final Channel stream) {
    final CompletableFuture<Void> sent = new CompletableFuture<>();
    stream.pipeline().addLast(newInitiator(sent));
    return sent;
  }

  /**
   * A push responder handler (it adds its own frame decoder before itself).
   *
   * @param remotePeer the connection's remote peer, authenticated by the secure channel
   * @param update completed with the pushed fields; exceptionally as for {@link
   *     IdentifyProtocol#newInitiator}, except that a missing public key is fine
   */
  public ChannelHandler newResponder(final PeerId remotePeer,
      final CompletableFuture<IdentifyResult> update) {
    return new IdentifyReadHandler(config, Objects.requireNonNull(remotePeer, "remotePeer"),
        false, Objects.requireNonNull(update, "update"));
  }

  /**
   * Adds {@link #newResponder} at the end of the stream's pipeline. Install it before reading
   * resumes, so no byte after the negotiation is lost.
   *
   * @return the update future, completed on the stream's event loop
   */
  public CompletableFuture<IdentifyResult> installResponder(final Channel stream,
      final PeerId remotePeer) {
    final CompletableFuture<IdentifyResult> update = new CompletableFuture<>();
    stream.pipeline().addLast(newResponder(remotePeer, update));
    return update;
  }
}
