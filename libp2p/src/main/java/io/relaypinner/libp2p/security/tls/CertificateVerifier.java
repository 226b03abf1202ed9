package io.relaypinner.libp2p.security.tls;

import io.relaypinner.libp2p.crypto.KeyFormatException;
import io.relaypinner.libp2p.crypto.Keys;
import io.relaypinner.libp2p.crypto.PublicKey;
import io.relaypinner.multiformats.PeerId;
import java.io.IOException;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.Signature;
import java.security.cert.CertificateEncodingException;
import java.security.cert.X509Certificate;
import java.security.spec.X509EncodedKeySpec;
import java.time.Instant;
import java.util.Date;
import java.util.HashSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.bouncycastle.asn1.ASN1BitString;
import org.bouncycastle.asn1.ASN1ObjectIdentifier;
import org.bouncycastle.asn1.ASN1OctetString;
import org.bouncycastle.asn1.ASN1Primitive;
import org.bouncycastle.asn1.ASN1Sequence;
import org.bouncycastle.asn1.ASN1TaggedObject;
import org.bouncycastle.asn1.x509.AlgorithmIdentifier;
import org.bouncycastle.asn1.x509.Time;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.Extensions;
import org.bouncycastle.asn1.x509.SubjectPublicKeyInfo;

/**
 * Verifies a remote's certificate chain by libp2p/specs tls/tls.md, "Peer Authentication": exactly
 * one certificate, valid now, correctly self-signed, no unique ids, no critical extension but the
 * libp2p one (which may be critical), and the libp2p Public Key Extension present with a host key
 * whose signature over {@code "libp2p-tls-handshake:"} and the certificate's
 * {@code SubjectPublicKeyInfo} verifies. The result is the remote's host key, hence its PeerId.
 *
 * <p>Host keys: Ed25519 and secp256k1 (the project's {@link Keys}); RSA and ECDSA host keys are
 * refused like a malformed key. Stateless and thread-safe.
 */
public final class CertificateVerifier {
  /** Bounds what is parsed of a hostile extension: real ones are under 200 bytes. */
  static final int MAX_EXTENSION_LENGTH = 4096;

  private CertificateVerifier() {}

  /**
   * The remote host key certified by {@code chain} at {@code now}.
   *
   * @throws BadCertificateException when the chain breaks any rule above
   */
  public static PublicKey verify(final X509Certificate[] chain, final Instant now)
      throws BadCertificateException {
    if (chain == null || chain.length != 1) {
      throw new BadCertificateException("expected exactly one certificate, got "
          + (chain == null ? 0 : chain.length));
    }
    final byte[] der;
    try {
      der = chain[0].getEncoded();
    } catch (final CertificateEncodingException | RuntimeException e) {
      throw new BadCertificateException("certificate not readable: " + e.getMessage());
    }
    return verify(der, now);
  }

  /**
   * {@link #verify(X509Certificate[], Instant)} for the DER of the one certificate. Parsed as
   * ASN.1 (BouncyCastle's structures) and checked here, not by the JDK's or BouncyCastle's
   * certificate classes: rust-libp2p (and so {@code @chainsafe/libp2p-quic}) issues certificates
   * with an empty issuer and subject, which both refuse to parse.
   */
  public static PublicKey verify(final byte[] der, final Instant now)
      throws BadCertificateException {
    final ParsedCertificate certificate = ParsedCertificate.parse(der);
    final Date at = Date.from(now);
    if (at.before(certificate.notBefore()) || at.after(certificate.notAfter())) {
      throw new BadCertificateException("certificate not valid at " + now + ": "
          + certificate.notBefore().toInstant() + " to " + certificate.notAfter().toInstant());
    }
    final SubjectPublicKeyInfo spki = certificate.spki();
    checkSelfSignature(certificate, spki);
    final Extensions extensions = certificate.extensions();
    final Set<String> critical = new HashSet<>();
    if (extensions != null) {
      for (final ASN1ObjectIdentifier oid : extensions.getCriticalExtensionOIDs()) {
        critical.add(oid.getId());
      }
    }
    critical.remove(TlsIdentity.EXTENSION_OID);
    if (!critical.isEmpty()) {
      throw new BadCertificateException("certificate has unknown critical extensions " + critical);
    }
    final Extension extension = extensions == null ? null : extensions.getExtension(
        new ASN1ObjectIdentifier(TlsIdentity.EXTENSION_OID));
    if (extension == null) {
      throw new BadCertificateException("certificate lacks the libp2p public key extension");
    }
    final byte[] value = extension.getExtnValue().getOctets();
    if (value.length > MAX_EXTENSION_LENGTH) {
      throw new BadCertificateException("libp2p extension of " + value.length + " bytes");
    }
    final byte[] keyBytes;
    final byte[] signature;
    final byte[] spkiDer;
    try {
      final ASN1Sequence signedKey = ASN1Sequence.getInstance(ASN1Primitive.fromByteArray(value));
      if (signedKey.size() != 2) {
        throw new BadCertificateException("SignedKey has " + signedKey.size() + " fields");
      }
      keyBytes = ASN1OctetString.getInstance(signedKey.getObjectAt(0)).getOctets();
      signature = ASN1OctetString.getInstance(signedKey.getObjectAt(1)).getOctets();
      spkiDer = spki.getEncoded("DER");
    } catch (final IOException | IllegalArgumentException | ClassCastException e) {
      throw new BadCertificateException("malformed libp2p extension: " + e.getMessage());
    }
    final PublicKey hostKey;
    try {
      hostKey = Keys.unmarshalPublicKey(keyBytes);
    } catch (final KeyFormatException e) {
      throw new BadCertificateException("libp2p extension key refused: " + e.getMessage());
    }
    if (!hostKey.verify(TlsIdentity.concat(TlsIdentity.SIGNATURE_PREFIX, spkiDer), signature)) {
      throw new BadCertificateException("libp2p extension signature does not verify");
    }
    return hostKey;
  }

  /** Certificate keys by SPKI algorithm OID, and signature algorithms by OID (JCA names). */
  private static final Map<String, String> KEY_ALGORITHMS = Map.of(
      "1.2.840.10045.2.1", "EC", "1.3.101.112", "Ed25519", "1.2.840.113549.1.1.1", "RSA");
  private static final Map<String, String> SIGNATURE_ALGORITHMS = Map.of(
      "1.2.840.10045.4.3.2", "SHA256withECDSA", "1.2.840.10045.4.3.3", "SHA384withECDSA",
      "1.2.840.10045.4.3.4", "SHA512withECDSA", "1.3.101.112", "Ed25519",
      "1.2.840.113549.1.1.11", "SHA256withRSA", "1.2.840.113549.1.1.12", "SHA384withRSA",
      "1.2.840.113549.1.1.13", "SHA512withRSA");

  /** The certificate is signed by its own key, with an algorithm the JDK verifies. */
  private static void checkSelfSignature(final ParsedCertificate certificate,
      final SubjectPublicKeyInfo spki) throws BadCertificateException {
    final String keyAlgorithm = KEY_ALGORITHMS.get(spki.getAlgorithm().getAlgorithm().getId());
    final String signatureAlgorithm = SIGNATURE_ALGORITHMS.get(
        certificate.signatureAlgorithm().getAlgorithm().getId());
    if (keyAlgorithm == null || signatureAlgorithm == null) {
      throw new BadCertificateException("certificate key or signature algorithm not supported: "
          + spki.getAlgorithm().getAlgorithm() + ", "
          + certificate.signatureAlgorithm().getAlgorithm());
    }
    try {
      final java.security.PublicKey key = KeyFactory.getInstance(keyAlgorithm)
          .generatePublic(new X509EncodedKeySpec(spki.getEncoded("DER")));
      final Signature verifier = Signature.getInstance(signatureAlgorithm);
      verifier.initVerify(key);
      verifier.update(certificate.tbs());
      if (!verifier.verify(certificate.signature())) {
        throw new BadCertificateException("certificate self-signature invalid");
      }
    } catch (final GeneralSecurityException | IOException | RuntimeException e) {
      throw new BadCertificateException("certificate self-signature invalid: " + e.getMessage());
    }
  }

  /**
   * {@link #verify(byte[], Instant)} for a dial: the certified peer must be {@code expected} when
   * it is known (the address's {@code /p2p/<id>}).
   */
  public static PublicKey verify(final byte[] der, final Instant now,
      final Optional<PeerId> expected) throws BadCertificateException {
    return expectedPeer(verify(der, now), expected);
  }

  /**
   * {@link #verify} for a dial: the certified peer must be {@code expected} when it is known
   * (the address's {@code /p2p/<id>}).
   */
  public static PublicKey verify(final X509Certificate[] chain, final Instant now,
      final Optional<PeerId> expected) throws BadCertificateException {
    return expectedPeer(verify(chain, now), expected);
  }

  private static PublicKey expectedPeer(final PublicKey key, final Optional<PeerId> expected)
      throws BadCertificateException {
    if (expected.isPresent() && !expected.get().equals(key.peerId())) {
      throw new BadCertificateException("expected peer " + expected.get()
          + " but the certificate authenticates " + key.peerId());
    }
    return key;
  }

  /**
   * The fields of an X.509 certificate (RFC 5280 §4.1) this verifier reads, parsed from its ASN.1
   * without the checks of a certificate class (an empty issuer name is allowed here).
   */
  private record ParsedCertificate(byte[] tbs, AlgorithmIdentifier signatureAlgorithm,
      byte[] signature, Date notBefore, Date notAfter, SubjectPublicKeyInfo spki,
      Extensions extensions) {

    static ParsedCertificate parse(final byte[] der) throws BadCertificateException {
      try {
        final ASN1Sequence certificate = ASN1Sequence.getInstance(ASN1Primitive.fromByteArray(der));
        if (certificate.size() != 3) {
          throw new BadCertificateException("certificate has " + certificate.size() + " fields");
        }
        final ASN1Sequence tbs = ASN1Sequence.getInstance(certificate.getObjectAt(0));
        int field = 0;
        if (tbs.getObjectAt(field) instanceof ASN1TaggedObject version
            && version.getTagNo() == 0) {
          field++;
        }
        field += 3; // serial number, signature algorithm, issuer (may be empty)
        final ASN1Sequence validity = ASN1Sequence.getInstance(tbs.getObjectAt(field++));
        field++; // subject (may be empty)
        final SubjectPublicKeyInfo spki = SubjectPublicKeyInfo.getInstance(
            tbs.getObjectAt(field++));
        Extensions extensions = null;
        for (; field < tbs.size(); field++) {
          final ASN1TaggedObject tagged = ASN1TaggedObject.getInstance(tbs.getObjectAt(field));
          if (tagged.getTagNo() == 1 || tagged.getTagNo() == 2) {
            throw new BadCertificateException("certificate carries a deprecated unique id");
          }
          if (tagged.getTagNo() == 3) {
            extensions = Extensions.getInstance(tagged.getExplicitBaseObject());
          }
        }
        return new ParsedCertificate(tbs.getEncoded("DER"),
            AlgorithmIdentifier.getInstance(certificate.getObjectAt(1)),
            ASN1BitString.getInstance(certificate.getObjectAt(2)).getOctets(),
            Time.getInstance(validity.getObjectAt(0)).getDate(),
            Time.getInstance(validity.getObjectAt(1)).getDate(), spki, extensions);
      } catch (final IOException | RuntimeException e) {
        throw new BadCertificateException("malformed certificate: " + e.getMessage());
      }
    }
  }
}
