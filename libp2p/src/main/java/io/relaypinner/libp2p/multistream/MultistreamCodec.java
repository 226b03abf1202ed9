package io.relaypinner.libp2p.multistream;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.relaypinner.libp2p.core.ProtocolViolationException;
import io.relaypinner.libp2p.netty.UvarintFrameEncoder;
import io.relaypinner.multiformats.MultiformatException;
import io.relaypinner.multiformats.Uvarint;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * Reads and writes multistream-select 1.0 messages ({@code uvarint(len) ‖ utf8 ‖ '\n'}).
 *
 * <p>Reading takes exactly one message off the buffer and leaves everything behind it untouched.
 * That is why the negotiation handlers do not sit behind {@code UvarintFrameDecoder}: it slices
 * every frame it can find in a read, so application bytes that arrive right behind the final
 * proposal (js-libp2p's optimistic select) would be parsed as frames, or rejected as oversized,
 * before the handler could step aside.
 */
final class MultistreamCodec {
  private static final byte NEWLINE = '\n';

  private MultistreamCodec() {}

  /** Appends one message carrying {@code text} to {@code out}. */
  static void writeMessage(final ByteBuf out, final String text) {
    final byte[] utf8 = text.getBytes(StandardCharsets.UTF_8);
    UvarintFrameEncoder.writeUvarint(out, utf8.length + 1L);
    out.writeBytes(utf8);
    out.writeByte(NEWLINE);
  }

  /** One buffer holding {@code texts} as consecutive messages, so they leave in one write. */
  static ByteBuf encode(final ByteBufAllocator alloc, final String... texts) {
    final ByteBuf out = alloc.buffer();
    for (final String text : texts) {
      writeMessage(out, text);
    }
    return out;
  }

  /**
   * Appends the answer to {@code ls} the way js-libp2p and go-multistream write it: one message
   * whose body is each protocol as its own length-prefixed {@code id\n}, then a final
   * {@code '\n'}. Protocols that would push the body past {@value
   * MultistreamProtocol#MAX_MESSAGE_LENGTH} bytes are left out, because a conforming dialer
   * rejects a longer message and a partial list is still a valid answer.
   */
  static void writeLs(final ByteBuf out, final List<String> protocols) {
    final ByteBuf body = out.alloc().buffer();
    try {
      for (final String protocol : protocols) {
        final int entryLength = protocol.getBytes(StandardCharsets.UTF_8).length + 1;
        final int entrySize = Uvarint.size(entryLength) + entryLength;
        // Keep one byte for the closing newline.
        if (body.readableBytes() + entrySize + 1 > MultistreamProtocol.MAX_MESSAGE_LENGTH) {
          break;
        }
        writeMessage(body, protocol);
      }
      body.writeByte(NEWLINE);
      UvarintFrameEncoder.writeUvarint(out, body.readableBytes());
      out.writeBytes(body);
    } finally {
      body.release();
    }
  }

  /**
   * Takes the next complete message off {@code in} and returns its text without the newline, or
   * returns {@code null} and consumes nothing when the message is not complete yet (a prefix or
   * body split across reads).
   *
   * <p>Limits are checked as soon as the prefix is known, before the body is waited for: a
   * declared length over {@code maxMessageLength}, or a prefix longer than that length needs,
   * fails at once.
   *
   * @throws ProtocolViolationException for a bad or oversized prefix, an empty message, a missing
   *     newline or text that is not UTF-8
   */
  static String readMessage(final ByteBuf in, final int maxMessageLength) {
    final int start = in.readerIndex();
    final int readable = in.readableBytes();
    final byte[] prefix = new byte[Math.min(readable, Uvarint.MAX_BYTES)];
    in.getBytes(start, prefix);
    final long length;
    try {
      length = Uvarint.tryRead(prefix, 0, prefix.length);
    } catch (final MultiformatException e) {
      throw new ProtocolViolationException("bad multistream-select length prefix", e);
    }
    if (length == Uvarint.INCOMPLETE) {
      // A minimal varint with more bytes than the limit's own encoding exceeds the limit.
      if (prefix.length >= Uvarint.size(maxMessageLength)) {
        throw new ProtocolViolationException(
            "multistream-select message exceeds " + maxMessageLength + " bytes");
      }
      return null;
    }
    if (length == 0) {
      throw new ProtocolViolationException("empty multistream-select message");
    }
    if (length > maxMessageLength) {
      throw new ProtocolViolationException(
          "multistream-select message of " + length + " bytes exceeds " + maxMessageLength);
    }
    final int prefixSize = Uvarint.size(length);
    final int bodyLength = (int) length;
    if (readable - prefixSize < bodyLength) {
      return null;
    }
    final int bodyStart = start + prefixSize;
    if (in.getByte(bodyStart + bodyLength - 1) != NEWLINE) {
      throw new ProtocolViolationException("multistream-select message without trailing newline");
    }
    final String text;
    try {
      text = StandardCharsets.UTF_8.newDecoder()
          .onMalformedInput(CodingErrorAction.REPORT)
          .onUnmappableCharacter(CodingErrorAction.REPORT)
          .decode(in.nioBuffer(bodyStart, bodyLength - 1))
          .toString();
    } catch (final CharacterCodingException e) {
      throw new ProtocolViolationException("multistream-select message is not UTF-8", e);
    }
    in.readerIndex(bodyStart + bodyLength);
    return text;
  }
}
