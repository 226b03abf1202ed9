package io.relaypinner.cli;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.Date;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.operator.OperatorCreationException;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/**
 * A throwaway local certificate authority for tests: a CA and a leaf it signs for
 * {@code 127.0.0.1} and {@code localhost}, written as {@code cert.pem} (leaf, then CA) and
 * {@code key.pem} (PKCS#8), the layout {@code --tls-cert-dir} reads.
 */
final class TestCa {
  private TestCa() {}

  static void writeLeaf(final Path dir) {
    try {
      final KeyPairGenerator ec = KeyPairGenerator.getInstance("EC");
      final KeyPair caKeys = ec.generateKeyPair();
      final KeyPair leafKeys = ec.generateKeyPair();
      final X500Name caName = new X500Name("CN=relay-pinner test CA");
      final Instant now = Instant.now();
      final Date from = Date.from(now.minus(Duration.ofHours(1)));
      final Date to = Date.from(now.plus(Duration.ofDays(7)));
      final JcaX509v3CertificateBuilder ca = new JcaX509v3CertificateBuilder(caName,
          BigInteger.ONE, from, to, caName, caKeys.getPublic());
      ca.addExtension(Extension.basicConstraints, true, new BasicConstraints(true));
      final X509Certificate caCert = new JcaX509CertificateConverter().getCertificate(
          ca.build(new JcaContentSignerBuilder("SHA256withECDSA").build(caKeys.getPrivate())));
      final JcaX509v3CertificateBuilder leaf = new JcaX509v3CertificateBuilder(caName,
          BigInteger.TWO, from, to, new X500Name("CN=127.0.0.1"), leafKeys.getPublic());
      leaf.addExtension(Extension.subjectAlternativeName, false, new GeneralNames(
          new GeneralName[] {new GeneralName(GeneralName.dNSName, "localhost"),
              new GeneralName(GeneralName.iPAddress, "127.0.0.1")}));
      final X509Certificate leafCert = new JcaX509CertificateConverter().getCertificate(
          leaf.build(new JcaContentSignerBuilder("SHA256withECDSA").build(caKeys.getPrivate())));
      Files.createDirectories(dir);
      Files.writeString(dir.resolve("cert.pem"), pem("CERTIFICATE", leafCert.getEncoded())
          + pem("CERTIFICATE", caCert.getEncoded()), StandardCharsets.US_ASCII);
      Files.writeString(dir.resolve("key.pem"), pem("PRIVATE KEY",
          leafKeys.getPrivate().getEncoded()), StandardCharsets.US_ASCII);
    } catch (final GeneralSecurityException | OperatorCreationException e) {
      throw new IllegalStateException("cannot make the test CA", e);
    } catch (final IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static String pem(final String type, final byte[] der) {
    return "-----BEGIN " + type + "-----\n"
        + Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII)).encodeToString(der)
        + "\n-----END " + type + "-----\n";
  }
}
