package io.relaypinner.relay.identity;

import io.prometheus.metrics.core.metrics.CounterWithCallback;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.relaypinner.orbitdb.identity.IdentityVerifiers;
import java.util.Map;

/**
 * {@code orbitdb_identity_verifications_total{type, result}}: writer identities checked, by
 * identity type ({@code publickey}, {@code did}, {@code webauthn}, {@code webauthn-varsig},
 * {@code worker-ed25519}, or {@code unknown}) and result ({@code valid} or the refusal reason,
 * e.g. {@code invalid_signature}, {@code rp_not_configured}, {@code origin_not_allowed}). Read
 * from {@link IdentityVerifiers#stats()} at scrape time; both labels come from fixed sets.
 */
public final class IdentityVerificationMetrics {
  private IdentityVerificationMetrics() {}

  /** Registers the counter of {@code verifiers} on {@code registry}. */
  public static void register(final PrometheusRegistry registry,
      final IdentityVerifiers verifiers) {
    CounterWithCallback.builder()
        .name("orbitdb_identity_verifications_total")
        .help("Writer identities verified, by identity type and result (valid or the reason)")
        .labelNames("type", "result")
        .callback(callback -> {
          for (final Map.Entry<String, Long> e : verifiers.stats().entrySet()) {
            final int slash = e.getKey().indexOf('/');
            callback.call(e.getValue(), e.getKey().substring(0, slash),
                e.getKey().substring(slash + 1));
          }
        })
        .register(registry);
  }
}
