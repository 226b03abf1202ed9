package io.relaypinner.relay.config;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The IPFS Pinning Service API on {@code /pins} (CONTRACT.md "Milestone 2 names"): its bearer
 * tokens, from {@code RELAY_PINNING_SERVICE_TOKENS} (comma-separated) and
 * {@code RELAY_PINNING_SERVICE_TOKENS_FILE} (one token per line; blank lines and {@code #}
 * comments skipped), together. No token: the API answers 401 to everything.
 *
 * @param tokens the accepted tokens, each visible ASCII without spaces
 */
public record PinningServiceConfig(List<String> tokens) {
  /** Most tokens accepted (the file is read whole at start-up). */
  static final int MAX_TOKENS = 10_000;

  public PinningServiceConfig {
    tokens = List.copyOf(tokens);
    if (tokens.size() > MAX_TOKENS) {
      throw new InvalidConfigException("RELAY_PINNING_SERVICE_TOKENS",
          "RELAY_PINNING_SERVICE_TOKENS: more than " + MAX_TOKENS + " tokens");
    }
    for (final String token : tokens) {
      if (token.isEmpty() || !token.chars().allMatch(c -> c > 0x20 && c < 0x7f)) {
        throw InvalidConfigException.badSecret("RELAY_PINNING_SERVICE_TOKENS",
            "a list of tokens (visible ASCII characters, no spaces)");
      }
    }
  }

  /** Whether the API is enabled (some token is set). */
  public boolean enabled() {
    return !tokens.isEmpty();
  }

  /** The tokens of a token file. */
  static List<String> readFile(final Path file) {
    final List<String> out = new ArrayList<>();
    try {
      for (final String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
        final String trimmed = line.trim();
        if (!trimmed.isEmpty() && !trimmed.startsWith("#")) {
          out.add(trimmed);
        }
      }
    } catch (final IOException e) {
      throw new InvalidConfigException("RELAY_PINNING_SERVICE_TOKENS_FILE",
          "RELAY_PINNING_SERVICE_TOKENS_FILE: cannot read " + file + " (" + e.getMessage() + ")");
    }
    return out;
  }

  @Override
  public String toString() {
    return "PinningServiceConfig[tokens=" + tokens.size() + " (not shown)]";
  }
}
