package io.relaypinner.relay.node;

import io.relaypinner.relay.api.NodeStatus;
import io.relaypinner.relay.config.StorageConfig;
import io.relaypinner.relay.identity.NodeIdentity;
import io.relaypinner.stores.StoreAvailability;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * What {@code /health} reports, read live from the running subsystems (zero and no stores while
 * they are not there).
 */
public final class LiveStatus implements NodeStatus {
  /**
   * Encoded once: the identity never changes, base58 costs microseconds, and the health route's
   * cache compares this string by identity (a new string per call made every {@code /health}
   * answer serialize its record again).
   */
  private final String peerId;
  private final String zone;
  private final Supplier<NetworkSubsystem> network;
  private final Supplier<StorageSubsystem> storage;
  /** The four possible answers, made once (compared by identity by the health route). */
  private final Map<String, String>[] storeStates;

  /**
   * @param network the running network subsystem, or null
   * @param storage the running storage subsystem, or null
   */
  public LiveStatus(final NodeIdentity identity, final StorageConfig stores,
      final Supplier<NetworkSubsystem> network, final Supplier<StorageSubsystem> storage) {
    this.peerId = identity.peerId().toBase58();
    this.zone = identity.autoTlsServingZone();
    this.network = Objects.requireNonNull(network, "network");
    this.storage = Objects.requireNonNull(storage, "storage");
    this.storeStates = storeStates(stores);
  }

  @Override
  public String peerId() {
    return peerId;
  }

  @Override
  public String autoTlsServingZone() {
    return zone;
  }

  @Override
  public int activeConnections() {
    final NetworkSubsystem current = network.get();
    return current == null ? 0 : current.host().connectionCount();
  }

  @Override
  public int multiaddrCount() {
    final NetworkSubsystem current = network.get();
    return current == null ? 0 : current.advertisedAddresses().size();
  }

  @Override
  public Map<String, String> stores() {
    final StorageSubsystem current = storage.get();
    if (current == null) {
      return null;
    }
    final StoreAvailability s3 = current.blockstoreAvailability().orElse(null);
    final StoreAvailability postgres = current.datastoreAvailability().orElse(null);
    if (s3 == null && postgres == null) {
      return null;
    }
    return storeStates[(s3 == null || s3.up() ? 0 : 1)
        | (postgres == null || postgres.up() ? 0 : 2)];
  }

  @SuppressWarnings("unchecked")
  private static Map<String, String>[] storeStates(final StorageConfig stores) {
    final boolean s3 = stores.s3().isPresent();
    final boolean postgres = stores.postgres().isPresent();
    final Map<String, String>[] states = new Map[4];
    for (int i = 0; i < 4; i++) {
      final Map<String, String> state = new LinkedHashMap<>();
      if (s3) {
        state.put("s3", (i & 1) == 0 ? "up" : "down");
      }
      if (postgres) {
        state.put("postgres", (i & 2) == 0 ? "up" : "down");
      }
      states[i] = Collections.unmodifiableMap(state);
    }
    return states;
  }
}
