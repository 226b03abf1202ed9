package io.relaypinner.relay.config;

import io.relaypinner.stores.PostgresStoreConfig;
import io.relaypinner.stores.S3StoreConfig;
import java.net.URI;
import java.net.URISyntaxException;
import java.util.Locale;
import java.util.Optional;

/**
 * Reads the store kinds and their connection settings (CONTRACT.md "Milestone 2 names"):
 * {@code RELAY_BLOCKSTORE} = {@code flatfs} | {@code s3} with {@code RELAY_S3_*} and the standard
 * {@code AWS_ACCESS_KEY_ID} / {@code AWS_SECRET_ACCESS_KEY}; {@code RELAY_DATASTORE} =
 * {@code mvstore} | {@code postgres} with {@code RELAY_POSTGRES_*}. Settings of a store kind not
 * chosen are ignored.
 */
final class StoreSettings {
  private StoreSettings() {}

  /** The S3 settings when {@code RELAY_BLOCKSTORE=s3}. */
  static Optional<S3StoreConfig> s3(final EnvReader in) {
    final String kind = in.get("RELAY_BLOCKSTORE").map(v -> v.text().toLowerCase(Locale.ROOT))
        .orElse("flatfs");
    if ("flatfs".equals(kind)) {
      return Optional.empty();
    }
    if (!"s3".equals(kind)) {
      throw InvalidConfigException.badValue("RELAY_BLOCKSTORE", kind, "flatfs or s3");
    }
    final Optional<URI> endpoint = in.get("RELAY_S3_ENDPOINT").map(v -> {
      try {
        return new URI(v.text());
      } catch (final URISyntaxException e) {
        throw InvalidConfigException.badValue(v.variable(), v.text(), "a URL");
      }
    });
    final String bucket = in.get("RELAY_S3_BUCKET").map(EnvReader.Value::text).orElseThrow(
        () -> new InvalidConfigException("RELAY_S3_BUCKET",
            "RELAY_S3_BUCKET: required when RELAY_BLOCKSTORE=s3"));
    final String region = in.get("RELAY_S3_REGION", "AWS_REGION").map(EnvReader.Value::text)
        .orElse("us-east-1");
    final String prefix = in.get("RELAY_S3_PREFIX").map(EnvReader.Value::text).orElse("");
    final Optional<String> keyId = in.get("AWS_ACCESS_KEY_ID").map(EnvReader.Value::text);
    final Optional<String> secret = in.get("AWS_SECRET_ACCESS_KEY").map(EnvReader.Value::text);
    try {
      return Optional.of(S3StoreConfig.of(endpoint, bucket, region, prefix, keyId, secret));
    } catch (final IllegalArgumentException e) {
      final String message = e.getMessage();
      final int colon = message.indexOf(':');
      final String variable = colon > 0 && message.startsWith("RELAY_")
          ? message.substring(0, colon) : "RELAY_BLOCKSTORE";
      throw new InvalidConfigException(variable, message);
    }
  }

  /** The PostgreSQL settings when {@code RELAY_DATASTORE=postgres}. */
  static Optional<PostgresStoreConfig> postgres(final EnvReader in) {
    final String kind = in.get("RELAY_DATASTORE").map(v -> v.text().toLowerCase(Locale.ROOT))
        .orElse("mvstore");
    if ("mvstore".equals(kind)) {
      return Optional.empty();
    }
    if (!"postgres".equals(kind)) {
      throw InvalidConfigException.badValue("RELAY_DATASTORE", kind, "mvstore or postgres");
    }
    final String url = in.get("RELAY_POSTGRES_URL").map(EnvReader.Value::text).orElseThrow(
        () -> new InvalidConfigException("RELAY_POSTGRES_URL",
            "RELAY_POSTGRES_URL: required when RELAY_DATASTORE=postgres"));
    final Optional<String> user = in.get("RELAY_POSTGRES_USER").map(EnvReader.Value::text);
    final Optional<String> password =
        in.get("RELAY_POSTGRES_PASSWORD").map(EnvReader.Value::text);
    try {
      return Optional.of(PostgresStoreConfig.of(url, user, password));
    } catch (final IllegalArgumentException e) {
      throw InvalidConfigException.badValue("RELAY_POSTGRES_URL",
          url.contains("?") ? url.substring(0, url.indexOf('?')) + "?..." : url,
          "a JDBC URL jdbc:postgresql://host:port/database");
    }
  }
}
