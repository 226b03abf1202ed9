package io.relaypinner.handoff.wallet;

import org.bouncycastle.crypto.digests.KeccakDigest;

/**
 * Keccak-256 as Ethereum uses it (the original Keccak padding, not NIST SHA3-256), from
 * BouncyCastle's {@link KeccakDigest}.
 */
public final class Keccak {
  /** Bytes of a Keccak-256 digest. */
  public static final int LENGTH = 32;

  private Keccak() {}

  /** Keccak-256 of {@code data}. */
  public static byte[] keccak256(final byte[] data) {
    return keccak256(data, 0, data.length);
  }

  /** Keccak-256 of {@code length} bytes of {@code data} from {@code offset}. */
  public static byte[] keccak256(final byte[] data, final int offset, final int length) {
    final KeccakDigest digest = new KeccakDigest(256);
    digest.update(data, offset, length);
    final byte[] out = new byte[LENGTH];
    digest.doFinal(out, 0);
    return out;
  }
}
