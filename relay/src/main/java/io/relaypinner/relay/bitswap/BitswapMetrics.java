package io.relaypinner.relay.bitswap;

import io.prometheus.metrics.core.metrics.CounterWithCallback;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.model.registry.Collector;
import io.prometheus.metrics.model.registry.MetricType;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.prometheus.metrics.model.snapshots.ClassicHistogramBuckets;
import io.prometheus.metrics.model.snapshots.HistogramSnapshot;
import io.prometheus.metrics.model.snapshots.HistogramSnapshot.HistogramDataPointSnapshot;
import io.prometheus.metrics.model.snapshots.MetricSnapshot;
import io.relaypinner.ipfs.bitswap.Bitswap;
import io.relaypinner.ipfs.bitswap.BitswapStats;
import io.relaypinner.ipfs.bitswap.ServeTimes;
import java.util.Map;
import java.util.function.Supplier;
import java.util.function.ToLongFunction;

/**
 * Bitswap metrics, read from {@link Bitswap#stats()} at scrape time:
 * {@code bitswap_blocks_sent_total}, {@code bitswap_bytes_sent_total},
 * {@code bitswap_blocks_received_total}, {@code bitswap_bytes_received_total},
 * {@code bitswap_duplicate_blocks_total}, {@code bitswap_unwanted_blocks_total},
 * {@code bitswap_messages_total{direction}}, {@code bitswap_presences_sent_total{type}},
 * {@code bitswap_rejected_total{reason}}, and the gauges {@code bitswap_wantlist_size} (entries
 * of all peers' wantlists held, summed to keep cardinality bounded),
 * {@code bitswap_wantlist_peers} and {@code bitswap_client_wants}; and the histogram {@code
 * bitswap_serve_seconds} (how long peers waited for each block or HAVE we sent them, from when it
 * was ready to serve until written; {@link ServeTimes}).
 */
public final class BitswapMetrics {
  private BitswapMetrics() {}

  /** Registers the metrics of {@code bitswap} on {@code registry}. */
  public static void register(final PrometheusRegistry registry, final Bitswap bitswap) {
    counter(registry, bitswap, "bitswap_blocks_sent_total", "Blocks sent to peers",
        BitswapStats::blocksSent);
    counter(registry, bitswap, "bitswap_bytes_sent_total", "Block bytes sent to peers",
        BitswapStats::bytesSent);
    counter(registry, bitswap, "bitswap_blocks_received_total",
        "Wanted blocks received from peers and stored", BitswapStats::blocksReceived);
    counter(registry, bitswap, "bitswap_bytes_received_total",
        "Block bytes received from peers and stored", BitswapStats::bytesReceived);
    counter(registry, bitswap, "bitswap_duplicate_blocks_total",
        "Blocks received again after we had them", BitswapStats::duplicateBlocks);
    counter(registry, bitswap, "bitswap_unwanted_blocks_total",
        "Blocks received that nobody here wanted (dropped)", BitswapStats::unwantedBlocks);
    CounterWithCallback.builder()
        .name("bitswap_messages_total")
        .help("Bitswap messages by direction (received, sent)")
        .labelNames("direction")
        .callback(callback -> {
          final BitswapStats stats = bitswap.stats();
          callback.call(stats.messagesReceived(), "received");
          callback.call(stats.messagesSent(), "sent");
        })
        .register(registry);
    CounterWithCallback.builder()
        .name("bitswap_presences_sent_total")
        .help("HAVE and DONT_HAVE answers sent")
        .labelNames("type")
        .callback(callback -> {
          final BitswapStats stats = bitswap.stats();
          callback.call(stats.haveSent(), "have");
          callback.call(stats.dontHaveSent(), "dont_have");
        })
        .register(registry);
    CounterWithCallback.builder()
        .name("bitswap_rejected_total")
        .help("Bitswap messages, blocks and wants refused, by reason")
        .labelNames("reason")
        .callback(callback -> {
          for (final Map.Entry<String, Long> entry : bitswap.stats().rejected().entrySet()) {
            callback.call(entry.getValue(), entry.getKey());
          }
        })
        .register(registry);
    gauge(registry, bitswap, "bitswap_wantlist_size",
        "Entries of all peers' wantlists held by the server", BitswapStats::wantlistEntries);
    gauge(registry, bitswap, "bitswap_wantlist_peers", "Peers with a non-empty wantlist here",
        BitswapStats::wantlistPeers);
    gauge(registry, bitswap, "bitswap_client_wants", "Blocks this node is fetching now",
        BitswapStats::clientWants);
    registry.register(new ServeSeconds(() -> bitswap.stats().serveTimes()));
  }

  /** {@code bitswap_serve_seconds}, read from the engine's fixed buckets at scrape time. */
  static final class ServeSeconds implements Collector {
    private static final String NAME = "bitswap_serve_seconds";
    private final Supplier<ServeTimes.Snapshot> times;

    ServeSeconds(final Supplier<ServeTimes.Snapshot> times) {
      this.times = times;
    }

    @Override
    public MetricSnapshot collect() {
      final ServeTimes.Snapshot times = this.times.get();
      return HistogramSnapshot.builder()
          .name(NAME)
          .help("Time from a want being ready to serve (it arrived, or the block it waited for"
              + " did) until its block or HAVE was written to the peer")
          .dataPoint(HistogramDataPointSnapshot.builder()
              .classicHistogramBuckets(ClassicHistogramBuckets.of(
                  ServeTimes.Snapshot.upperBounds(), times.counts()))
              .sum(times.sumSeconds())
              .build())
          .build();
    }

    @Override
    public String getPrometheusName() {
      return NAME;
    }

    @Override
    public MetricType getMetricType() {
      return MetricType.HISTOGRAM;
    }
  }

  private static void counter(final PrometheusRegistry registry, final Bitswap bitswap,
      final String name, final String help, final ToLongFunction<BitswapStats> value) {
    CounterWithCallback.builder().name(name).help(help)
        .callback(callback -> callback.call(value.applyAsLong(bitswap.stats())))
        .register(registry);
  }

  private static void gauge(final PrometheusRegistry registry, final Bitswap bitswap,
      final String name, final String help, final ToLongFunction<BitswapStats> value) {
    GaugeWithCallback.builder().name(name).help(help)
        .callback(callback -> callback.call(value.applyAsLong(bitswap.stats())))
        .register(registry);
  }
}
