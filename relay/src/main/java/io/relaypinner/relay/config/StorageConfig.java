package io.relaypinner.relay.config;

import java.nio.file.Path;
import java.util.Objects;

/**
 * Where the relay keeps its state (CONTRACT.md: {@code DATASTORE_PATH}, alias
 * {@code RELAY_DATASTORE_PATH}).
 *
 * @param dataDir identity key, blockstore, datastore and, by default, {@code tls/}
 */
public record StorageConfig(Path dataDir) {
  public StorageConfig {
    Objects.requireNonNull(dataDir, "dataDir");
  }
}
