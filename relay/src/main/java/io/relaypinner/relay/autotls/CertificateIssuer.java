package io.relaypinner.relay.autotls;

import io.relaypinner.multiformats.Multiaddr;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.util.List;

/** Obtains a certificate for {@code *.<zone>}: the ACME client with the broker in production. */
public interface CertificateIssuer {
  /**
   * A new certificate and its key.
   *
   * @param chain the leaf first
   * @param key the leaf's key
   */
  record Issued(List<X509Certificate> chain, PrivateKey key) {
    public Issued {
      chain = List.copyOf(chain);
    }
  }

  /**
   * Runs one order for {@code *.<zone>}; the broker dials {@code addresses} back.
   *
   * @throws AutoTlsFailure when a remote refuses or fails (with its reason and Retry-After)
   */
  Issued issue(String zone, List<Multiaddr> addresses) throws AutoTlsFailure, InterruptedException;
}
