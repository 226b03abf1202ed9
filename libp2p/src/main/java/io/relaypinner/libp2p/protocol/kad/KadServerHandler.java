package io.relaypinner.libp2p.protocol.kad;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.DecoderException;
import io.netty.util.ReferenceCountUtil;
import io.relaypinner.libp2p.core.ProtocolViolationException;
import io.relaypinner.libp2p.netty.ActivatedHandler;
import io.relaypinner.libp2p.netty.SingleMessageReader;
import io.relaypinner.libp2p.netty.UvarintFrameDecoder;
import io.relaypinner.multiformats.PeerId;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One inbound {@code /ipfs/kad/1.0.0} stream: varint-length-prefixed requests (each at most
 * {@link KadConfig#maxRequestSize}) answered in turn by the {@link KadServerEngine}, as many as
 * the peer sends (go and js reuse streams), until the stream is idle for
 * {@link KadConfig#streamIdleTimeout}, a request is refused, or a message is malformed or
 * oversized (counted; the stream is closed, never the connection; no stack trace).
 */
final class KadServerHandler extends ActivatedHandler {
  private static final Logger LOG = LoggerFactory.getLogger(KadServerHandler.class);

  private final KadServerEngine server;
  private final KadConfig config;
  private final PeerId remote;
  private final Deadline idle = deadline(() -> ctx().close());

  private KadServerHandler(final KadServerEngine server, final PeerId remote) {
    this.server = server;
    this.config = server.config();
    this.remote = remote;
  }

  /** Adds the frame decoder and the handler for a stream of {@code remote}. */
  static void install(final Channel stream, final KadServerEngine server, final PeerId remote) {
    stream.pipeline().addLast(new UvarintFrameDecoder(server.config().maxRequestSize()),
        new KadServerHandler(server, remote));
  }

  @Override
  protected void onActivated(final ChannelHandlerContext ctx) {
    idle.expireIn(config.streamIdleTimeout().toNanos());
  }

  @Override
  public void channelRead(final ChannelHandlerContext ctx, final Object msg) {
    if (!(msg instanceof ByteBuf frame)) {
      ReferenceCountUtil.release(msg);
      return;
    }
    if (!ctx.channel().isActive()) {
      frame.release();
      return;
    }
    final KadMessage request;
    try {
      request = KadCodec.decode(ByteBufUtil.getBytes(frame), config.codecLimits());
    } catch (final ProtocolViolationException e) {
      server.malformed();
      LOG.debug("kad-dht: malformed request from {}: {}", remote, e.getMessage());
      ctx.close();
      return;
    } finally {
      frame.release();
    }
    idle.expireIn(config.streamIdleTimeout().toNanos());
    final KadServerEngine.Answer answer = server.handle(remote, request);
    if (answer.response() != null) {
      ctx.writeAndFlush(SingleMessageReader.frame(ctx.alloc(),
          KadCodec.toProto(answer.response())));
    }
    if (answer.close()) {
      LOG.debug("kad-dht: {} request of {} refused: {}", request.type(), remote,
          answer.refusal().label());
      ctx.close();
    }
  }

  @Override
  public void exceptionCaught(final ChannelHandlerContext ctx, final Throwable cause) {
    // The frame decoder's exceptions come wrapped in a DecoderException.
    final Throwable root = cause instanceof DecoderException && cause.getCause() != null
        ? cause.getCause() : cause;
    if (root instanceof ProtocolViolationException) {
      server.malformed();
      LOG.debug("kad-dht: bad frame from {}: {}", remote, root.getMessage());
    } else {
      LOG.debug("kad-dht stream of {} failed: {}", remote, cause.toString());
    }
    ctx.close();
  }
}
