package io.relaypinner.libp2p.security.tls;

import io.relaypinner.libp2p.crypto.KeyFormatException;
import io.relaypinner.libp2p.crypto.Keys;
import io.relaypinner.libp2p.crypto.PublicKey;
import io.relaypinner.multiformats.PeerId;
import java.io.IOException;
import java.security.GeneralSecurityException;
import java.security.cert.CertificateExpiredException;
import java.security.cert.CertificateNotYetValidException;
import java.security.cert.X509Certificate;
import java.time.Instant;
import java.util.Date;
import java.util.HashSet;
import java.util.Optional;
import java.util.Set;
import org.bouncycastle.asn1.ASN1OctetString;
import org.bouncycastle.asn1.ASN1Primitive;
import org.bouncycastle.asn1.ASN1Sequence;

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
    final X509Certificate certificate = chain[0];
    try {
      certificate.checkValidity(Date.from(now));
    } catch (final CertificateExpiredException | CertificateNotYetValidException e) {
      throw new BadCertificateException("certificate not valid at " + now + ": " + e.getMessage());
    }
    if (certificate.getIssuerUniqueID() != null || certificate.getSubjectUniqueID() != null) {
      throw new BadCertificateException("certificate carries a deprecated unique id");
    }
    try {
      certificate.verify(certificate.getPublicKey());
    } catch (final GeneralSecurityException | RuntimeException e) {
      throw new BadCertificateException("certificate self-signature invalid: " + e.getMessage());
    }
    final Set<String> critical = new HashSet<>();
    if (certificate.getCriticalExtensionOIDs() != null) {
      critical.addAll(certificate.getCriticalExtensionOIDs());
    }
    critical.remove(TlsIdentity.EXTENSION_OID);
    if (!critical.isEmpty()) {
      throw new BadCertificateException("certificate has unknown critical extensions " + critical);
    }
    final byte[] wrapped = certificate.getExtensionValue(TlsIdentity.EXTENSION_OID);
    if (wrapped == null) {
      throw new BadCertificateException("certificate lacks the libp2p public key extension");
    }
    if (wrapped.length > MAX_EXTENSION_LENGTH) {
      throw new BadCertificateException("libp2p extension of " + wrapped.length + " bytes");
    }
    final byte[] keyBytes;
    final byte[] signature;
    try {
      // getExtensionValue wraps the extnValue in one more OCTET STRING.
      final byte[] value = ASN1OctetString.getInstance(wrapped).getOctets();
      final ASN1Sequence signedKey = ASN1Sequence.getInstance(ASN1Primitive.fromByteArray(value));
      if (signedKey.size() != 2) {
        throw new BadCertificateException("SignedKey has " + signedKey.size() + " fields");
      }
      keyBytes = ASN1OctetString.getInstance(signedKey.getObjectAt(0)).getOctets();
      signature = ASN1OctetString.getInstance(signedKey.getObjectAt(1)).getOctets();
    } catch (final IOException | IllegalArgumentException | ClassCastException e) {
      throw new BadCertificateException("malformed libp2p extension: " + e.getMessage());
    }
    final PublicKey hostKey;
    try {
      hostKey = Keys.unmarshalPublicKey(keyBytes);
    } catch (final KeyFormatException e) {
      throw new BadCertificateException("libp2p extension key refused: " + e.getMessage());
    }
    final byte[] signed = TlsIdentity.concat(TlsIdentity.SIGNATURE_PREFIX,
        certificate.getPublicKey().getEncoded());
    if (!hostKey.verify(signed, signature)) {
      throw new BadCertificateException("libp2p extension signature does not verify");
    }
    return hostKey;
  }

  /**
   * {@link #verify} for a dial: the certified peer must be {@code expected} when it is known
   * (the address's {@code /p2p/<id>}).
   */
  public static PublicKey verify(final X509Certificate[] chain, final Instant now,
      final Optional<PeerId> expected) throws BadCertificateException {
    final PublicKey key = verify(chain, now);
    if (expected.isPresent() && !expected.get().equals(key.peerId())) {
      throw new BadCertificateException("expected peer " + expected.get()
          + " but the certificate authenticates " + key.peerId());
    }
    return key;
  }
}
