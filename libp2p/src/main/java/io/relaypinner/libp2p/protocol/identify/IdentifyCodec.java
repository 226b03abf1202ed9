package io.relaypinner.libp2p.protocol.identify;

import com.google.protobuf.CodedOutputStream;
import com.google.protobuf.InvalidProtocolBufferException;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.relaypinner.libp2p.core.InternalErrorException;
import io.relaypinner.libp2p.core.ProtocolViolationException;
import io.relaypinner.libp2p.netty.UvarintFrameEncoder;
import io.relaypinner.libp2p.protocol.identify.pb.IdentifyProtos;
import io.relaypinner.multiformats.Uvarint;
import java.io.IOException;

/**
 * Identify messages on the wire: {@code uvarint(length) ‖ Identify protobuf}.
 *
 * <pre>
 * +---------------------+--------------------------------------+
 * | length (uvarint)    | Identify protobuf (length bytes)     |
 * +---------------------+--------------------------------------+
 * </pre>
 */
final class IdentifyCodec {
  private IdentifyCodec() {}

  /** One prefixed frame in a single buffer, so the muxer sends it in one piece. */
  static ByteBuf frame(final ByteBufAllocator alloc, final IdentifyProtos.Identify message) {
    final int length = message.getSerializedSize();
    final int total = Uvarint.size(length) + length;
    final ByteBuf out = alloc.buffer(total, total);
    try {
      UvarintFrameEncoder.writeUvarint(out, length);
      final CodedOutputStream cos =
          CodedOutputStream.newInstance(out.nioBuffer(out.writerIndex(), length));
      message.writeTo(cos);
      cos.checkNoSpaceLeft();
      out.writerIndex(total);
      return out;
    } catch (final IOException | RuntimeException e) {
      out.release();
      throw new InternalErrorException("identify: could not encode our own message", e);
    }
  }

  /**
   * Parses one frame's payload (without its prefix). Does not release {@code payload}.
   *
   * @throws ProtocolViolationException when it is not an Identify protobuf
   */
  static IdentifyProtos.Identify parse(final ByteBuf payload) {
    try {
      return IdentifyProtos.Identify.parseFrom(payload.nioBuffer());
    } catch (final InvalidProtocolBufferException e) {
      throw new ProtocolViolationException("malformed Identify message: " + e.getMessage(), e);
    }
  }
}
