package io.relaypinner.relay.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.Date;
import java.util.concurrent.atomic.AtomicLong;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.cert.X509v3CertificateBuilder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.operator.OperatorCreationException;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/** Self-signed certificates for TLS tests, made with BouncyCastle, and their PEM files. */
public final class TestCertificates {
  private static final AtomicLong SERIAL = new AtomicLong(System.nanoTime());

  /** A key pair and its self-signed certificate for {@code localhost} and {@code 127.0.0.1}. */
  public record Pair(KeyPair keys, X509Certificate certificate) {
    public String certificatePem() {
      return pem("CERTIFICATE", encoded(certificate));
    }

    public String keyPem() {
      return pkcs8Pem(keys.getPrivate());
    }

    /** Writes {@code cert.pem} and {@code key.pem} into {@code dir}, each by an atomic move. */
    public void writeTo(final Path dir) {
      write(dir.resolve("cert.pem"), certificatePem());
      write(dir.resolve("key.pem"), keyPem());
    }
  }

  private TestCertificates() {}

  /** {@code algorithm}: {@code EC}, {@code RSA} or {@code Ed25519}. */
  public static Pair selfSigned(final String algorithm, final String commonName) {
    try {
      final KeyPairGenerator generator = KeyPairGenerator.getInstance(algorithm);
      if (algorithm.equals("RSA")) {
        generator.initialize(2048);
      }
      final KeyPair keys = generator.generateKeyPair();
      final X500Name name = new X500Name("CN=" + commonName);
      final Instant now = Instant.now();
      final X509v3CertificateBuilder builder = new JcaX509v3CertificateBuilder(name,
          BigInteger.valueOf(SERIAL.incrementAndGet()), Date.from(now.minus(Duration.ofHours(1))),
          Date.from(now.plus(Duration.ofDays(30))), name, keys.getPublic());
      builder.addExtension(Extension.subjectAlternativeName, false, new GeneralNames(
          new GeneralName[] {new GeneralName(GeneralName.dNSName, "localhost"),
              new GeneralName(GeneralName.iPAddress,
                  InetAddress.getLoopbackAddress().getHostAddress())}));
      final String signature = switch (algorithm) {
        case "EC" -> "SHA256withECDSA";
        case "RSA" -> "SHA256withRSA";
        default -> "Ed25519";
      };
      final X509Certificate certificate = new JcaX509CertificateConverter().getCertificate(
          builder.build(new JcaContentSignerBuilder(signature).build(keys.getPrivate())));
      return new Pair(keys, certificate);
    } catch (final GeneralSecurityException | IOException | OperatorCreationException e) {
      throw new IllegalStateException("cannot make a test certificate", e);
    }
  }

  public static String pkcs8Pem(final PrivateKey key) {
    return pem("PRIVATE KEY", key.getEncoded());
  }

  private static byte[] encoded(final X509Certificate certificate) {
    try {
      return certificate.getEncoded();
    } catch (final GeneralSecurityException e) {
      throw new IllegalStateException(e);
    }
  }

  private static String pem(final String type, final byte[] der) {
    return "-----BEGIN " + type + "-----\n"
        + Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII)).encodeToString(der)
        + "\n-----END " + type + "-----\n";
  }

  /** Writes through a temporary file and an atomic move, as certificate tools do. */
  public static void write(final Path file, final String text) {
    try {
      final Path temp = Files.createTempFile(file.getParent(), ".tmp-", ".pem");
      Files.writeString(temp, text, StandardCharsets.US_ASCII);
      Files.move(temp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    } catch (final IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
