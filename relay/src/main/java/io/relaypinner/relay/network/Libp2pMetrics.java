package io.relaypinner.relay.network;

import io.prometheus.metrics.core.metrics.CounterWithCallback;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.relaypinner.libp2p.host.Direction;
import io.relaypinner.libp2p.host.Host;
import io.relaypinner.libp2p.host.PeerBanEngine;
import java.util.Locale;
import java.util.Map;

/**
 * The libp2p connection manager's metrics, read from the host at scrape time:
 * {@code libp2p_limit_hits_total{limit}} (every limit of {@code ConnectionLimits}, and the
 * connections closed for breaking the wire rules; names as {@code LimitCounters.Limit#label()}),
 * {@code libp2p_peer_faults_total{fault}} (faults of remote peers, {@code PeerBanEngine}: a peer
 * beyond its fault budget is banned, counted as {@code limit="peer_banned"}),
 * {@code libp2p_connections{direction}} (established connections) and
 * {@code libp2p_transport_connections} (transport connections open, established or still in their
 * handshake: what {@code RELAY_MAX_CONNECTIONS} counts).
 */
public final class Libp2pMetrics {
  private Libp2pMetrics() {}

  /** Registers the metrics of {@code host} on {@code registry}. */
  public static void register(final PrometheusRegistry registry, final Host host) {
    CounterWithCallback.builder()
        .name("libp2p_limit_hits_total")
        .help("Connection limits hit and connections closed for misbehaving, by limit")
        .labelNames("limit")
        .callback(callback -> {
          for (final Map.Entry<String, Long> entry : host.limitCounters().byLabel().entrySet()) {
            callback.call(entry.getValue(), entry.getKey());
          }
        })
        .register(registry);
    CounterWithCallback.builder()
        .name("libp2p_peer_faults_total")
        .help("Faults of remote peers (garbage, bounds broken) that count towards a ban, by kind")
        .labelNames("fault")
        .callback(callback -> {
          for (final Map.Entry<PeerBanEngine.Fault, Long> entry
              : host.bans().faults().entrySet()) {
            callback.call(entry.getValue(), entry.getKey().label());
          }
        })
        .register(registry);
    GaugeWithCallback.builder()
        .name("libp2p_connections")
        .help("Established libp2p connections by direction")
        .labelNames("direction")
        .callback(callback -> {
          for (final Direction direction : Direction.values()) {
            callback.call(host.connectionCount(direction),
                direction.name().toLowerCase(Locale.ROOT));
          }
        })
        .register(registry);
    GaugeWithCallback.builder()
        .name("libp2p_transport_connections")
        .help("Transport connections open, established or in their handshake")
        .callback(callback -> callback.call(host.openTransportConnections()))
        .register(registry);
  }
}
