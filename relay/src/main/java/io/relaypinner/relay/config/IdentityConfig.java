package io.relaypinner.relay.config;

import java.util.HexFormat;
import java.util.Locale;
import java.util.Optional;

/**
 * The relay's libp2p identity as given by the operator (CONTRACT.md: {@code RELAY_PRIV_KEY}).
 * Only the hex form is checked here; decoding the protobuf key is the libp2p module's job.
 *
 * @param privateKeyHex lower-case hex of the libp2p protobuf private key, when set; it overrides
 *     the key stored in the data directory
 */
public record IdentityConfig(Optional<String> privateKeyHex) {
  static final String VARIABLE = "RELAY_PRIV_KEY";

  public IdentityConfig {
    privateKeyHex = privateKeyHex.map(IdentityConfig::checkHex);
  }

  /** The key bytes (a fresh copy each call), when set. */
  public Optional<byte[]> privateKeyBytes() {
    return privateKeyHex.map(HexFormat.of()::parseHex);
  }

  private static String checkHex(final String hex) {
    if (hex.isEmpty() || hex.length() % 2 != 0
        || !hex.chars().allMatch(c -> c < 0x80 && Character.digit(c, 16) >= 0)) {
      throw InvalidConfigException.badSecret(
          VARIABLE, "hex (an even number of the digits 0-9 and a-f, no 0x prefix)");
    }
    return hex.toLowerCase(Locale.ROOT);
  }

  /** Never prints the key. */
  @Override
  public String toString() {
    return "IdentityConfig[privateKeyHex=" + (privateKeyHex.isPresent() ? "(set)" : "(unset)")
        + "]";
  }
}
