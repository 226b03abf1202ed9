package io.relaypinner.libp2p.security.tls;

import java.net.Socket;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import java.time.Clock;
import java.util.function.Consumer;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.X509ExtendedTrustManager;

/**
 * The trust decision of libp2p's TLS handshake for a TLS stack: a chain is trusted when
 * {@link CertificateVerifier} accepts it, for clients and servers alike (no CA, no host names).
 * Which peer it authenticated is read from the session's peer certificate after the handshake;
 * a dial's expected PeerId is checked there. Every refusal is reported to {@code refused} (counted
 * by the caller) before the handshake fails.
 */
public final class Libp2pTrustManager extends X509ExtendedTrustManager {
  private final Clock clock;
  private final Consumer<BadCertificateException> refused;

  public Libp2pTrustManager(final Clock clock, final Consumer<BadCertificateException> refused) {
    this.clock = clock;
    this.refused = refused;
  }

  private void check(final X509Certificate[] chain) throws CertificateException {
    try {
      CertificateVerifier.verify(chain, clock.instant());
    } catch (final BadCertificateException e) {
      refused.accept(e);
      throw e;
    } catch (final RuntimeException e) {
      // A certificate no rule above expected to break: still the remote's, never ours.
      final BadCertificateException bad = new BadCertificateException(
          "certificate could not be checked: " + e, e);
      refused.accept(bad);
      throw bad;
    }
  }

  @Override
  public void checkClientTrusted(final X509Certificate[] chain, final String authType)
      throws CertificateException {
    check(chain);
  }

  @Override
  public void checkServerTrusted(final X509Certificate[] chain, final String authType)
      throws CertificateException {
    check(chain);
  }

  @Override
  public void checkClientTrusted(final X509Certificate[] chain, final String authType,
      final Socket socket) throws CertificateException {
    check(chain);
  }

  @Override
  public void checkServerTrusted(final X509Certificate[] chain, final String authType,
      final Socket socket) throws CertificateException {
    check(chain);
  }

  @Override
  public void checkClientTrusted(final X509Certificate[] chain, final String authType,
      final SSLEngine engine) throws CertificateException {
    check(chain);
  }

  @Override
  public void checkServerTrusted(final X509Certificate[] chain, final String authType,
      final SSLEngine engine) throws CertificateException {
    check(chain);
  }

  @Override
  public X509Certificate[] getAcceptedIssuers() {
    return new X509Certificate[0];
  }
}
