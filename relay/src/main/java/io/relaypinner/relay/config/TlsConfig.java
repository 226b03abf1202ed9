package io.relaypinner.relay.config;

import java.net.URI;
import java.nio.file.Path;
import java.util.Objects;
import java.util.Optional;

/**
 * Certificates for WSS and HTTPS (CONTRACT.md: {@code RELAY_TLS_CERT_DIR},
 * {@code RELAY_AUTOTLS_DOMAIN}, {@code disableAutoTLS}, {@code STAGING},
 * {@code RELAY_AUTOTLS_ACME_DIRECTORY}, {@code RELAY_AUTOTLS_BROKER_URL},
 * {@code RELAY_AUTOTLS_FORCE}).
 *
 * @param certDir holds {@code cert.pem} and {@code key.pem}; defaults to {@code <data dir>/tls}
 * @param autoTlsDomain the serving domain; the zone is {@code <peer id in base36>.<domain>}
 * @param autoTlsDisabled {@code disableAutoTLS}: no AutoTLS client
 * @param staging {@code STAGING}: Let's Encrypt's staging directory unless
 *     {@code acmeDirectory} is set
 * @param acmeDirectory {@code RELAY_AUTOTLS_ACME_DIRECTORY}, when set
 * @param brokerUrl {@code RELAY_AUTOTLS_BROKER_URL}: the AutoTLS broker's base URL
 * @param autoTlsForced {@code RELAY_AUTOTLS_FORCE}: run AutoTLS without deployed mode
 */
public record TlsConfig(Path certDir, String autoTlsDomain, boolean autoTlsDisabled,
    boolean staging, Optional<URI> acmeDirectory, URI brokerUrl, boolean autoTlsForced) {
  public static final String DEFAULT_AUTOTLS_DOMAIN = "libp2p.direct";
  public static final URI LETS_ENCRYPT =
      URI.create("https://acme-v02.api.letsencrypt.org/directory");
  public static final URI LETS_ENCRYPT_STAGING =
      URI.create("https://acme-staging-v02.api.letsencrypt.org/directory");
  public static final URI DEFAULT_BROKER_URL = URI.create("https://registration.libp2p.direct");

  public TlsConfig {
    Objects.requireNonNull(certDir, "certDir");
    autoTlsDomain = Checks.hostname(
        "RELAY_AUTOTLS_DOMAIN", Objects.requireNonNull(autoTlsDomain, "autoTlsDomain"));
    Objects.requireNonNull(acmeDirectory, "acmeDirectory");
    acmeDirectory.ifPresent(u -> checkUrl("RELAY_AUTOTLS_ACME_DIRECTORY", u));
    checkUrl("RELAY_AUTOTLS_BROKER_URL", Objects.requireNonNull(brokerUrl, "brokerUrl"));
  }

  /** A certificate store with the defaults for everything but the directory. */
  public TlsConfig(final Path certDir, final String autoTlsDomain,
      final boolean autoTlsDisabled) {
    this(certDir, autoTlsDomain, autoTlsDisabled, false, Optional.empty(), DEFAULT_BROKER_URL,
        false);
  }

  /** The ACME directory used: the variable, else Let's Encrypt (staging with {@code STAGING}). */
  public URI effectiveAcmeDirectory() {
    return acmeDirectory.orElse(staging ? LETS_ENCRYPT_STAGING : LETS_ENCRYPT);
  }

  static URI checkUrl(final String variable, final URI uri) {
    final String scheme = uri.getScheme();
    if (scheme == null || !(scheme.equalsIgnoreCase("https") || scheme.equalsIgnoreCase("http"))
        || uri.getHost() == null) {
      throw InvalidConfigException.badValue(variable, uri.toString(),
          "an http(s) URL with a host");
    }
    return uri;
  }
}
