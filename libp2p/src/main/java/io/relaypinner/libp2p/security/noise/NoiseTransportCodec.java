package io.relaypinner.libp2p.security.noise;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.netty.handler.codec.DecoderException;
import io.netty.util.ReferenceCountUtil;
import io.relaypinner.libp2p.core.BadPeerException;
import io.relaypinner.libp2p.core.ProtocolViolationException;
import io.relaypinner.libp2p.netty.OutboundPassThrough;
import java.nio.ByteBuffer;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The libp2p Noise transport framing (libp2p/specs noise/README.md r4, "Wire Format" and
 * "Encryption and I/O"): every message is {@code uint16 BE length || ChaCha20-Poly1305 ciphertext
 * || 16-byte tag}, at most 65535 bytes after the prefix. Installed by {@link NoiseHandshakeHandler}
 * in its own place; never constructed by callers.
 *
 * <p>Inbound: all complete messages of a read are decrypted into one plaintext {@link ByteBuf}
 * (fewer allocations and pipeline calls when yamux sends many small frames); a message split across
 * reads waits for the rest. Outbound: each {@link ByteBuf} is cut into chunks of at most {@code
 * maxMessageLength - 16} plaintext bytes (65519 by default, as js-libp2p-noise), all encrypted into
 * one output buffer. Only {@code ByteBuf}s may be written: anything else would bypass encryption,
 * so it is refused.
 *
 * <p>Both outputs are heap buffers: the JDK's ChaCha20-Poly1305 works on arrays, so an array-backed
 * target saves it a temporary array and a copy per message (measured equal or faster, and steadier,
 * than direct targets); the socket write copies to direct memory anyway.
 *
 * <p>A message that fails authentication, is shorter than a tag or longer than the limit closes the
 * channel and is propagated as an unwrapped {@link ProtocolViolationException} via {@code
 * exceptionCaught}, so the connection's last handler can count it (at DEBUG, no stack trace).
 */
public final class NoiseTransportCodec extends ByteToMessageDecoder
    implements OutboundPassThrough {
  private static final Logger LOG = LoggerFactory.getLogger(NoiseTransportCodec.class);
  private static final int LENGTH_PREFIX_BYTES = 2;
  private static final int FRAME_OVERHEAD = LENGTH_PREFIX_BYTES + CipherState.TAG_LENGTH;

  private final CipherState send;
  private final CipherState receive;
  private final int maxMessageLength;
  private final int maxPlaintextLength;
  // Output of an empty message (a bare tag): nothing is written to it, so one instance serves.
  private final ByteBuffer emptyPlaintext = ByteBuffer.allocate(0);
  private boolean failed;

  NoiseTransportCodec(final TransportCiphers ciphers, final NoiseConfig config) {
    this.send = ciphers.send();
    this.receive = ciphers.receive();
    this.maxMessageLength = config.maxMessageLength();
    this.maxPlaintextLength = config.maxPlaintextLength();
  }

  @Override
  protected void decode(final ChannelHandlerContext ctx, final ByteBuf in, final List<Object> out) {
    if (failed) {
      // The connection is closing; what else arrives is dropped, never decrypted.
      in.skipBytes(in.readableBytes());
      return;
    }
    final int end = in.writerIndex();
    int index = in.readerIndex();
    int messages = 0;
    int plaintextLength = 0;
    while (end - index >= LENGTH_PREFIX_BYTES) {
      final int length = in.getUnsignedShort(index);
      if (length > maxMessageLength || length < CipherState.TAG_LENGTH) {
        failed = true;
        in.skipBytes(in.readableBytes());
        throw new ProtocolViolationException(
            "Noise transport message of "
                + length
                + " bytes; must be within ["
                + CipherState.TAG_LENGTH
                + ", "
                + maxMessageLength
                + "]");
      }
      if (end - index - LENGTH_PREFIX_BYTES < length) {
        break;
      }
      index += LENGTH_PREFIX_BYTES + length;
      plaintextLength += length - CipherState.TAG_LENGTH;
      messages++;
    }
    if (messages == 0) {
      return;
    }
    final ByteBuf plaintext = plaintextLength == 0 ? null : ctx.alloc().heapBuffer(plaintextLength);
    try {
      for (int i = 0; i < messages; i++) {
        final int length = in.readUnsignedShort();
        final int bodyLength = length - CipherState.TAG_LENGTH;
        final ByteBuffer target =
            bodyLength == 0
                ? emptyPlaintext
                : plaintext.nioBuffer(plaintext.writerIndex(), bodyLength);
        receive.decrypt(in.nioBuffer(in.readerIndex(), length), target);
        in.skipBytes(length);
        if (bodyLength > 0) {
          plaintext.writerIndex(plaintext.writerIndex() + bodyLength);
        }
      }
    } catch (final RuntimeException e) {
      if (plaintext != null) {
        plaintext.release();
      }
      failed = true;
      in.skipBytes(in.readableBytes());
      throw e;
    }
    if (plaintext != null) {
      out.add(plaintext);
    }
  }

  @Override
  public void exceptionCaught(final ChannelHandlerContext ctx, final Throwable cause) {
    if (!failed) {
      // Not from our decoder: not ours to handle.
      ctx.fireExceptionCaught(cause);
      return;
    }
    final Throwable unwrapped =
        cause instanceof DecoderException && cause.getCause() != null ? cause.getCause() : cause;
    if (unwrapped instanceof BadPeerException) {
      LOG.debug(
          "closing Noise connection to {}: {}",
          ctx.channel().remoteAddress(),
          unwrapped.toString());
    } else {
      LOG.error("Noise decryption failed on our side; closing {}", ctx.channel(), unwrapped);
    }
    // The receive nonce no longer matches the remote's: nothing after this can be decrypted.
    ctx.fireExceptionCaught(unwrapped);
    ctx.close();
  }

  @Override
  public void write(
      final ChannelHandlerContext ctx, final Object msg, final ChannelPromise promise) {
    if (!(msg instanceof ByteBuf plaintext)) {
      ReferenceCountUtil.release(msg);
      promise.setFailure(
          new IllegalArgumentException(
              "the Noise transport writes ByteBufs only, not " + msg.getClass().getName()));
      return;
    }
    final int length = plaintext.readableBytes();
    if (length == 0) {
      // Nothing to encrypt; an empty message would still cost a nonce and 18 bytes.
      ctx.write(plaintext, promise);
      return;
    }
    final int messages = (length + maxPlaintextLength - 1) / maxPlaintextLength;
    final long outLength = (long) length + (long) messages * FRAME_OVERHEAD;
    ByteBuf ciphertext = null;
    boolean encrypting = false;
    try {
      if (outLength > Integer.MAX_VALUE) {
        throw new IllegalArgumentException("write of " + length + " bytes is too large to frame");
      }
      ciphertext = ctx.alloc().heapBuffer((int) outLength);
      int index = plaintext.readerIndex();
      for (int remaining = length; remaining > 0; ) {
        final int chunk = Math.min(remaining, maxPlaintextLength);
        final int messageLength = chunk + CipherState.TAG_LENGTH;
        ciphertext.writeShort(messageLength);
        encrypting = true;
        send.encrypt(
            plaintext.nioBuffer(index, chunk),
            ciphertext.nioBuffer(ciphertext.writerIndex(), messageLength));
        ciphertext.writerIndex(ciphertext.writerIndex() + messageLength);
        index += chunk;
        remaining -= chunk;
      }
    } catch (final RuntimeException e) {
      ReferenceCountUtil.safeRelease(plaintext);
      if (ciphertext != null) {
        ciphertext.release();
      }
      promise.setFailure(e);
      if (encrypting) {
        // The send nonce may have advanced past what the remote will see: the session is over.
        LOG.error("Noise encryption failed; closing {}", ctx.channel(), e);
        ctx.close();
      }
      return;
    }
    plaintext.release();
    ctx.write(ciphertext, promise);
  }

}
