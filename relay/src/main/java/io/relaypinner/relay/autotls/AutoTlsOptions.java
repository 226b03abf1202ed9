package io.relaypinner.relay.autotls;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import javax.net.ssl.SSLContext;

/**
 * Settings of the AutoTLS client that are not environment variables: timing, and the trust for
 * the ACME server's HTTPS (tests point it at a local ACME server with its own root).
 *
 * @param engine schedule and back-off
 * @param brokerTimeout one broker request
 * @param acmeTimeout waiting for the challenge, and for the order, to complete
 * @param acmeTrust CAs for the ACME server's HTTPS; empty: the JDK's
 */
public record AutoTlsOptions(AutoTlsEngine.Config engine, Duration brokerTimeout,
    Duration acmeTimeout, Optional<SSLContext> acmeTrust) {
  /** As the JavaScript client: 60 s per broker request; 3 min per ACME wait (the spec's). */
  public static final AutoTlsOptions DEFAULT = new AutoTlsOptions(AutoTlsEngine.Config.DEFAULT,
      Duration.ofSeconds(60), Duration.ofMinutes(3), Optional.empty());

  public AutoTlsOptions {
    Objects.requireNonNull(engine, "engine");
    Objects.requireNonNull(brokerTimeout, "brokerTimeout");
    Objects.requireNonNull(acmeTimeout, "acmeTimeout");
    Objects.requireNonNull(acmeTrust, "acmeTrust");
  }
}
