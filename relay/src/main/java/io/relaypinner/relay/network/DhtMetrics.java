package io.relaypinner.relay.network;

import io.prometheus.metrics.core.metrics.CounterWithCallback;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.relaypinner.libp2p.protocol.kad.KadDht;
import java.util.Map;

/**
 * The Kad-DHT's metrics, read from {@link KadDht#counters()} at scrape time (docs/dht.md):
 * <ul>
 *   <li>{@code relay_dht_server_requests_total{type}}: requests answered, by message type
 *       ({@code find_node}, {@code get_providers}, {@code add_provider}, {@code ping}, ...);
 *   <li>{@code relay_dht_server_refused_total{reason}}: requests refused (rates, malformed,
 *       bad key, value records, provider not the sender, ...): each closed its stream;
 *   <li>{@code relay_dht_provider_offers_total{result}}: what became of provider records
 *       offered to the store (stored, refreshed, refused by a bound);
 *   <li>{@code relay_dht_client_total{event}}: our lookups, requests and provides (and their
 *       failures and timeouts);
 *   <li>{@code relay_dht_routing_table_total{event}}: peers added, evicted and dropped;
 *   <li>gauges {@code relay_dht_routing_table_peers}, {@code relay_dht_provider_records},
 *       {@code relay_dht_provider_keys}, and {@code relay_dht_server_mode} (1 = server).
 * </ul>
 */
public final class DhtMetrics {
  private DhtMetrics() {}

  /** Registers the metrics of {@code dht} on {@code registry}. */
  public static void register(final PrometheusRegistry registry, final KadDht dht) {
    counter(registry, dht, "relay_dht_server_requests_total",
        "Kad-DHT requests answered (server mode), by message type", "type", "server_request_");
    counter(registry, dht, "relay_dht_server_refused_total",
        "Kad-DHT requests refused (server mode; the stream is closed), by reason", "reason",
        "server_refused_");
    counter(registry, dht, "relay_dht_provider_offers_total",
        "Provider records offered to the Kad-DHT store, by result", "result", "providers_");
    counter(registry, dht, "relay_dht_client_total",
        "Kad-DHT lookups, requests and provides of the relay, and their failures, by event",
        "event", "client_");
    counter(registry, dht, "relay_dht_routing_table_total",
        "Kad-DHT routing table changes, by event", "event", "table_");
    GaugeWithCallback.builder()
        .name("relay_dht_routing_table_peers")
        .help("Peers in the Kad-DHT routing table")
        .callback(callback -> callback.call(dht.table().size()))
        .register(registry);
    GaugeWithCallback.builder()
        .name("relay_dht_provider_records")
        .help("Provider records other nodes stored on the relay (server mode)")
        .callback(callback -> callback.call(dht.providers().size()))
        .register(registry);
    GaugeWithCallback.builder()
        .name("relay_dht_provider_keys")
        .help("Keys with provider records stored on the relay (server mode)")
        .callback(callback -> callback.call(dht.providers().keys()))
        .register(registry);
    GaugeWithCallback.builder()
        .name("relay_dht_server_mode")
        .help("1 when the Kad-DHT runs in server mode, 0 in client mode")
        .callback(callback -> callback.call(dht.mode() == KadDht.Mode.SERVER ? 1 : 0))
        .register(registry);
  }

  private static void counter(final PrometheusRegistry registry, final KadDht dht,
      final String name, final String help, final String label, final String prefix) {
    CounterWithCallback.builder()
        .name(name)
        .help(help)
        .labelNames(label)
        .callback(callback -> {
          for (final Map.Entry<String, Long> entry : dht.counters().entrySet()) {
            if (entry.getKey().startsWith(prefix)) {
              callback.call(entry.getValue(), entry.getKey().substring(prefix.length()));
            }
          }
        })
        .register(registry);
  }
}
