package io.relaypinner.libp2p.host;

import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.SecureRandom;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.Date;
import javax.net.ssl.SSLException;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.X509v3CertificateBuilder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.openssl.jcajce.JcaPEMWriter;
import org.bouncycastle.operator.ContentSigner;
import org.bouncycastle.operator.OperatorCreationException;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/**
 * A throw-away certificate authority for TLS tests, made at run time: its certificate is what
 * clients trust (Java: {@link #clientContext()}; Node: {@link #writeCaPem} for
 * {@code NODE_EXTRA_CA_CERTS}), and it issues server certificates for {@code 127.0.0.1},
 * {@code ::1} and {@code localhost}.
 */
final class TestCertificates {
  private static final SecureRandom RANDOM = new SecureRandom();

  private final KeyPair caKey;
  private final X509Certificate caCert;

  private TestCertificates(final KeyPair caKey, final X509Certificate caCert) {
    this.caKey = caKey;
    this.caCert = caCert;
  }

  /** A new CA with the given common name. */
  static TestCertificates newAuthority(final String name) {
    try {
      final KeyPair key = ecKey();
      final X500Name subject = new X500Name("CN=" + name);
      final X509v3CertificateBuilder builder = builder(subject, subject, key);
      builder.addExtension(Extension.basicConstraints, true, new BasicConstraints(0));
      builder.addExtension(Extension.keyUsage, true,
          new KeyUsage(KeyUsage.keyCertSign | KeyUsage.cRLSign));
      return new TestCertificates(key, sign(builder, key));
    } catch (final GeneralSecurityException | IOException | OperatorCreationException e) {
      throw new IllegalStateException("cannot make a test CA", e);
    }
  }

  /** A server context with a fresh leaf certificate for the loopback names. */
  SslContext serverContext() {
    try {
      final KeyPair key = ecKey();
      final X509v3CertificateBuilder builder = builder(
          X500Name.getInstance(caCert.getSubjectX500Principal().getEncoded()),
          new X500Name("CN=localhost"), key);
      builder.addExtension(Extension.basicConstraints, true, new BasicConstraints(false));
      builder.addExtension(Extension.subjectAlternativeName, false, new GeneralNames(
          new GeneralName[] {
              new GeneralName(GeneralName.iPAddress, "127.0.0.1"),
              new GeneralName(GeneralName.iPAddress, "::1"),
              new GeneralName(GeneralName.dNSName, "localhost")}));
      final X509Certificate leaf = sign(builder, caKey);
      return SslContextBuilder.forServer(key.getPrivate(), leaf, caCert).build();
    } catch (final GeneralSecurityException | IOException | OperatorCreationException e) {
      throw new IllegalStateException("cannot make a test server certificate", e);
    }
  }

  /** A client context that trusts this CA only. */
  SslContext clientContext() {
    try {
      return SslContextBuilder.forClient().trustManager(caCert).build();
    } catch (final SSLException e) {
      throw new IllegalStateException(e);
    }
  }

  /** Writes the CA certificate as PEM (for {@code NODE_EXTRA_CA_CERTS}). */
  Path writeCaPem(final Path file) {
    try {
      final StringWriter text = new StringWriter();
      try (JcaPEMWriter pem = new JcaPEMWriter(text)) {
        pem.writeObject(caCert);
      }
      Files.writeString(file, text.toString(), StandardCharsets.US_ASCII);
      return file;
    } catch (final IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static KeyPair ecKey() throws GeneralSecurityException {
    final KeyPairGenerator generator = KeyPairGenerator.getInstance("EC");
    generator.initialize(new ECGenParameterSpec("secp256r1"), RANDOM);
    return generator.generateKeyPair();
  }

  private static X509v3CertificateBuilder builder(final X500Name issuer, final X500Name subject,
      final KeyPair key) {
    final Instant now = Instant.now();
    return new JcaX509v3CertificateBuilder(issuer, new BigInteger(64, RANDOM),
        Date.from(now.minus(Duration.ofHours(1))), Date.from(now.plus(Duration.ofDays(2))),
        subject, key.getPublic());
  }

  private static X509Certificate sign(final X509v3CertificateBuilder builder,
      final KeyPair signer) throws GeneralSecurityException, OperatorCreationException {
    final ContentSigner contentSigner = new JcaContentSignerBuilder("SHA256withECDSA")
        .build(signer.getPrivate());
    return new JcaX509CertificateConverter().getCertificate(builder.build(contentSigner));
  }
}
