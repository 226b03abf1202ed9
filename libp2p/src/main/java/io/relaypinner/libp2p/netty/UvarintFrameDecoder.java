package io.relaypinner.libp2p.netty;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.relaypinner.libp2p.core.LimitExceededException;
import io.relaypinner.libp2p.core.ProtocolViolationException;
import java.util.List;

/**
 * Splits a byte stream into frames prefixed by an unsigned varint length (multiformats
 * unsigned-varint), the framing of multistream-select, identify, gossipsub, bitswap and circuit
 * relay messages. A prefix split across reads and several frames in one read are both normal.
 *
 * <p>A length over {@code maxFrameLength}, or a prefix longer than the varint limit, throws
 * {@link ProtocolViolationException} before anything is buffered: the caller closes the stream.
 * Emits retained slices; the next handler releases them.
 */
public final class UvarintFrameDecoder extends ByteToMessageDecoder {
  /** A length prefix never needs more than 9 bytes (63 bits). */
  private static final int MAX_PREFIX_BYTES = 9;

  private final int maxFrameLength;
  private boolean failed;

  public UvarintFrameDecoder(final int maxFrameLength) {
    if (maxFrameLength <= 0) {
      throw new IllegalArgumentException("maxFrameLength must be > 0: " + maxFrameLength);
    }
    this.maxFrameLength = maxFrameLength;
  }

  @Override
  protected void decode(final ChannelHandlerContext ctx, final ByteBuf in, final List<Object> out) {
    if (failed) {
      // The stream is being closed; whatever else arrives is dropped, never parsed.
      in.skipBytes(in.readableBytes());
      return;
    }
    while (in.isReadable()) {
      final long length;
      try {
        length = readLength(in);
      } catch (final ProtocolViolationException e) {
        failed = true;
        in.skipBytes(in.readableBytes());
        throw e;
      }
      if (length < 0) {
        return;
      }
      out.add(in.readRetainedSlice((int) length));
    }
  }

  /**
   * Reads one length prefix if the prefix and the whole frame are available, leaving the reader
   * index on the frame's first byte; otherwise returns -1 and moves nothing.
   */
  private long readLength(final ByteBuf in) {
    final int start = in.readerIndex();
    final int available = in.readableBytes();
    long value = 0;
    for (int i = 0; i < MAX_PREFIX_BYTES; i++) {
      if (i >= available) {
        return -1;
      }
      final int b = in.getUnsignedByte(start + i);
      value |= (long) (b & 0x7f) << (7 * i);
      if ((b & 0x80) == 0) {
        if (b == 0 && i > 0) {
          throw new ProtocolViolationException("non-minimal varint length prefix");
        }
        if (value > maxFrameLength) {
          throw new LimitExceededException(
              "frame of " + value + " bytes exceeds the limit of " + maxFrameLength);
        }
        if (available - (i + 1) < value) {
          return -1;
        }
        in.skipBytes(i + 1);
        return value;
      }
    }
    throw new ProtocolViolationException("varint length prefix longer than 9 bytes");
  }
}
