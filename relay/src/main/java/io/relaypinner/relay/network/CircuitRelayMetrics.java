package io.relaypinner.relay.network;

import io.prometheus.metrics.core.metrics.CounterWithCallback;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.relaypinner.libp2p.protocol.autonat.AutoNat;
import io.relaypinner.libp2p.protocol.relay.CircuitEnd;
import io.relaypinner.libp2p.protocol.relay.CircuitRelay;
import io.relaypinner.libp2p.protocol.relay.CircuitRelayEngine;
import io.relaypinner.libp2p.protocol.relay.RelayRefusal;
import io.relaypinner.libp2p.pubsub.discovery.PubsubPeerDiscovery;
import java.util.Map;

/**
 * Circuit relay v2 and pubsub discovery metrics, read from the engines at scrape time:
 * {@code relay_circuit_reservations_active} (held now), {@code relay_circuit_reservations_total{event}}
 * (made, refreshed, expired, released), {@code relay_circuit_circuits_open},
 * {@code relay_circuit_circuits_opened_total}, {@code relay_circuit_circuits_ended_total{end}},
 * {@code relay_circuit_bytes_total} (relayed, both directions),
 * {@code relay_circuit_refusals_total{reason}} and
 * {@code relay_discovery_announcements_total{event}} (published, received, invalid, self), and
 * {@code relay_autonat_requests_total{outcome}} (dial_ok, dial_error, refused_&lt;reason&gt;).
 */
public final class CircuitRelayMetrics {
  private CircuitRelayMetrics() {}

  /** Registers the metrics of {@code relay} on {@code registry}. */
  public static void register(final PrometheusRegistry registry, final CircuitRelay relay) {
    final CircuitRelayEngine engine = relay.engine();
    GaugeWithCallback.builder()
        .name("relay_circuit_reservations_active")
        .help("Circuit relay v2 reservations held now")
        .callback(callback -> callback.call(engine.reservations()))
        .register(registry);
    CounterWithCallback.builder()
        .name("relay_circuit_reservations_total")
        .help("Circuit relay v2 reservations by event: made, refreshed (in place), expired, "
            + "released (their connection closed)")
        .labelNames("event")
        .callback(callback -> {
          callback.call(engine.reservationsMade(), "made");
          callback.call(engine.reservationsRefreshed(), "refreshed");
          callback.call(engine.reservationsExpired(), "expired");
          callback.call(engine.reservationsReleased(), "released");
        })
        .register(registry);
    GaugeWithCallback.builder()
        .name("relay_circuit_circuits_open")
        .help("Relayed circuits open now")
        .callback(callback -> callback.call(engine.openCircuits()))
        .register(registry);
    CounterWithCallback.builder()
        .name("relay_circuit_circuits_opened_total")
        .help("Relayed circuits admitted")
        .callback(callback -> callback.call(engine.circuitsOpened()))
        .register(registry);
    CounterWithCallback.builder()
        .name("relay_circuit_circuits_ended_total")
        .help("Relayed circuits ended, by how: closed, reset, data_limit, duration_limit, "
            + "write_failed, not_established")
        .labelNames("end")
        .callback(callback -> {
          for (final Map.Entry<CircuitEnd, Long> e : engine.circuitsEnded().entrySet()) {
            callback.call(e.getValue(), e.getKey().label());
          }
        })
        .register(registry);
    CounterWithCallback.builder()
        .name("relay_circuit_bytes_total")
        .help("Bytes relayed through circuits, both directions")
        .callback(callback -> callback.call(engine.bytesRelayed()))
        .register(registry);
    CounterWithCallback.builder()
        .name("relay_circuit_refusals_total")
        .help("Hop requests refused and circuits that failed to open, by reason")
        .labelNames("reason")
        .callback(callback -> {
          for (final Map.Entry<RelayRefusal, Long> e : engine.refusals().entrySet()) {
            callback.call(e.getValue(), e.getKey().label());
          }
        })
        .register(registry);
  }

  /** Registers the metrics of {@code discovery} on {@code registry}. */
  public static void register(final PrometheusRegistry registry,
      final PubsubPeerDiscovery discovery) {
    CounterWithCallback.builder()
        .name("relay_discovery_announcements_total")
        .help("Pubsub peer-discovery announcements: published (ours), received, invalid, self")
        .labelNames("event")
        .callback(callback -> {
          for (final Map.Entry<String, Long> e : discovery.counters().entrySet()) {
            callback.call(e.getValue(), e.getKey());
          }
        })
        .register(registry);
  }

  /** Registers the AutoNAT server's counters on {@code registry}. */
  public static void register(final PrometheusRegistry registry, final AutoNat autoNat) {
    CounterWithCallback.builder()
        .name("relay_autonat_requests_total")
        .help("AutoNAT v1 dial-back requests by outcome: dial_ok, dial_error, refused_<reason>")
        .labelNames("outcome")
        .callback(callback -> {
          for (final Map.Entry<String, Long> e : autoNat.engine().counters().entrySet()) {
            callback.call(e.getValue(), e.getKey());
          }
        })
        .register(registry);
  }
}
