package io.relaypinner.relay.config;

import java.util.List;
import java.util.regex.Pattern;

/**
 * Browser access to the HTTP routes, spec 5.1 (CONTRACT.md: {@code METRICS_CORS_ORIGIN},
 * {@code METRICS_CORS_ALLOW_HEADERS}, {@code METRICS_CORS_MAX_AGE}).
 *
 * @param allowedOrigins exact origins such as {@code https://app.example}; {@code ["*"]} allows
 *     any origin
 * @param allowHeaders the value of {@code Access-Control-Allow-Headers}, header names
 * @param maxAgeSeconds the value of {@code Access-Control-Max-Age}, in seconds
 */
public record CorsConfig(
    List<String> allowedOrigins, List<String> allowHeaders, long maxAgeSeconds) {
  public static final String ANY_ORIGIN = "*";
  public static final List<String> DEFAULT_ALLOW_HEADERS = List.of("Content-Type", "Authorization");
  public static final long DEFAULT_MAX_AGE_SECONDS = 86_400;
  /** Browsers cap the value far lower; anything above a year is a typo. */
  static final long MAX_MAX_AGE_SECONDS = 31_536_000;

  // scheme "://" host [":" port], nothing after: browsers send exactly this in Origin.
  private static final Pattern ORIGIN =
      Pattern.compile("[A-Za-z][A-Za-z0-9+.-]*://[^/?#\\s]+");
  private static final Pattern TOKEN = Pattern.compile("[!#$%&'*+.^_`|~0-9A-Za-z-]+");

  public CorsConfig {
    if (allowedOrigins.isEmpty()) {
      throw InvalidConfigException.badValue(
          "METRICS_CORS_ORIGIN", "", "an origin list ('*' or e.g. https://app.example)");
    }
    // One "*" in a list means the operator wants any origin; a mixed list has no other meaning.
    allowedOrigins = allowedOrigins.contains(ANY_ORIGIN) ? List.of(ANY_ORIGIN)
        : List.copyOf(allowedOrigins);
    for (final String origin : allowedOrigins) {
      if (!origin.equals(ANY_ORIGIN) && !ORIGIN.matcher(origin).matches()) {
        throw InvalidConfigException.badValue("METRICS_CORS_ORIGIN", origin,
            "an origin (scheme://host[:port], no path or trailing '/') or '*'");
      }
    }
    if (allowHeaders.isEmpty()) {
      throw InvalidConfigException.badValue(
          "METRICS_CORS_ALLOW_HEADERS", "", "a list of header names");
    }
    for (final String header : allowHeaders) {
      if (!TOKEN.matcher(header).matches() && !header.equals(ANY_ORIGIN)) {
        throw InvalidConfigException.badValue(
            "METRICS_CORS_ALLOW_HEADERS", header, "a header name");
      }
    }
    allowHeaders = List.copyOf(allowHeaders);
    if (maxAgeSeconds < 0 || maxAgeSeconds > MAX_MAX_AGE_SECONDS) {
      throw InvalidConfigException.badValue("METRICS_CORS_MAX_AGE", maxAgeSeconds,
          "a number of seconds (an integer in 0-" + MAX_MAX_AGE_SECONDS + ")");
    }
  }

  /** True when every origin is allowed ({@code Access-Control-Allow-Origin: *}). */
  public boolean anyOrigin() {
    return allowedOrigins.size() == 1 && allowedOrigins.get(0).equals(ANY_ORIGIN);
  }
}
