package io.relaypinner.orbitdb.identity.webauthn;

import java.util.HexFormat;
import java.util.Optional;

/** The byte-string fields of passkey identities and entries, given in hex by the decoders. */
final class BinaryFields {
  private static final HexFormat HEX = HexFormat.of();

  private BinaryFields() {}

  /** The bytes of a lower-case hex string of at most {@code maxBytes} bytes, or empty. */
  static Optional<byte[]> bytes(final String hex, final int maxBytes) {
    if (hex.isEmpty() || hex.length() > 2 * maxBytes || (hex.length() & 1) != 0) {
      return Optional.empty();
    }
    for (int i = 0; i < hex.length(); i++) {
      final char c = hex.charAt(i);
      if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) {
        return Optional.empty();
      }
    }
    return Optional.of(HEX.parseHex(hex));
  }

  static byte[] concat(final byte[] a, final byte[] b) {
    final byte[] out = new byte[a.length + b.length];
    System.arraycopy(a, 0, out, 0, a.length);
    System.arraycopy(b, 0, out, a.length, b.length);
    return out;
  }
}
