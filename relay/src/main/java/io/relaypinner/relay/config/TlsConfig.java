package io.relaypinner.relay.config;

import java.nio.file.Path;
import java.util.Objects;

/**
 * Certificates for WSS and HTTPS (CONTRACT.md: {@code RELAY_TLS_CERT_DIR},
 * {@code RELAY_AUTOTLS_DOMAIN}, {@code disableAutoTLS}).
 *
 * @param certDir holds {@code cert.pem} and {@code key.pem}; defaults to {@code <data dir>/tls}
 * @param autoTlsDomain the serving domain; the zone is {@code <peer id in base36>.<domain>}
 * @param autoTlsDisabled accepted for compatibility with the JavaScript relay
 */
public record TlsConfig(Path certDir, String autoTlsDomain, boolean autoTlsDisabled) {
  public static final String DEFAULT_AUTOTLS_DOMAIN = "libp2p.direct";

  public TlsConfig {
    Objects.requireNonNull(certDir, "certDir");
    autoTlsDomain = Checks.hostname(
        "RELAY_AUTOTLS_DOMAIN", Objects.requireNonNull(autoTlsDomain, "autoTlsDomain"));
  }
}
