package io.relaypinner.libp2p.mux.yamux;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.util.ReferenceCountUtil;
import io.relaypinner.libp2p.core.ProtocolViolationException;

/**
 * Splits the decrypted connection byte stream into yamux frames ({@code /yamux/1.0.0}, hashicorp
 * yamux {@code spec.md} "Framing"; header layout in {@link YamuxFrame}).
 *
 * <p>For every frame it emits one {@link YamuxFrame}. A DATA frame's payload follows as one or more
 * {@link ByteBuf}s whose sizes add up to the header's length; each is a retained slice of the
 * inbound buffer, so payload bytes are never copied and a large frame is never buffered whole: it
 * flows on as its bytes arrive. Only a header split across reads is copied, into a 12-byte array.
 * The next handler owns (and must release) every emitted buffer.
 *
 * <p>A version other than 0, an unknown type, or a DATA length above {@code maxDataLength} (no
 * valid frame can exceed the largest receive window the session ever grants) fires a {@link
 * ProtocolViolationException} through {@code exceptionCaught} as soon as the header is complete;
 * from then on all input is dropped unparsed, and the session closes the connection.
 *
 * <p>Encoding is {@link YamuxFrame#encode}; the session writes headers and payloads itself.
 */
public final class YamuxFrameCodec extends ChannelInboundHandlerAdapter {
  private final long maxDataLength;
  private final byte[] partialHeader = new byte[YamuxFrame.HEADER_LENGTH];
  private int partialHeaderLength;
  private long payloadRemaining;
  private boolean failed;

  /**
   * @param maxDataLength the largest DATA payload accepted; larger ones are a protocol violation
   */
  public YamuxFrameCodec(final long maxDataLength) {
    if (maxDataLength <= 0 || maxDataLength > YamuxFrame.MAX_LENGTH) {
      throw new IllegalArgumentException("maxDataLength out of range: " + maxDataLength);
    }
    this.maxDataLength = maxDataLength;
  }

  @Override
  public void channelRead(final ChannelHandlerContext ctx, final Object msg) {
    if (!(msg instanceof ByteBuf)) {
      ctx.fireChannelRead(msg);
      return;
    }
    final ByteBuf in = (ByteBuf) msg;
    try {
      decode(ctx, in);
    } finally {
      ReferenceCountUtil.release(in);
    }
  }

  private void decode(final ChannelHandlerContext ctx, final ByteBuf in) {
    while (in.isReadable() && !failed) {
      if (payloadRemaining > 0) {
        final int n = (int) Math.min(payloadRemaining, in.readableBytes());
        payloadRemaining -= n;
        ctx.fireChannelRead(in.readRetainedSlice(n));
        continue;
      }
      final YamuxFrame frame;
      if (partialHeaderLength == 0 && in.readableBytes() >= YamuxFrame.HEADER_LENGTH) {
        frame = parseHeader(ctx, in, in.readerIndex());
        in.skipBytes(YamuxFrame.HEADER_LENGTH);
      } else {
        final int n = Math.min(YamuxFrame.HEADER_LENGTH - partialHeaderLength, in.readableBytes());
        in.readBytes(partialHeader, partialHeaderLength, n);
        partialHeaderLength += n;
        if (partialHeaderLength < YamuxFrame.HEADER_LENGTH) {
          return;
        }
        partialHeaderLength = 0;
        frame = parseHeader(ctx, partialHeader);
      }
      if (frame == null) {
        return;
      }
      if (frame.type() == YamuxFrameType.DATA) {
        payloadRemaining = frame.length();
      }
      ctx.fireChannelRead(frame);
    }
  }

  private YamuxFrame parseHeader(final ChannelHandlerContext ctx, final ByteBuf in, final int at) {
    return validate(
        ctx,
        in.getUnsignedByte(at),
        in.getUnsignedByte(at + 1),
        in.getUnsignedShort(at + 2),
        in.getInt(at + 4),
        in.getUnsignedInt(at + 8));
  }

  private YamuxFrame parseHeader(final ChannelHandlerContext ctx, final byte[] h) {
    return validate(
        ctx,
        h[0] & 0xff,
        h[1] & 0xff,
        (h[2] & 0xff) << 8 | (h[3] & 0xff),
        (h[4] & 0xff) << 24 | (h[5] & 0xff) << 16 | (h[6] & 0xff) << 8 | (h[7] & 0xff),
        ((long) (h[8] & 0xff) << 24 | (h[9] & 0xff) << 16 | (h[10] & 0xff) << 8 | (h[11] & 0xff)));
  }

  private YamuxFrame validate(
      final ChannelHandlerContext ctx,
      final int version,
      final int typeCode,
      final int flags,
      final int streamId,
      final long length) {
    if (version != YamuxFrame.VERSION) {
      return fail(ctx, "unsupported yamux version " + version);
    }
    final YamuxFrameType type = YamuxFrameType.fromCode(typeCode);
    if (type == null) {
      return fail(ctx, "unknown yamux frame type " + typeCode);
    }
    // Checked on the header, before any payload is read: an oversized frame costs nothing.
    if (type == YamuxFrameType.DATA && length > maxDataLength) {
      return fail(ctx, "yamux DATA frame of " + length + " bytes exceeds " + maxDataLength);
    }
    return new YamuxFrame(type, flags, streamId, length);
  }

  private YamuxFrame fail(final ChannelHandlerContext ctx, final String message) {
    failed = true;
    ctx.fireExceptionCaught(new ProtocolViolationException(message));
    return null;
  }
}
