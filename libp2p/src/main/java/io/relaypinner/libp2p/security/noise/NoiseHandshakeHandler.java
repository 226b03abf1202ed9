package io.relaypinner.libp2p.security.noise;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.channel.socket.ChannelInputShutdownEvent;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.netty.util.ReferenceCountUtil;
import io.relaypinner.libp2p.core.BadPeerException;
import io.relaypinner.libp2p.core.InternalErrorException;
import io.relaypinner.libp2p.core.Libp2pException;
import io.relaypinner.libp2p.core.ProtocolViolationException;
import io.relaypinner.libp2p.netty.ActivatedHandler;
import io.relaypinner.multiformats.PeerId;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs one side of the libp2p Noise XX handshake on a raw connection (libp2p/specs noise/README.md
 * r4): handshake messages framed as {@code uint16 BE length || message}, the libp2p payload signed
 * and verified, then the handler replaces itself (same pipeline name) with a {@link
 * NoiseTransportCodec}. Obtain instances from {@link NoiseProtocol}.
 *
 * <p>On success, in this order: the {@link SecureSession} is fired as a user event from this
 * position (it passes through the codec to the handlers after it), {@link #handshakeFuture()}
 * completes, and bytes that arrived behind the last handshake message are fed into the codec. A
 * listener that installs the muxer on the event or in a future callback therefore sees the first
 * decrypted bytes.
 *
 * <p>On failure the future completes exceptionally, the channel is closed, and nothing is
 * propagated down the pipeline: {@link ProtocolViolationException} for malformed, truncated,
 * oversize or unauthenticated messages, bad signatures and unusable identity keys; {@link
 * UnexpectedPeerException} when the remote is not the peer we dialled; {@link BadPeerException} for
 * the timeout, no common muxer, or the remote closing early; transport exceptions as they came.
 * Remote faults are logged at DEBUG without stack traces.
 *
 * <p>Writes from other handlers are refused until the handshake is over: they would otherwise reach
 * the wire unencrypted.
 */
public final class NoiseHandshakeHandler extends ActivatedHandler {
  private static final Logger LOG = LoggerFactory.getLogger(NoiseHandshakeHandler.class);
  private static final int LENGTH_PREFIX_BYTES = 2;
  private static final byte[] EMPTY = new byte[0];

  private final HandshakeState handshake;
  private final byte[] localPayload;
  private final Optional<PeerId> expectedRemote;
  private final NoiseConfig config;
  private final CompletableFuture<SecureSession> result = new CompletableFuture<>();
  private final Deadline timeout = deadline(this::onTimeout);
  private ByteBuf cumulation;
  private boolean done;

  NoiseHandshakeHandler(
      final HandshakeState handshake,
      final byte[] localPayload,
      final Optional<PeerId> expectedRemote,
      final NoiseConfig config) {
    this.handshake = handshake;
    this.localPayload = localPayload;
    this.expectedRemote = Objects.requireNonNull(expectedRemote, "expectedRemote");
    this.config = config;
  }

  /**
   * Completes with the session once the handshake succeeded, or exceptionally when it failed.
   * Callbacks run on the channel's event loop. Each call returns a new dependent future, so
   * completing it does not affect the handshake.
   */
  public CompletableFuture<SecureSession> handshakeFuture() {
    return result.copy();
  }

  /** Whether this is the initiator (dialer) side. */
  public boolean isInitiator() {
    return handshake.isInitiator();
  }

  @Override
  protected void onActivated(final ChannelHandlerContext ctx) {
    timeout.expireIn(config.handshakeTimeout().toNanos());
    if (handshake.isMyTurn()) {
      // Message 1 carries no libp2p payload: extensions are forbidden there and the identity
      // would go out unencrypted. js-libp2p-noise sends exactly the 32-byte ephemeral key too.
      send(ctx, handshake.writeMessage(EMPTY));
    }
    readIfNeeded(ctx);
  }

  private void onTimeout() {
    fail(
        ctx(),
        new BadPeerException(
            "Noise handshake did not complete within "
                + config.handshakeTimeout()
                + " (waiting for message "
                + handshake.nextMessageNumber()
                + ")"));
  }

  @Override
  public void channelRead(final ChannelHandlerContext ctx, final Object msg) {
    if (!(msg instanceof ByteBuf in)) {
      ctx.fireChannelRead(msg);
      return;
    }
    if (done) {
      in.release();
      return;
    }
    cumulation =
        cumulation == null
            ? in
            : ByteToMessageDecoder.MERGE_CUMULATOR.cumulate(ctx.alloc(), cumulation, in);
    try {
      processMessages(ctx);
    } catch (final Libp2pException e) {
      fail(ctx, e);
    } catch (final RuntimeException e) {
      fail(ctx, new InternalErrorException("Noise handshake failed on our side: " + e, e));
    }
  }

  private void processMessages(final ChannelHandlerContext ctx) {
    while (!done && cumulation.readableBytes() >= LENGTH_PREFIX_BYTES) {
      final int length = cumulation.getUnsignedShort(cumulation.readerIndex());
      if (length > config.maxMessageLength()) {
        throw new ProtocolViolationException(
            "Noise handshake message of "
                + length
                + " bytes exceeds the limit of "
                + config.maxMessageLength());
      }
      if (cumulation.readableBytes() < LENGTH_PREFIX_BYTES + length) {
        return;
      }
      cumulation.skipBytes(LENGTH_PREFIX_BYTES);
      final byte[] message = new byte[length];
      cumulation.readBytes(message);
      onMessage(ctx, message);
    }
  }

  private void onMessage(final ChannelHandlerContext ctx, final byte[] message) {
    final byte[] payload = handshake.readMessage(message);
    if (handshake.nextMessageNumber() == 2) {
      // We are the responder and this was message 1. Its payload is plaintext and carries
      // nothing in libp2p; like js-libp2p-noise we ignore it rather than reject it.
      send(ctx, handshake.writeMessage(localPayload));
      readIfNeeded(ctx);
      return;
    }
    final HandshakePayload.RemoteIdentity remote =
        HandshakePayload.decodeAndVerify(payload, handshake.remoteStaticKey());
    if (expectedRemote.isPresent() && !expectedRemote.get().equals(remote.peerId())) {
      throw new UnexpectedPeerException(expectedRemote.get(), remote.peerId());
    }
    final boolean initiator = handshake.isInitiator();
    final Optional<String> earlyMuxer =
        initiator
            ? HandshakePayload.selectEarlyMuxer(config.streamMuxers(), remote.streamMuxers())
            : HandshakePayload.selectEarlyMuxer(remote.streamMuxers(), config.streamMuxers());
    if (handshake.isMyTurn()) {
      // Initiator after message 2: only now, with the responder authenticated, does our
      // identity go out (message 3).
      send(ctx, handshake.writeMessage(localPayload));
    }
    final SecureSession session =
        new SecureSession(
            remote.peerId(), remote.publicKey(), remote.streamMuxers(), earlyMuxer, initiator);
    succeed(ctx, session, handshake.split());
  }

  private void succeed(
      final ChannelHandlerContext ctx,
      final SecureSession session,
      final TransportCiphers ciphers) {
    done = true;
    timeout.cancel();
    final ByteBuf leftover = cumulation;
    cumulation = null;
    // replace() keeps the name and points this (now removed) context at the codec, so events
    // fired from ctx below go through the codec.
    ctx.pipeline().replace(this, ctx.name(), new NoiseTransportCodec(ciphers, config));
    LOG.debug(
        "Noise handshake done with {} ({}), early muxer {}",
        session.remotePeerId(),
        session.initiator() ? "we dialled" : "they dialled",
        session.earlyMuxer().orElse("none"));
    ctx.fireUserEventTriggered(session);
    result.complete(session);
    if (leftover.isReadable()) {
      ctx.fireChannelRead(leftover);
    } else {
      leftover.release();
    }
  }

  private void fail(final ChannelHandlerContext ctx, final Throwable cause) {
    if (done) {
      return;
    }
    done = true;
    timeout.cancel();
    releaseCumulation();
    if (cause instanceof InternalErrorException) {
      LOG.error("Noise handshake with {} failed", ctx.channel().remoteAddress(), cause);
    } else {
      LOG.debug(
          "Noise handshake with {} failed: {}", ctx.channel().remoteAddress(), cause.toString());
    }
    result.completeExceptionally(cause);
    ctx.close();
  }

  private void send(final ChannelHandlerContext ctx, final byte[] message) {
    if (message.length > config.maxMessageLength()) {
      throw new InternalErrorException(
          "our Noise handshake message of "
              + message.length
              + " bytes exceeds "
              + config.maxMessageLength());
    }
    final ByteBuf frame = ctx.alloc().buffer(LENGTH_PREFIX_BYTES + message.length);
    frame.writeShort(message.length).writeBytes(message);
    ctx.writeAndFlush(frame)
        .addListener(
            future -> {
              if (!future.isSuccess()) {
                fail(ctx, future.cause());
              }
            });
  }

  private static void readIfNeeded(final ChannelHandlerContext ctx) {
    if (!ctx.channel().config().isAutoRead()) {
      ctx.read();
    }
  }

  @Override
  public void channelReadComplete(final ChannelHandlerContext ctx) {
    if (!done) {
      readIfNeeded(ctx);
    }
    ctx.fireChannelReadComplete();
  }

  @Override
  public void userEventTriggered(final ChannelHandlerContext ctx, final Object evt) {
    if (evt instanceof ChannelInputShutdownEvent && !done) {
      fail(
          ctx,
          new BadPeerException(
              "remote closed its side during the Noise handshake (waiting for message "
                  + handshake.nextMessageNumber()
                  + ")"));
    }
    ctx.fireUserEventTriggered(evt);
  }

  @Override
  protected void onInactive(final ChannelHandlerContext ctx) {
    if (!done) {
      fail(
          ctx,
          new BadPeerException(
              "connection closed during the Noise handshake (waiting for message "
                  + handshake.nextMessageNumber()
                  + ")"));
    }
  }

  @Override
  public void exceptionCaught(final ChannelHandlerContext ctx, final Throwable cause) {
    if (done) {
      ctx.fireExceptionCaught(cause);
    } else {
      fail(ctx, cause);
    }
  }

  @Override
  public void write(
      final ChannelHandlerContext ctx, final Object msg, final ChannelPromise promise) {
    ReferenceCountUtil.release(msg);
    promise.setFailure(
        new IllegalStateException("cannot write before the Noise handshake has completed"));
  }

  @Override
  protected void onRemoved(final ChannelHandlerContext ctx) {
    releaseCumulation();
    if (!done) {
      done = true;
      result.completeExceptionally(
          new IllegalStateException("Noise handshake handler removed before completion"));
    }
  }

  private void releaseCumulation() {
    if (cumulation != null) {
      cumulation.release();
      cumulation = null;
    }
  }
}
