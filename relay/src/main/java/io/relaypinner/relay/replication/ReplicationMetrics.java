package io.relaypinner.relay.replication;

import io.prometheus.metrics.core.metrics.CounterWithCallback;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.util.Map;
import java.util.TreeMap;

/**
 * Replication metrics, read from the service's counters at scrape time:
 * {@code relay_orbitdb_replication_events_total{event}} (heads by source, joins, refused entries
 * by reason, heads-exchange streams and closes, opening failures by kind),
 * {@code relay_orbitdb_replicas}, {@code relay_orbitdb_log_memory{held}},
 * {@code relay_orbitdb_media_pins_in_flight} and
 * {@code relay_orbitdb_media_pins_total{result}}. Event names never carry peer-chosen text (an
 * unknown controller type is folded into its kind), so the label set stays bounded.
 */
public final class ReplicationMetrics {
  private ReplicationMetrics() {}

  /** Registers the metrics of {@code service} on {@code registry}. */
  public static void register(final PrometheusRegistry registry,
      final ReplicationService service) {
    CounterWithCallback.builder()
        .name("relay_orbitdb_replication_events_total")
        .help("OrbitDB replication events by kind: heads received (pubsub, exchange), "
            + "refused entries (log.rejected.<reason>), heads-exchange streams, open failures")
        .labelNames("event")
        .callback(callback -> {
          for (final Map.Entry<String, Long> entry : bounded(service.counters()).entrySet()) {
            callback.call(entry.getValue(), entry.getKey());
          }
        })
        .register(registry);
    GaugeWithCallback.builder()
        .name("relay_orbitdb_replicas")
        .help("Open database replicas (access-controller databases included)")
        .callback(callback -> callback.call(service.replicas().replicas().size()))
        .register(registry);
    GaugeWithCallback.builder()
        .name("relay_orbitdb_inbox_bytes")
        .help("Bytes of heads waiting in the databases' inboxes (bounded: 1 MiB per database, "
            + "16 MiB in all)")
        .callback(callback -> callback.call(service.inboxBytes()))
        .register(registry);
    final io.relaypinner.orbitdb.log.LogMemory logMemory =
        service.replicas().context().logMemory();
    GaugeWithCallback.builder()
        .name("relay_orbitdb_log_memory")
        .help("What all logs hold in memory together, by kind: incomplete entries, missing "
            + "blocks, remembered verified and rejected entries (bounded by the shared log "
            + "memory budget; half of each at most in one log)")
        .labelNames("held")
        .callback(callback -> {
          callback.call(logMemory.incomplete(), "incomplete");
          callback.call(logMemory.missing(), "missing");
          callback.call(logMemory.verifiedCached(), "verified");
          callback.call(logMemory.rejectedCached(), "rejected");
        })
        .register(registry);
    GaugeWithCallback.builder()
        .name("relay_orbitdb_media_ledger_cids")
        .help("Media CIDs the databases' ledgers remember together: named by incomplete "
            + "entries, eligible, reported (bounded: 200,000 in all; per database 10,000 each)")
        .callback(callback -> callback.call(service.mediaLedgerCids()))
        .register(registry);
    GaugeWithCallback.builder()
        .name("relay_orbitdb_sessions")
        .help("Databases with a replication session (followed, and their controllers' databases)")
        .callback(callback -> callback.call(service.sessionCount()))
        .register(registry);
    GaugeWithCallback.builder()
        .name("relay_orbitdb_entries_waiting_for_media")
        .help("Verified entries whose pin waits for the media they link (bounded: 10,000)")
        .callback(callback -> callback.call(service.entriesWaitingForMedia()))
        .register(registry);
    GaugeWithCallback.builder()
        .name("relay_orbitdb_media_pins_in_flight")
        .help("Media pins queued or running")
        .callback(callback -> callback.call(service.pinQueue().inFlight()))
        .register(registry);
    CounterWithCallback.builder()
        .name("relay_orbitdb_media_pins_total")
        .help("Media pins finished, by result (pinned, failed)")
        .labelNames("result")
        .callback(callback -> {
          callback.call(service.pinQueue().pinnedCount(), "pinned");
          callback.call(service.pinQueue().failedCount(), "failed");
        })
        .register(registry);
  }

  /** Folds {@code replicas.open-failed.<kind>.<type>} into {@code replicas.open-failed.<kind>}. */
  static Map<String, Long> bounded(final Map<String, Long> counters) {
    final Map<String, Long> out = new TreeMap<>();
    for (final Map.Entry<String, Long> entry : counters.entrySet()) {
      String key = entry.getKey();
      final String prefix = "replicas.open-failed.unsupported-";
      if (key.startsWith(prefix)) {
        final int dot = key.indexOf('.', prefix.length());
        if (dot > 0) {
          key = key.substring(0, dot);
        }
      }
      out.merge(key, entry.getValue(), Long::sum);
    }
    return out;
  }
}
