package io.relaypinner.relay.node;

import io.prometheus.metrics.core.metrics.CounterWithCallback;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.relaypinner.common.budget.Limits;
import io.relaypinner.common.budget.Resource;
import io.relaypinner.common.budget.Scope;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;

/**
 * The node budget's metrics, read at scrape time: {@code relay_resource_limit_hits_total{scope,
 * resource}} (reservations refused, by the kind of the scope that was full),
 * {@code relay_resource_used{scope,resource}} and {@code relay_resource_limit{scope,resource}}
 * of the fixed scopes (system, the transports, the memory surfaces; keyed scopes are too many
 * to list, their refusals are counted).
 */
public final class BudgetMetrics {
  private BudgetMetrics() {}

  public static void register(final PrometheusRegistry registry, final NodeBudget budget) {
    CounterWithCallback.builder()
        .name("relay_resource_limit_hits_total")
        .help("Reservations the node budget refused, by the kind of scope that was full "
            + "(system, libp2p, ip, http, http_ip, import_ip, circuit_ip, reservation_ip, "
            + "gossipsub_topics, gateway_fallback, a surface) and the resource")
        .labelNames("scope", "resource")
        .callback(callback -> {
          for (final Map.Entry<String, LongAdder> e : budget.hits().entrySet()) {
            final int cut = e.getKey().indexOf('\0');
            callback.call(e.getValue().sum(), e.getKey().substring(0, cut),
                e.getKey().substring(cut + 1));
          }
        })
        .register(registry);
    GaugeWithCallback.builder()
        .name("relay_resource_used")
        .help("What the node budget's fixed scopes hold now (connections, streams, work "
            + "slots; memory and disk in bytes)")
        .labelNames("scope", "resource")
        .callback(callback -> {
          for (final Scope s : budget.fixedScopes()) {
            for (final Resource r : Resource.values()) {
              if (s.used(r) != 0 || s.limits().max(r) != Limits.UNLIMITED) {
                callback.call(s.used(r), s.kind(), r.label());
              }
            }
          }
        })
        .register(registry);
    GaugeWithCallback.builder()
        .name("relay_resource_limit")
        .help("The node budget's limits of its fixed scopes (memory from the JVM's max heap)")
        .labelNames("scope", "resource")
        .callback(callback -> {
          for (final Scope s : budget.fixedScopes()) {
            for (final Resource r : Resource.values()) {
              if (s.limits().max(r) != Limits.UNLIMITED) {
                callback.call(s.limits().max(r), s.kind(), r.label());
              }
            }
          }
        })
        .register(registry);
  }
}
