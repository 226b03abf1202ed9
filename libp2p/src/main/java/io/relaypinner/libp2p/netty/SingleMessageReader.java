package io.relaypinner.libp2p.netty;

import com.google.protobuf.MessageLite;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.CompositeByteBuf;
import io.relaypinner.libp2p.core.ProtocolViolationException;
import io.relaypinner.multiformats.Uvarint;

/**
 * Reads exactly one unsigned-varint-length-prefixed message from a stream's bytes and keeps
 * whatever follows it, which belongs to the relayed connection once the circuit is spliced
 * (libp2p/specs relay/circuit-v2.md: after the STATUS OK the stream carries the relayed bytes).
 * A frame decoder would parse those bytes as more messages. Not thread-safe: one stream's loop.
 */
public final class SingleMessageReader {
  /** Thrown for a length over the limit. */
  public static final class OversizedException extends ProtocolViolationException {
    private static final long serialVersionUID = 1L;

    OversizedException(final String message) {
      super(message);
    }
  }

  private final int maxSize;
  private CompositeByteBuf buffer;
  private boolean done;

  public SingleMessageReader(final int maxSize) {
    this.maxSize = maxSize;
  }

  /**
   * Adds {@code in} (ownership passes here).
   *
   * @return the message's bytes once complete (once only), else null
   * @throws OversizedException when the length prefix is over the limit or malformed
   */
  public byte[] add(final ByteBufAllocator alloc, final ByteBuf in) {
    if (buffer == null) {
      buffer = alloc.compositeBuffer();
    }
    buffer.addComponent(true, in);
    if (done) {
      return null;
    }
    final int start = buffer.readerIndex();
    long length = 0;
    int i = 0;
    while (true) {
      if (i >= buffer.readableBytes()) {
        checkPending();
        return null;
      }
      final int b = buffer.getUnsignedByte(start + i);
      length |= (long) (b & 0x7f) << (7 * i);
      i++;
      if ((b & 0x80) == 0) {
        break;
      }
      if (i >= 3) {
        // A fourth varint byte means over 2 MiB: no message of ours is that big.
        throw new OversizedException("message length prefix too long");
      }
    }
    if (length > maxSize) {
      throw new OversizedException("message of " + length + " bytes exceeds " + maxSize);
    }
    if (buffer.readableBytes() - i < length) {
      return null;
    }
    buffer.skipBytes(i);
    final byte[] message = new byte[(int) length];
    buffer.readBytes(message);
    buffer.discardReadComponents();
    done = true;
    return message;
  }

  private void checkPending() {
    if (buffer.readableBytes() > maxSize + Uvarint.MAX_BYTES) {
      throw new OversizedException("message exceeds " + maxSize + " bytes");
    }
  }

  /** The bytes after the message (ownership passes to the caller), or null. */
  public ByteBuf takeRest() {
    final ByteBuf rest = buffer;
    buffer = null;
    if (rest != null && !rest.isReadable()) {
      rest.release();
      return null;
    }
    return rest;
  }

  public void release() {
    if (buffer != null) {
      buffer.release();
      buffer = null;
    }
  }

  /** {@code message} with its varint length prefix, ready to write. */
  public static ByteBuf frame(final ByteBufAllocator alloc, final MessageLite message) {
    final byte[] bytes = message.toByteArray();
    final ByteBuf out = alloc.buffer(Uvarint.size(bytes.length) + bytes.length);
    UvarintFrameEncoder.writeUvarint(out, bytes.length);
    out.writeBytes(bytes);
    return out;
  }
}
