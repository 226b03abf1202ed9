package io.relaypinner.libp2p.protocol.kad;

import io.relaypinner.multiformats.PeerId;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.Comparator;

/**
 * A point of the Kademlia keyspace: the SHA-256 of a DHT key (a peer's multihash bytes, or a
 * content multihash), as libp2p/specs kad-dht/README.md ("Distance") defines it. Distances are
 * the XOR of two points read as a 256-bit unsigned integer. Immutable.
 */
public final class KadKey {
  /** Bytes of a point: SHA-256. */
  public static final int SIZE = 32;
  /** Bits of a point, so also the number of k-buckets. */
  public static final int BITS = SIZE * 8;

  /** MessageDigest.getInstance costs more than hashing a key: one digest per thread. */
  private static final ThreadLocal<MessageDigest> SHA256 = ThreadLocal.withInitial(() -> {
    try {
      return MessageDigest.getInstance("SHA-256");
    } catch (final NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is part of every JVM", e);
    }
  });

  private final byte[] point;

  private KadKey(final byte[] point) {
    this.point = point;
  }

  /** The point of a DHT key (the key's bytes are hashed, never used as the point). */
  public static KadKey of(final byte[] dhtKey) {
    return new KadKey(sha256(dhtKey));
  }

  /** The point of a peer: the SHA-256 of its multihash bytes. */
  public static KadKey of(final PeerId peer) {
    return of(peer.bytes());
  }

  /** A point given directly (tests, prefix generation); {@code point} must be 32 bytes. */
  static KadKey ofPoint(final byte[] point) {
    if (point.length != SIZE) {
      throw new IllegalArgumentException("a point has " + SIZE + " bytes: " + point.length);
    }
    return new KadKey(point.clone());
  }

  static byte[] sha256(final byte[] data) {
    return SHA256.get().digest(data);
  }

  /** The number of leading bits this point shares with {@code other} (256 when equal). */
  public int commonPrefixLength(final KadKey other) {
    for (int i = 0; i < SIZE; i++) {
      final int x = (point[i] ^ other.point[i]) & 0xff;
      if (x != 0) {
        return i * 8 + Integer.numberOfLeadingZeros(x) - 24;
      }
    }
    return BITS;
  }

  /** Negative when {@code a} is closer to this point than {@code b}, 0 when as close. */
  public int compareDistance(final KadKey a, final KadKey b) {
    for (int i = 0; i < SIZE; i++) {
      final int da = (a.point[i] ^ point[i]) & 0xff;
      final int db = (b.point[i] ^ point[i]) & 0xff;
      if (da != db) {
        return Integer.compare(da, db);
      }
    }
    return 0;
  }

  /** Bit {@code index} of the point (0 = the most significant bit of the first byte). */
  boolean bit(final int index) {
    return (point[index >>> 3] & (0x80 >>> (index & 7))) != 0;
  }

  /** Orders points by their distance to this one, closest first. */
  public Comparator<KadKey> byDistance() {
    return this::compareDistance;
  }

  /** The point's bytes (a copy). */
  public byte[] bytes() {
    return point.clone();
  }

  @Override
  public boolean equals(final Object o) {
    return o instanceof KadKey other && Arrays.equals(point, other.point);
  }

  @Override
  public int hashCode() {
    return Arrays.hashCode(point);
  }

  @Override
  public String toString() {
    final StringBuilder out = new StringBuilder();
    for (int i = 0; i < 4; i++) {
      out.append(String.format("%02x", point[i]));
    }
    return out.append("…").toString();
  }
}
