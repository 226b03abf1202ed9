package io.relaypinner.libp2p.netty;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandler.Sharable;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.MessageToMessageEncoder;
import io.relaypinner.multiformats.Uvarint;
import java.util.List;

/**
 * Prefixes each outbound {@link ByteBuf} with its length as an unsigned varint. The prefix is a
 * separate small buffer so the payload is never copied.
 */
@Sharable
public final class UvarintFrameEncoder extends MessageToMessageEncoder<ByteBuf> {
  /** Stateless; one instance serves every pipeline. */
  public static final UvarintFrameEncoder INSTANCE = new UvarintFrameEncoder();

  private UvarintFrameEncoder() {
    super(ByteBuf.class);
  }

  @Override
  protected void encode(final ChannelHandlerContext ctx, final ByteBuf msg, final List<Object> out) {
    final int length = msg.readableBytes();
    final ByteBuf prefix = ctx.alloc().buffer(Uvarint.size(length));
    writeUvarint(prefix, length);
    out.add(prefix);
    out.add(msg.retain());
  }

  /** Writes {@code value} as an unsigned varint into {@code out}. */
  public static void writeUvarint(final ByteBuf out, final long value) {
    long v = value;
    while ((v & ~0x7FL) != 0) {
      out.writeByte((int) ((v & 0x7F) | 0x80));
      v >>>= 7;
    }
    out.writeByte((int) v);
  }
}
