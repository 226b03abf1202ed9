package io.relaypinner.relay.config;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * The plain HTTP listener, the "metrics server" of spec 1 (CONTRACT.md: {@code METRICS_HOST},
 * {@code METRICS_PORT}, {@code METRICS_DISABLED}, {@code RELAY_API_TOKEN}), plus its limits, which
 * are not environment variables (see docs/http-api.md "Limits and timeouts").
 *
 * @param host listen host
 * @param port listen port, 0 = ephemeral
 * @param disabled no HTTP listener at all
 * @param apiToken when set, {@code POST /pinning/sync} needs {@code Authorization: Bearer <token>}
 * @param idleTimeout a connection with no request in progress and no traffic for this long is
 *     closed
 * @param maxInitialLineLength longest request line (method, URI, version) in bytes; longer: 431
 * @param maxHeaderSize largest header block in bytes; larger: 431
 * @param maxBodySize largest request body in bytes; larger: 413
 */
public record HttpConfig(
    String host,
    int port,
    boolean disabled,
    Optional<String> apiToken,
    Duration idleTimeout,
    int maxInitialLineLength,
    int maxHeaderSize,
    int maxBodySize) {

  public static final Duration DEFAULT_IDLE_TIMEOUT = Duration.ofSeconds(60);
  public static final int DEFAULT_MAX_INITIAL_LINE_LENGTH = 8 * 1024;
  public static final int DEFAULT_MAX_HEADER_SIZE = 16 * 1024;
  public static final int DEFAULT_MAX_BODY_SIZE = 64 * 1024;

  public HttpConfig {
    Checks.host("METRICS_HOST", host);
    Checks.port("METRICS_PORT", port);
    apiToken.ifPresent(HttpConfig::checkToken);
    Objects.requireNonNull(idleTimeout, "idleTimeout");
    if (idleTimeout.isNegative() || idleTimeout.isZero()) {
      throw new IllegalArgumentException("idleTimeout must be positive: " + idleTimeout);
    }
    positive("maxInitialLineLength", maxInitialLineLength);
    positive("maxHeaderSize", maxHeaderSize);
    positive("maxBodySize", maxBodySize);
  }

  private static void positive(final String name, final int value) {
    if (value <= 0) {
      throw new IllegalArgumentException(name + " must be positive: " + value);
    }
  }

  private static void checkToken(final String token) {
    // RFC 6750 b64token characters are a subset of these; anything else cannot travel in a header.
    if (!token.chars().allMatch(c -> c > 0x20 && c < 0x7f)) {
      throw InvalidConfigException.badSecret(
          "RELAY_API_TOKEN", "a token (visible ASCII characters, no spaces)");
    }
  }

  /** Never prints the API token. */
  @Override
  public String toString() {
    return "HttpConfig[host=" + host + ", port=" + port + ", disabled=" + disabled
        + ", apiToken=" + (apiToken.isPresent() ? "(set)" : "(unset)")
        + ", idleTimeout=" + idleTimeout + ", maxInitialLineLength=" + maxInitialLineLength
        + ", maxHeaderSize=" + maxHeaderSize + ", maxBodySize=" + maxBodySize + "]";
  }
}
