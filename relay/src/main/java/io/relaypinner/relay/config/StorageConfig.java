package io.relaypinner.relay.config;

import io.relaypinner.stores.PostgresStoreConfig;
import io.relaypinner.stores.S3StoreConfig;
import java.nio.file.Path;
import java.util.Objects;
import java.util.Optional;

/**
 * Where the relay keeps its state (CONTRACT.md: {@code DATASTORE_PATH}, alias
 * {@code RELAY_DATASTORE_PATH}; {@code RELAY_BLOCKSTORE}, {@code RELAY_DATASTORE} and their
 * connection settings).
 *
 * @param dataDir identity key and, by default, {@code tls/}, the blocks ({@code blocks/}) and the
 *     datastore ({@code datastore.mv})
 * @param s3 present when {@code RELAY_BLOCKSTORE=s3}: blocks live in that bucket instead
 * @param postgres present when {@code RELAY_DATASTORE=postgres}: metadata lives there instead
 * @param limits the quota, the gateway cache budget and garbage collection's schedule
 */
public record StorageConfig(Path dataDir, Optional<S3StoreConfig> s3,
    Optional<PostgresStoreConfig> postgres, StorageLimits limits) {
  public StorageConfig {
    Objects.requireNonNull(dataDir, "dataDir");
    Objects.requireNonNull(s3, "s3");
    Objects.requireNonNull(postgres, "postgres");
    Objects.requireNonNull(limits, "limits");
  }

  /** The given stores with {@link StorageLimits#DEFAULT}. */
  public StorageConfig(final Path dataDir, final Optional<S3StoreConfig> s3,
      final Optional<PostgresStoreConfig> postgres) {
    this(dataDir, s3, postgres, StorageLimits.DEFAULT);
  }

  /** Flat files and MVStore in {@code dataDir}: the embedded default. */
  public StorageConfig(final Path dataDir) {
    this(dataDir, Optional.empty(), Optional.empty());
  }

  /** Whether this relay may share its stores with others (both stores are shared ones). */
  public boolean shared() {
    return s3.isPresent() && postgres.isPresent();
  }
}
