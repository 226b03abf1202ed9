package io.relaypinner.relay.pubsub;

import io.prometheus.metrics.core.metrics.CounterWithCallback;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.relaypinner.libp2p.pubsub.PubSub;
import java.util.Map;

/**
 * Gossipsub and topic-policy metrics, read from the router's counters at scrape time:
 * {@code relay_pubsub_events_total{event}} (messages received, delivered, forwarded, published,
 * dropped by reason, control traffic), {@code relay_pubsub_topics},
 * {@code relay_pubsub_mesh_peers} (summed over topics, to keep cardinality bounded),
 * {@code relay_orbitdb_topics_followed} and {@code relay_orbitdb_topics_ignored_total}.
 */
public final class PubSubMetrics {
  private PubSubMetrics() {}

  /** Registers the metrics of {@code pubsub} and {@code topics} on {@code registry}. */
  public static void register(final PrometheusRegistry registry, final PubSub pubsub,
      final OrbitDbTopics topics) {
    CounterWithCallback.builder()
        .name("relay_pubsub_events_total")
        .help("Gossipsub events by kind: received, delivered, forwarded, published, "
            + "drop-<reason>, control messages")
        .labelNames("event")
        .callback(callback -> {
          for (final Map.Entry<String, Long> entry : pubsub.counters().entrySet()) {
            callback.call(entry.getValue(), entry.getKey());
          }
        })
        .register(registry);
    GaugeWithCallback.builder()
        .name("relay_pubsub_topics")
        .help("Gossipsub topics the relay is subscribed to")
        .callback(callback -> callback.call(pubsub.topics().size()))
        .register(registry);
    GaugeWithCallback.builder()
        .name("relay_pubsub_mesh_peers")
        .help("Mesh peers summed over all subscribed topics")
        .callback(callback -> {
          long sum = 0;
          for (final String topic : pubsub.topics()) {
            sum += pubsub.meshPeers(topic).size();
          }
          callback.call(sum);
        })
        .register(registry);
    GaugeWithCallback.builder()
        .name("relay_orbitdb_topics_followed")
        .help("OrbitDB database topics the relay follows")
        .callback(callback -> callback.call(topics.followed().size()))
        .register(registry);
    CounterWithCallback.builder()
        .name("relay_orbitdb_topics_ignored_total")
        .help("Subscriptions to /orbitdb/ topics that were not followed (not an address, "
            + "denied, admission refused or failed, limits)")
        .callback(callback -> callback.call(topics.ignoredTopics()))
        .register(registry);
    CounterWithCallback.builder()
        .name("relay_orbitdb_topic_admissions_total")
        .help("Topic admission events by kind: admitted, not-admitted, not-an-address, denied, "
            + "full, deferred, pending-full, peer-pending-full, peer-failed-full, "
            + "peer-share-full, dropped-empty, evicted-idle, persist-rejected, persist-failed")
        .labelNames("event")
        .callback(callback -> topics.counters().forEach((k, v) -> callback.call(v, k)))
        .register(registry);
    GaugeWithCallback.builder()
        .name("relay_orbitdb_topic_admissions_pending")
        .help("Topic admissions running (manifest and controller being resolved)")
        .callback(callback -> callback.call(topics.pendingAdmissions()))
        .register(registry);
    GaugeWithCallback.builder()
        .name("relay_orbitdb_topic_admissions_queued")
        .help("Subscriptions waiting in their peer's queue for an admission slot")
        .callback(callback -> callback.call(topics.deferredAdmissions()))
        .register(registry);
  }
}
