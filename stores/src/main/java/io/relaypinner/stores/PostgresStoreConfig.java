package io.relaypinner.stores;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * Settings of a {@link PostgresDatastore} (CONTRACT.md: {@code RELAY_POSTGRES_URL},
 * {@code RELAY_POSTGRES_USER}, {@code RELAY_POSTGRES_PASSWORD}).
 *
 * @param jdbcUrl {@code jdbc:postgresql://host:port/database[?options]}
 * @param user the role, empty to take it from the URL
 * @param password its password, empty for none (or one in the URL)
 * @param maxConnections the pool's size
 * @param connectTimeout how long a call waits for a connection before it fails as unavailable
 */
public record PostgresStoreConfig(String jdbcUrl, Optional<String> user,
    Optional<String> password, int maxConnections, Duration connectTimeout) {
  public static final int DEFAULT_MAX_CONNECTIONS = 8;
  public static final Duration DEFAULT_CONNECT_TIMEOUT = Duration.ofSeconds(5);

  public PostgresStoreConfig {
    Objects.requireNonNull(user, "user");
    Objects.requireNonNull(password, "password");
    Objects.requireNonNull(connectTimeout, "connectTimeout");
    if (jdbcUrl == null || !jdbcUrl.startsWith("jdbc:postgresql://") || jdbcUrl.length() > 2048
        || jdbcUrl.chars().anyMatch(c -> Character.isISOControl(c) || c == ' ')) {
      throw new IllegalArgumentException(
          "RELAY_POSTGRES_URL: expected jdbc:postgresql://host:port/database, got " + jdbcUrl);
    }
    if (maxConnections < 2 || maxConnections > 256) {
      throw new IllegalArgumentException("maxConnections out of 2..256: " + maxConnections);
    }
    if (connectTimeout.toMillis() < 250) {
      throw new IllegalArgumentException("connectTimeout under 250 ms: " + connectTimeout);
    }
  }

  /** A config with the default pool size and timeout. */
  public static PostgresStoreConfig of(final String jdbcUrl, final Optional<String> user,
      final Optional<String> password) {
    return new PostgresStoreConfig(jdbcUrl, user, password, DEFAULT_MAX_CONNECTIONS,
        DEFAULT_CONNECT_TIMEOUT);
  }

  /** The URL without its query (which may carry a password), for messages. */
  public String safeUrl() {
    final int query = jdbcUrl.indexOf('?');
    return query < 0 ? jdbcUrl : jdbcUrl.substring(0, query);
  }

  @Override
  public String toString() {
    return "PostgresStoreConfig[url=" + safeUrl() + ", user=" + user.orElse("(from url)") + "]";
  }
}
