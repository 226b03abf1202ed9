package io.relaypinner.libp2p.mux.yamux;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.util.Objects;

/**
 * One yamux frame header, as defined by hashicorp yamux {@code spec.md} and libp2p {@code
 * yamux/README.md} ({@code /yamux/1.0.0}). All fields are big-endian:
 *
 * <pre>
 * +---------+--------+-----------+---------------+---------------+
 * | version |  type  |   flags   |   stream id   |    length     |
 * |  1 (=0) |   1    |     2     |       4       |       4       |
 * +---------+--------+-----------+---------------+---------------+
 * </pre>
 *
 * <p>For {@link YamuxFrameType#DATA} the length is the number of payload bytes that follow the
 * header; for {@link YamuxFrameType#WINDOW_UPDATE} it is the window delta; for {@link
 * YamuxFrameType#PING} an opaque value the answer echoes; for {@link YamuxFrameType#GO_AWAY} the
 * error code. The payload itself is not part of this value: {@link YamuxFrameCodec} emits it as
 * separate {@link ByteBuf} slices so that no DATA frame is ever copied or buffered whole.
 *
 * @param type the frame type
 * @param flags the 16-bit flag field ({@link #FLAG_SYN} etc.; unknown bits are kept, not checked)
 * @param streamId the stream id, an unsigned 32-bit value held in an {@code int}
 * @param length the length field, an unsigned 32-bit value
 */
public record YamuxFrame(YamuxFrameType type, int flags, int streamId, long length) {
  /** The only version defined. */
  public static final int VERSION = 0;

  /** Size of the fixed header. */
  public static final int HEADER_LENGTH = 12;

  /** Largest value of the 32-bit length field. */
  public static final long MAX_LENGTH = 0xFFFF_FFFFL;

  /** Opens a stream (DATA or WINDOW_UPDATE), or marks a ping request. */
  public static final int FLAG_SYN = 0x1;

  /** Accepts a stream (DATA or WINDOW_UPDATE), or marks a ping answer. */
  public static final int FLAG_ACK = 0x2;

  /** Half-closes the sender's side of a stream. */
  public static final int FLAG_FIN = 0x4;

  /** Resets a stream immediately. */
  public static final int FLAG_RST = 0x8;

  /** GO_AWAY code: normal termination. */
  public static final long GO_AWAY_NORMAL = 0;

  /** GO_AWAY code: the peer broke the protocol. */
  public static final long GO_AWAY_PROTOCOL_ERROR = 1;

  /** GO_AWAY code: the sender failed internally. */
  public static final long GO_AWAY_INTERNAL_ERROR = 2;

  /** Validates the field ranges. */
  public YamuxFrame {
    Objects.requireNonNull(type, "type");
    if (flags < 0 || flags > 0xFFFF) {
      throw new IllegalArgumentException("flags out of 16-bit range: " + flags);
    }
    if (length < 0 || length > MAX_LENGTH) {
      throw new IllegalArgumentException("length out of 32-bit range: " + length);
    }
  }

  /** A DATA header announcing {@code length} payload bytes. */
  public static YamuxFrame data(final int flags, final int streamId, final long length) {
    return new YamuxFrame(YamuxFrameType.DATA, flags, streamId, length);
  }

  /** A WINDOW_UPDATE granting {@code delta} more bytes (flags may open, accept, close or reset). */
  public static YamuxFrame windowUpdate(final int flags, final int streamId, final long delta) {
    return new YamuxFrame(YamuxFrameType.WINDOW_UPDATE, flags, streamId, delta);
  }

  /** A PING on stream 0: {@link #FLAG_SYN} to ask, {@link #FLAG_ACK} to answer. */
  public static YamuxFrame ping(final int flags, final long opaque) {
    return new YamuxFrame(YamuxFrameType.PING, flags, 0, opaque);
  }

  /** A GO_AWAY on stream 0 with one of the {@code GO_AWAY_*} codes. */
  public static YamuxFrame goAway(final long code) {
    return new YamuxFrame(YamuxFrameType.GO_AWAY, 0, 0, code);
  }

  /** Whether every bit of {@code flag} is set. */
  public boolean hasFlag(final int flag) {
    return (flags & flag) == flag;
  }

  /** The stream id as the unsigned number it is on the wire. */
  public long unsignedStreamId() {
    return Integer.toUnsignedLong(streamId);
  }

  /** Encodes the 12 header bytes into a new buffer from {@code alloc}. */
  public ByteBuf encode(final ByteBufAllocator alloc) {
    final ByteBuf out = alloc.buffer(HEADER_LENGTH, HEADER_LENGTH);
    writeHeader(out, type, flags, streamId, length);
    return out;
  }

  /** Appends a header to {@code out}; the hot path uses this to avoid creating a record. */
  static void writeHeader(
      final ByteBuf out,
      final YamuxFrameType type,
      final int flags,
      final int streamId,
      final long length) {
    out.writeByte(VERSION);
    out.writeByte(type.code());
    out.writeShort(flags);
    out.writeInt(streamId);
    out.writeInt((int) length);
  }

  @Override
  public String toString() {
    final StringBuilder sb = new StringBuilder(48).append(type).append('(');
    appendFlag(sb, FLAG_SYN, "SYN");
    appendFlag(sb, FLAG_ACK, "ACK");
    appendFlag(sb, FLAG_FIN, "FIN");
    appendFlag(sb, FLAG_RST, "RST");
    final int unknown = flags & ~(FLAG_SYN | FLAG_ACK | FLAG_FIN | FLAG_RST);
    if (unknown != 0) {
      sb.append("0x").append(Integer.toHexString(unknown)).append('|');
    }
    if (sb.charAt(sb.length() - 1) == '|') {
      sb.setLength(sb.length() - 1);
    }
    return sb.append(") stream=")
        .append(Integer.toUnsignedString(streamId))
        .append(" length=")
        .append(length)
        .toString();
  }

  private void appendFlag(final StringBuilder sb, final int flag, final String name) {
    if ((flags & flag) != 0) {
      sb.append(name).append('|');
    }
  }
}
