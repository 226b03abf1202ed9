package io.relaypinner.stores;

import java.net.URI;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * Settings of an {@link S3Blockstore} (CONTRACT.md: {@code RELAY_S3_ENDPOINT},
 * {@code RELAY_S3_BUCKET}, {@code RELAY_S3_REGION}, {@code RELAY_S3_PREFIX}; credentials from
 * {@code AWS_ACCESS_KEY_ID} / {@code AWS_SECRET_ACCESS_KEY} or the SDK's default chain).
 *
 * @param endpoint an S3-compatible service's URL (path-style addressing), empty for AWS itself
 * @param bucket the bucket, which must exist
 * @param region the signing region
 * @param prefix prepended to every key: empty, or ending with {@code /}
 * @param accessKeyId static credentials, empty to use the SDK's default provider chain
 * @param secretAccessKey goes with {@code accessKeyId}
 * @param maxConnections requests in flight at once, at most
 * @param maxAttempts attempts per request (first try plus retries with backoff)
 * @param requestTimeout one request's time limit, retries included
 */
public record S3StoreConfig(Optional<URI> endpoint, String bucket, String region, String prefix,
    Optional<String> accessKeyId, Optional<String> secretAccessKey, int maxConnections,
    int maxAttempts, Duration requestTimeout) {
  public static final int DEFAULT_MAX_CONNECTIONS = 32;
  public static final int DEFAULT_MAX_ATTEMPTS = 4;
  public static final Duration DEFAULT_REQUEST_TIMEOUT = Duration.ofSeconds(30);

  public S3StoreConfig {
    Objects.requireNonNull(endpoint, "endpoint");
    Objects.requireNonNull(accessKeyId, "accessKeyId");
    Objects.requireNonNull(secretAccessKey, "secretAccessKey");
    Objects.requireNonNull(requestTimeout, "requestTimeout");
    if (bucket == null || !bucket.matches("[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]")) {
      throw new IllegalArgumentException("RELAY_S3_BUCKET: not an S3 bucket name: " + bucket);
    }
    if (region == null || !region.matches("[a-z0-9-]{1,64}")) {
      throw new IllegalArgumentException("RELAY_S3_REGION: not a region name: " + region);
    }
    if (prefix == null || prefix.startsWith("/") || prefix.length() > 512
        || !prefix.isEmpty() && !prefix.endsWith("/")
        || prefix.chars().anyMatch(Character::isISOControl)) {
      throw new IllegalArgumentException(
          "RELAY_S3_PREFIX: expected empty or a relative path ending with '/': " + prefix);
    }
    endpoint.ifPresent(uri -> {
      if (!("http".equals(uri.getScheme()) || "https".equals(uri.getScheme()))
          || uri.getHost() == null) {
        throw new IllegalArgumentException("RELAY_S3_ENDPOINT: expected an http(s) URL: " + uri);
      }
    });
    if (accessKeyId.isPresent() != secretAccessKey.isPresent()) {
      throw new IllegalArgumentException(
          "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY must be set together");
    }
    if (maxConnections < 1 || maxConnections > 1024) {
      throw new IllegalArgumentException("maxConnections out of 1..1024: " + maxConnections);
    }
    if (maxAttempts < 1 || maxAttempts > 10) {
      throw new IllegalArgumentException("maxAttempts out of 1..10: " + maxAttempts);
    }
    if (requestTimeout.isNegative() || requestTimeout.isZero()) {
      throw new IllegalArgumentException("requestTimeout must be positive");
    }
  }

  /** A config with the default pool, retries and timeout. */
  public static S3StoreConfig of(final Optional<URI> endpoint, final String bucket,
      final String region, final String prefix, final Optional<String> accessKeyId,
      final Optional<String> secretAccessKey) {
    return new S3StoreConfig(endpoint, bucket, region, normalizePrefix(prefix), accessKeyId,
        secretAccessKey, DEFAULT_MAX_CONNECTIONS, DEFAULT_MAX_ATTEMPTS, DEFAULT_REQUEST_TIMEOUT);
  }

  /** {@code blocks} and {@code blocks/} both mean the folder {@code blocks/}; empty stays empty. */
  public static String normalizePrefix(final String prefix) {
    if (prefix == null || prefix.isEmpty()) {
      return "";
    }
    return prefix.endsWith("/") ? prefix : prefix + "/";
  }

  @Override
  public String toString() {
    return "S3StoreConfig[endpoint=" + endpoint.map(URI::toString).orElse("aws") + ", bucket="
        + bucket + ", region=" + region + ", prefix=" + prefix + ", credentials="
        + (accessKeyId.isPresent() ? "static" : "default chain") + "]";
  }
}
