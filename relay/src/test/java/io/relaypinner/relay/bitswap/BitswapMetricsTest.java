package io.relaypinner.relay.bitswap;

import static org.assertj.core.api.Assertions.assertThat;

import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.relaypinner.ipfs.bitswap.ServeTimes;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class BitswapMetricsTest {
  @Test
  void serveSeconds_shouldBeAClassicHistogram_withCumulativeBuckets() throws Exception {
    final long[] counts = new long[ServeTimes.Snapshot.upperBounds().length];
    counts[0] = 3;  // <= 1 ms
    counts[4] = 2;  // <= 25 ms
    counts[counts.length - 1] = 1;  // over 10 s
    final PrometheusRegistry registry = new PrometheusRegistry();
    registry.register(new BitswapMetrics.ServeSeconds(() -> new ServeTimes.Snapshot(counts, 12.5)));

    final ByteArrayOutputStream out = new ByteArrayOutputStream();
    PrometheusTextFormatWriter.create().write(out, registry.scrape());
    final String text = out.toString(StandardCharsets.UTF_8);

    assertThat(text).contains("# TYPE bitswap_serve_seconds histogram")
        .contains("bitswap_serve_seconds_bucket{le=\"0.001\"} 3")
        .contains("bitswap_serve_seconds_bucket{le=\"0.01\"} 3")
        .contains("bitswap_serve_seconds_bucket{le=\"0.025\"} 5")
        .contains("bitswap_serve_seconds_bucket{le=\"10.0\"} 5")
        .contains("bitswap_serve_seconds_bucket{le=\"+Inf\"} 6")
        .contains("bitswap_serve_seconds_count 6")
        .contains("bitswap_serve_seconds_sum 12.5");
  }
}
