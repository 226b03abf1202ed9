package io.relaypinner.relay.gateway;

import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.model.registry.PrometheusRegistry;

/**
 * The content gateway's metrics (spec 4.6), on the node's registry:
 * {@code relay_ipfs_gateway_requests_total{status}} and {@code relay_ipfs_gateway_bytes_total}
 * (content bytes handed to connections).
 */
public final class GatewayMetrics {
  private final Counter requests;
  private final Counter bytes;

  public GatewayMetrics(final PrometheusRegistry registry) {
    this.requests = Counter.builder()
        .name("relay_ipfs_gateway_requests_total")
        .help("GET/HEAD /ipfs/ requests by response status")
        .labelNames("status")
        .register(registry);
    this.bytes = Counter.builder()
        .name("relay_ipfs_gateway_bytes_total")
        .help("Content bytes sent by the /ipfs/ gateway")
        .register(registry);
  }

  void request(final int status) {
    requests.labelValues(Integer.toString(status)).inc();
  }

  void bytes(final long count) {
    bytes.inc(count);
  }
}
