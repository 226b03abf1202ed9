package io.relaypinner.handoff.console;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.Base64;
import java.util.Collection;
import java.util.List;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;

/**
 * The console's TLS context from a directory holding {@code cert.pem} (leaf first, then chain)
 * and {@code key.pem} (PKCS#8 EC, RSA or Ed25519), the layout of {@code RELAY_TLS_CERT_DIR}.
 */
public final class ConsoleTls {
  private ConsoleTls() {}

  /**
   * @throws IllegalArgumentException when a file is missing or unreadable as such
   */
  public static SSLContext fromDirectory(final Path dir) {
    try {
      final Collection<? extends Certificate> chain = CertificateFactory.getInstance("X.509")
          .generateCertificates(new ByteArrayInputStream(Files.readAllBytes(
              dir.resolve("cert.pem"))));
      if (chain.isEmpty()) {
        throw new IllegalArgumentException(dir.resolve("cert.pem") + " holds no certificate");
      }
      final PrivateKey key = privateKey(Files.readString(dir.resolve("key.pem"),
          StandardCharsets.US_ASCII));
      final KeyStore store = KeyStore.getInstance("PKCS12");
      store.load(null, null);
      final char[] password = new char[0];
      store.setKeyEntry("console", key, password, chain.toArray(Certificate[]::new));
      final KeyManagerFactory keys =
          KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
      keys.init(store, password);
      final SSLContext context = SSLContext.getInstance("TLS");
      context.init(keys.getKeyManagers(), null, null);
      return context;
    } catch (final IOException | GeneralSecurityException e) {
      throw new IllegalArgumentException("--tls-cert-dir " + dir + ": " + e.getMessage(), e);
    }
  }

  private static PrivateKey privateKey(final String pem) throws GeneralSecurityException {
    final int start = pem.indexOf("-----BEGIN PRIVATE KEY-----");
    final int end = pem.indexOf("-----END PRIVATE KEY-----");
    if (start < 0 || end < start) {
      throw new GeneralSecurityException("key.pem must be a PKCS#8 'PRIVATE KEY' PEM");
    }
    final byte[] der = Base64.getMimeDecoder().decode(
        pem.substring(start + "-----BEGIN PRIVATE KEY-----".length(), end));
    for (final String algorithm : List.of("EC", "RSA", "Ed25519")) {
      try {
        return KeyFactory.getInstance(algorithm).generatePrivate(new PKCS8EncodedKeySpec(der));
      } catch (final GeneralSecurityException e) {
        // Try the next algorithm.
      }
    }
    throw new GeneralSecurityException("key.pem is not an EC, RSA or Ed25519 PKCS#8 key");
  }
}
