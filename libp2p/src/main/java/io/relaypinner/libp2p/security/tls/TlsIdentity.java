package io.relaypinner.libp2p.security.tls;

import io.relaypinner.libp2p.crypto.PrivateKey;
import java.io.IOException;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.SecureRandom;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Date;
import org.bouncycastle.asn1.ASN1EncodableVector;
import org.bouncycastle.asn1.ASN1ObjectIdentifier;
import org.bouncycastle.asn1.DEROctetString;
import org.bouncycastle.asn1.DERSequence;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.cert.X509v3CertificateBuilder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.operator.OperatorCreationException;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/**
 * A host's TLS identity for libp2p's TLS handshake (libp2p/specs tls/tls.md): a fresh ECDSA
 * P-256 key, unrelated to the host key as the spec asks, and a self-signed certificate carrying
 * the libp2p Public Key Extension: {@code SignedKey { publicKey, signature }}, the host key's
 * {@code PublicKey} protobuf and its signature over {@code "libp2p-tls-handshake:"} followed by
 * the certificate key's {@code SubjectPublicKeyInfo} DER. P-256 because every libp2p
 * implementation verifies it (go, rust and js generate the same).
 *
 * <p>One identity serves every connection of a host (the spec allows reuse); it is valid from an
 * hour before its creation (clock skew) for {@link #VALIDITY}, as go-libp2p does.
 *
 * @param privateKey the certificate's key (ECDSA P-256), for the TLS stack
 * @param certificate the self-signed certificate with the extension
 */
public record TlsIdentity(java.security.PrivateKey privateKey, X509Certificate certificate) {
  /** The libp2p Public Key Extension's OID, allocated by IANA to libp2p. */
  public static final String EXTENSION_OID = "1.3.6.1.4.1.53594.1.1";
  /** The prefix of the signed bytes (libp2p/specs tls/tls.md, "libp2p Public Key Extension"). */
  public static final byte[] SIGNATURE_PREFIX =
      "libp2p-tls-handshake:".getBytes(StandardCharsets.US_ASCII);
  /** The ALPN protocol of libp2p over TLS and QUIC. */
  public static final String ALPN = "libp2p";
  /** How long a certificate is valid: long-lived, it is regenerated with every start. */
  public static final Duration VALIDITY = Duration.ofDays(365L * 100);
  private static final Duration SKEW = Duration.ofHours(1);

  /** Generates a fresh certificate key and certificate for {@code hostKey}, valid from now. */
  public static TlsIdentity generate(final PrivateKey hostKey, final Clock clock,
      final SecureRandom random) {
    try {
      final KeyPairGenerator generator = KeyPairGenerator.getInstance("EC");
      generator.initialize(new ECGenParameterSpec("secp256r1"), random);
      final KeyPair pair = generator.generateKeyPair();
      return new TlsIdentity(pair.getPrivate(),
          certificate(pair, signedKey(hostKey, pair.getPublic().getEncoded()), clock.instant(),
              random));
    } catch (final GeneralSecurityException | IOException | OperatorCreationException e) {
      throw new IllegalStateException("cannot create the libp2p TLS certificate", e);
    }
  }

  /**
   * The DER of {@code SignedKey} for a certificate key whose {@code SubjectPublicKeyInfo} is
   * {@code spki}, signed by {@code hostKey}.
   */
  static byte[] signedKey(final PrivateKey hostKey, final byte[] spki) throws IOException {
    return signedKey(hostKey.publicKey().marshal(), hostKey.sign(concat(SIGNATURE_PREFIX, spki)));
  }

  /** The DER of {@code SignedKey { publicKey, signature }} as given (tests build wrong ones). */
  static byte[] signedKey(final byte[] publicKey, final byte[] signature) throws IOException {
    final ASN1EncodableVector fields = new ASN1EncodableVector();
    fields.add(new DEROctetString(publicKey));
    fields.add(new DEROctetString(signature));
    return new DERSequence(fields).getEncoded("DER");
  }

  /**
   * A self-signed certificate of {@code pair} with {@code extension} as the libp2p extension
   * (null: none), valid from {@code now} minus an hour for {@link #VALIDITY}.
   */
  static X509Certificate certificate(final KeyPair pair, final byte[] extension,
      final Instant now, final SecureRandom random)
      throws IOException, OperatorCreationException, GeneralSecurityException {
    return certificate(pair, extension, false, now.minus(SKEW), now.plus(VALIDITY), random);
  }

  static X509Certificate certificate(final KeyPair pair, final byte[] extension,
      final boolean critical, final Instant notBefore, final Instant notAfter,
      final SecureRandom random)
      throws IOException, OperatorCreationException, GeneralSecurityException {
    // The subject is free; a random serial keeps certificates of one host distinguishable.
    final X500Name name = new X500Name("SN=1");
    final X509v3CertificateBuilder builder = new JcaX509v3CertificateBuilder(name,
        new BigInteger(63, random), Date.from(notBefore), Date.from(notAfter), name,
        pair.getPublic());
    if (extension != null) {
      builder.addExtension(new ASN1ObjectIdentifier(EXTENSION_OID), critical, extension);
    }
    return new JcaX509CertificateConverter().getCertificate(
        builder.build(new JcaContentSignerBuilder("SHA256withECDSA").build(pair.getPrivate())));
  }

  static byte[] concat(final byte[] first, final byte[] second) {
    final byte[] out = new byte[first.length + second.length];
    System.arraycopy(first, 0, out, 0, first.length);
    System.arraycopy(second, 0, out, first.length, second.length);
    return out;
  }
}
