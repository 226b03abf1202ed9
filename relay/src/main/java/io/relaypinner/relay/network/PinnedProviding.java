package io.relaypinner.relay.network;

import io.prometheus.metrics.core.metrics.CounterWithCallback;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.relaypinner.ipfs.pin.PinStore;
import io.relaypinner.libp2p.protocol.kad.KadDht;
import io.relaypinner.libp2p.protocol.kad.Reprovider;
import io.relaypinner.multiformats.Cid;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Announces the relay's pinned roots on the Kad-DHT (docs/dht.md, "Providing"): a
 * {@link Reprovider} fed by the pin store — every root pinned from now on, and those pinned
 * already (read once at start on a short-lived thread) — and told when a root's last hold is
 * released. The key is the root's multihash, so a multihash pinned under two codecs stays
 * provided until neither is pinned ({@link PinnedContent}).
 */
public final class PinnedProviding implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(PinnedProviding.class);

  private final Reprovider reprovider;
  private final PinnedContent pinned;
  private volatile boolean closed;

  private PinnedProviding(final Reprovider reprovider, final PinnedContent pinned) {
    this.reprovider = reprovider;
    this.pinned = pinned;
  }

  /** Starts providing the roots of {@code pins} on {@code dht}; metrics on {@code registry}. */
  /**
   * The keys providing keeps on a heap of {@code maxHeap} bytes: a 64th of it at ~160 bytes a
   * key (16,384 on the launcher's 160 MiB), at least 1,024, at most the engine's default 100,000.
   */
  public static int maxKeysFor(final long maxHeap) {
    return (int) Math.max(1_024, Math.min(100_000, maxHeap / 64 / 160));
  }

  public static PinnedProviding start(final KadDht dht, final PinStore pins,
      final Reprovider.Settings settings, final PrometheusRegistry registry) {
    final PinnedProviding providing = new PinnedProviding(
        dht.reprovider(Objects.requireNonNull(settings, "settings")), new PinnedContent(pins));
    pins.listen(providing.new Listener());
    providing.reprovider.start();
    register(registry, providing.reprovider);
    final Thread load = new Thread(() -> providing.load(pins), "dht-provide-load");
    load.setDaemon(true);
    load.start();
    return providing;
  }

  public Reprovider reprovider() {
    return reprovider;
  }

  private void load(final PinStore pins) {
    try {
      // A page of the datastore at a time: the roots are never all in the heap at once.
      final int[] counts = new int[2];
      pins.forEachRoot(root -> {
        if (closed) {
          return;
        }
        if (reprovider.add(root.multihash().bytes())) {
          counts[0]++;
        } else {
          counts[1]++;
        }
      });
      LOG.info("Kad-DHT providing: {} pinned roots queued{}", counts[0],
          counts[1] > 0 ? ", " + counts[1] + " refused (the key bound)" : "");
    } catch (final RuntimeException e) {
      LOG.warn("Kad-DHT providing: reading the pinned roots failed: {}", e.toString());
    }
  }

  @Override
  public void close() {
    closed = true;
    reprovider.close();
  }

  private final class Listener implements PinStore.Listener {
    @Override
    public void pinned(final Cid root) {
      reprovider.add(root.multihash().bytes());
    }

    @Override
    public void unpinned(final Cid root) {
      final byte[] key = root.multihash().bytes();
      if (!pinned.test(key)) {
        reprovider.remove(key);
      }
    }
  }

  private static void register(final PrometheusRegistry registry, final Reprovider reprovider) {
    CounterWithCallback.builder()
        .name("relay_dht_provide_total")
        .help("Pinned roots provided on the Kad-DHT (ADD_PROVIDER to their closest peers), "
            + "by result: provided, failed, refused_full, removed")
        .labelNames("result")
        .callback(callback -> {
          final Map<String, Long> counters = reprovider.counters();
          for (final String name : List.of("provided", "failed", "refused_full", "removed")) {
            callback.call(counters.get(name), name);
          }
        })
        .register(registry);
    CounterWithCallback.builder()
        .name("relay_dht_provide_work_total")
        .help("Kad-DHT providing work: region lookups, ADD_PROVIDER sends and failures, "
            + "sweeps and batches")
        .labelNames("event")
        .callback(callback -> {
          final Map<String, Long> counters = reprovider.counters();
          for (final String name : List.of("lookups", "sends", "sends_failed", "sweeps",
              "batches")) {
            callback.call(counters.get(name), name);
          }
        })
        .register(registry);
    GaugeWithCallback.builder()
        .name("relay_dht_provide_keys")
        .help("Pinned roots the relay provides on the Kad-DHT")
        .callback(callback -> callback.call(reprovider.size()))
        .register(registry);
    GaugeWithCallback.builder()
        .name("relay_dht_provide_backlog")
        .help("Pinned roots waiting to be provided (queued, or in a run not yet sent)")
        .callback(callback -> callback.call(reprovider.backlog()))
        .register(registry);
  }
}
