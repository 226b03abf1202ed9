package io.relaypinner.relay.gateway;

import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.Gauge;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.relaypinner.relay.http.ErrorCodes;
import io.relaypinner.relay.http.ErrorMapping;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The content gateway's metrics (spec 4.6), on the node's registry:
 * {@code relay_ipfs_gateway_requests_total{status}}, {@code relay_ipfs_gateway_bytes_total}
 * (content bytes handed to connections), {@code relay_ipfs_gateway_limited_total{limit}} (requests
 * a bound refused: {@code car_blocks}, {@code car_bytes}, {@code fallback_total}) and
 * {@code relay_ipfs_car_plan_held_bytes_max} (the most heap one CAR plan held, see
 * {@link CarPlanner#peakHeldBytes()}).
 */
public final class GatewayMetrics {
  /** The label of a request refused by the node-wide fallback total ({@link FallbackTotal}). */
  public static final String LIMIT_FALLBACK_TOTAL = "fallback_total";
  /** A CAR plan the node budget's gateway memory had no room for (503 {@code car_busy}). */
  public static final String LIMIT_CAR_MEMORY = "car_memory";

  private final Counter requests;
  private final Counter bytes;
  private final Counter limited;
  private final Gauge planHeld;
  private final AtomicLong planHeldMax = new AtomicLong();

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
    this.limited = Counter.builder()
        .name("relay_ipfs_gateway_limited_total")
        .help("/ipfs/ requests refused by a bound: car_blocks, car_bytes (CAR limits), "
            + "car_memory (the node budget's gateway memory), fallback_total (all network "
            + "fallbacks' bytes in flight)")
        .labelNames("limit")
        .register(registry);
    this.planHeld = Gauge.builder()
        .name("relay_ipfs_car_plan_held_bytes_max")
        .help("The most heap bytes one CAR plan held at once since the start (blocks read and "
            + "not yet dropped, plus an estimate per CID planned)")
        .register(registry);
  }

  void request(final int status) {
    requests.labelValues(Integer.toString(status)).inc();
  }

  void bytes(final long count) {
    bytes.inc(count);
  }

  /** A request refused by the bound {@code limit}. */
  public void limited(final String limit) {
    limited.labelValues(limit).inc();
  }

  /** An error answer of a content route: the ones a bound gave are counted as limited. */
  void answered(final ErrorMapping.Answer answer) {
    if (ErrorCodes.FALLBACK_BUSY.equals(answer.code())) {
      limited(LIMIT_FALLBACK_TOTAL);
    }
  }

  /** What one CAR plan held at most (the gauge keeps the largest). */
  void planHeld(final long heldBytes) {
    final long max = planHeldMax.accumulateAndGet(heldBytes, Math::max);
    planHeld.set(max);
  }
}
