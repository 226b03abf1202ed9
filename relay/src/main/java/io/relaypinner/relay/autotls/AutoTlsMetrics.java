package io.relaypinner.relay.autotls;

import io.prometheus.metrics.core.metrics.CounterWithCallback;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.model.registry.PrometheusRegistry;

/**
 * AutoTLS metrics, read from the service's snapshot at scrape time:
 * {@code relay_autotls_state{state}} (1 for the current state), {@code
 * relay_autotls_certificate_expiry_timestamp_seconds}, {@code
 * relay_autotls_last_attempt_timestamp_seconds}, {@code relay_autotls_next_attempt_timestamp_seconds},
 * {@code relay_autotls_failures_total{reason}} and {@code
 * relay_autotls_certificates_obtained_total}.
 */
public final class AutoTlsMetrics {
  private AutoTlsMetrics() {}

  public static void register(final PrometheusRegistry registry, final AutoTlsService service) {
    GaugeWithCallback.builder().name("relay_autotls_state")
        .help("AutoTLS client state (1 for the current one)").labelNames("state")
        .callback(cb -> {
          final AutoTlsEngine.State current = service.snapshot().state();
          for (final AutoTlsEngine.State s : AutoTlsEngine.State.values()) {
            cb.call(s == current ? 1 : 0, s.name().toLowerCase(java.util.Locale.ROOT));
          }
        }).register(registry);
    GaugeWithCallback.builder().name("relay_autotls_certificate_expiry_timestamp_seconds")
        .help("notAfter of the AutoTLS certificate in use (absent without one)")
        .callback(cb -> service.snapshot().notAfter()
            .ifPresent(t -> cb.call(t.getEpochSecond()))).register(registry);
    GaugeWithCallback.builder().name("relay_autotls_last_attempt_timestamp_seconds")
        .help("Start of the last AutoTLS attempt")
        .callback(cb -> service.snapshot().lastAttempt()
            .ifPresent(t -> cb.call(t.getEpochSecond()))).register(registry);
    GaugeWithCallback.builder().name("relay_autotls_next_attempt_timestamp_seconds")
        .help("When the next AutoTLS attempt (renewal or retry) is due")
        .callback(cb -> {
          final java.time.Instant next = service.snapshot().nextAttempt();
          if (!next.equals(java.time.Instant.MAX)) {
            cb.call(next.getEpochSecond());
          }
        }).register(registry);
    CounterWithCallback.builder().name("relay_autotls_failures_total")
        .help("Failed AutoTLS attempts by reason").labelNames("reason")
        .callback(cb -> {
          for (final FailureReason reason : FailureReason.values()) {
            cb.call(service.snapshot().failures().getOrDefault(reason, 0L), reason.label());
          }
        }).register(registry);
    CounterWithCallback.builder().name("relay_autotls_certificates_obtained_total")
        .help("Certificates obtained by AutoTLS since start")
        .callback(cb -> cb.call(service.snapshot().obtained())).register(registry);
  }
}
