package io.relaypinner.relay.autotls;

import io.relaypinner.libp2p.crypto.SecretFile;
import io.relaypinner.relay.tls.CertificateStore;
import java.io.IOException;
import java.io.StringWriter;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyPair;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.List;
import org.bouncycastle.openssl.jcajce.JcaPEMWriter;

/**
 * Files of AutoTLS: the PEM pair in the certificate directory (the one {@link CertificateStore}
 * watches) and the ACME account key in the data directory, each written atomically (temporary
 * file, fsync, atomic rename), private keys through {@link SecretFile} (0600, the directory
 * fsynced too).
 */
final class CertificateFiles {
  private CertificateFiles() {}

  /** Writes {@code key.pem}, then {@code cert.pem} (the store loads the pair once both match). */
  static void writePair(final Path dir, final List<X509Certificate> chain, final PrivateKey key)
      throws IOException {
    Files.createDirectories(dir);
    SecretFile.replace(dir.resolve(CertificateStore.KEY_FILE),
        pem(key).getBytes(StandardCharsets.US_ASCII));
    final StringBuilder certs = new StringBuilder();
    for (final X509Certificate certificate : chain) {
      certs.append(pem(certificate));
    }
    writePublic(dir.resolve(CertificateStore.CERT_FILE), certs.toString());
  }

  static String pem(final Object object) throws IOException {
    final StringWriter out = new StringWriter();
    try (JcaPEMWriter writer = new JcaPEMWriter(out)) {
      writer.writeObject(object instanceof PrivateKey key
          ? new org.bouncycastle.util.io.pem.PemObject("PRIVATE KEY", key.getEncoded())
          : object);
    }
    return out.toString();
  }

  /**
   * Writes a file that holds no secret (the certificate chain, 0644) atomically: temporary
   * file, fsync, atomic rename. Private keys go through {@link SecretFile}.
   */
  static void writePublic(final Path target, final String text) throws IOException {
    final Path temp = target.resolveSibling("." + target.getFileName() + ".tmp");
    Files.deleteIfExists(temp);
    try {
      Files.createFile(temp, PosixFilePermissions.asFileAttribute(
          PosixFilePermissions.fromString("rw-r--r--")));
    } catch (final UnsupportedOperationException e) {
      Files.createFile(temp);
    }
    try (FileChannel channel = FileChannel.open(temp, StandardOpenOption.WRITE)) {
      channel.write(java.nio.ByteBuffer.wrap(text.getBytes(StandardCharsets.US_ASCII)));
      channel.force(true);
    }
    try {
      Files.move(temp, target, StandardCopyOption.ATOMIC_MOVE,
          StandardCopyOption.REPLACE_EXISTING);
    } catch (final AtomicMoveNotSupportedException e) {
      Files.move(temp, target, StandardCopyOption.REPLACE_EXISTING);
    }
  }

  /** The EC account key in {@code file}, created (P-256) when missing. */
  static KeyPair loadOrCreateAccountKey(final Path file) throws IOException {
    if (Files.exists(file)) {
      try {
        final String text = Files.readString(file, StandardCharsets.US_ASCII);
        final String base64 = text.replaceAll("-----[A-Z ]+-----", "").replaceAll("\\s", "");
        final PrivateKey key = KeyFactory.getInstance("EC").generatePrivate(
            new PKCS8EncodedKeySpec(java.util.Base64.getDecoder().decode(base64)));
        return new KeyPair(publicOf(key), key);
      } catch (final GeneralSecurityException | IllegalArgumentException e) {
        throw new IOException("ACME account key " + file + " is unreadable: " + e.getMessage(), e);
      }
    }
    final KeyPair pair = newEcKeyPair();
    if (!SecretFile.createIfAbsent(file, pem(pair.getPrivate())
        .getBytes(StandardCharsets.US_ASCII))) {
      // Another process made one meanwhile: use that one.
      return loadOrCreateAccountKey(file);
    }
    return pair;
  }

  static KeyPair newEcKeyPair() {
    try {
      final java.security.KeyPairGenerator generator =
          java.security.KeyPairGenerator.getInstance("EC");
      generator.initialize(new java.security.spec.ECGenParameterSpec("secp256r1"));
      return generator.generateKeyPair();
    } catch (final GeneralSecurityException e) {
      throw new IllegalStateException("P-256 is part of every JDK", e);
    }
  }

  /** The public point of an EC private key (d * G). */
  private static java.security.PublicKey publicOf(final PrivateKey key)
      throws GeneralSecurityException {
    final java.security.interfaces.ECPrivateKey ec = (java.security.interfaces.ECPrivateKey) key;
    final org.bouncycastle.jce.spec.ECNamedCurveParameterSpec spec =
        org.bouncycastle.jce.ECNamedCurveTable.getParameterSpec("secp256r1");
    final org.bouncycastle.math.ec.ECPoint q = spec.getG().multiply(ec.getS()).normalize();
    final java.security.spec.ECPoint point = new java.security.spec.ECPoint(
        q.getAffineXCoord().toBigInteger(), q.getAffineYCoord().toBigInteger());
    return KeyFactory.getInstance("EC").generatePublic(
        new java.security.spec.ECPublicKeySpec(point, ec.getParams()));
  }
}
