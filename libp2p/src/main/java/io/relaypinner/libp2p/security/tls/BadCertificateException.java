package io.relaypinner.libp2p.security.tls;

import java.security.cert.CertificateException;

/**
 * A remote's certificate chain breaks libp2p/specs tls/tls.md (no libp2p extension, a wrong
 * signature, more than one certificate, expired...): the remote's fault. A
 * {@link CertificateException} so that a TLS stack's trust manager can throw it as it is.
 */
public final class BadCertificateException extends CertificateException {
  private static final long serialVersionUID = 1L;

  public BadCertificateException(final String message) {
    super(message);
  }

  public BadCertificateException(final String message, final Throwable cause) {
    super(message, cause);
  }
}
