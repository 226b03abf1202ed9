package io.relaypinner.libp2p.transport.quic;

import io.netty.buffer.ByteBuf;
import io.netty.handler.codec.quic.QuicConnectionIdGenerator;
import java.nio.ByteBuffer;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The listener's QUIC connection ids (RFC 9000 §5.1): {@value #LENGTH} bytes, the last
 * {@value #TAG} an HMAC of the first ones under a key of this listener. A datagram that claims to
 * belong to a connection of ours (short header, Handshake) can then be checked without any state,
 * so {@link QuicDatagramFilter} drops and counts garbage before the QUIC stack parses it.
 * Idempotent for a given input (what the server codec needs for retransmitted Initials).
 */
final class SignedConnectionIds implements QuicConnectionIdGenerator {
  static final int LENGTH = 20;
  static final int TAG = 8;
  private final SecretKeySpec prefixKey;
  private final SecretKeySpec tagKey;
  private final SecureRandom random;
  private final ThreadLocal<Mac> prefixMac;
  private final ThreadLocal<Mac> tagMac;

  SignedConnectionIds(final SecureRandom random) {
    this.random = random;
    final byte[] one = new byte[32];
    final byte[] two = new byte[32];
    random.nextBytes(one);
    random.nextBytes(two);
    this.prefixKey = new SecretKeySpec(one, "HmacSHA256");
    this.tagKey = new SecretKeySpec(two, "HmacSHA256");
    this.prefixMac = ThreadLocal.withInitial(() -> mac(prefixKey));
    this.tagMac = ThreadLocal.withInitial(() -> mac(tagKey));
  }

  private static Mac mac(final SecretKeySpec key) {
    try {
      final Mac mac = Mac.getInstance("HmacSHA256");
      mac.init(key);
      return mac;
    } catch (final GeneralSecurityException e) {
      throw new IllegalStateException("HmacSHA256 unavailable", e);
    }
  }

  @Override
  public ByteBuffer newId(final int length) {
    final byte[] prefix = new byte[LENGTH - TAG];
    random.nextBytes(prefix);
    return signed(prefix);
  }

  @Override
  public ByteBuffer newId(final ByteBuffer input, final int length) {
    final Mac mac = prefixMac.get();
    mac.update(input.duplicate());
    final byte[] prefix = new byte[LENGTH - TAG];
    System.arraycopy(mac.doFinal(), 0, prefix, 0, prefix.length);
    return signed(prefix);
  }

  private ByteBuffer signed(final byte[] prefix) {
    final byte[] id = new byte[LENGTH];
    System.arraycopy(prefix, 0, id, 0, prefix.length);
    System.arraycopy(tag(prefix), 0, id, prefix.length, TAG);
    return ByteBuffer.wrap(id);
  }

  private byte[] tag(final byte[] prefix) {
    return tagMac.get().doFinal(prefix);
  }

  /** Whether the {@value #LENGTH} bytes at {@code offset} of {@code buf} are an id of ours. */
  boolean isOurs(final ByteBuf buf, final int offset) {
    if (buf.writerIndex() - offset < LENGTH) {
      return false;
    }
    final byte[] prefix = new byte[LENGTH - TAG];
    buf.getBytes(offset, prefix);
    final byte[] claimed = new byte[TAG];
    buf.getBytes(offset + prefix.length, claimed);
    final byte[] expected = new byte[TAG];
    System.arraycopy(tag(prefix), 0, expected, 0, TAG);
    return MessageDigest.isEqual(expected, claimed);
  }

  @Override
  public int maxConnectionIdLength() {
    return LENGTH;
  }

  @Override
  public boolean isIdempotent() {
    return true;
  }
}
