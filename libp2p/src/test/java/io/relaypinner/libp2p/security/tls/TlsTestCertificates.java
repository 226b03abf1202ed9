package io.relaypinner.libp2p.security.tls;

import io.relaypinner.libp2p.crypto.PrivateKey;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.SecureRandom;
import java.security.spec.ECGenParameterSpec;
import java.time.Instant;

/** Hostile libp2p TLS identities for tests of other packages (QUIC handshakes). */
public final class TlsTestCertificates {
  private TlsTestCertificates() {}

  /**
   * A certificate whose libp2p extension names {@code claimed}'s key but whose signature is by
   * {@code signer}: a peer pretending to be {@code claimed}.
   */
  public static TlsIdentity impersonating(final PrivateKey claimed, final PrivateKey signer,
      final Instant now) throws Exception {
    final SecureRandom random = new SecureRandom();
    final KeyPairGenerator generator = KeyPairGenerator.getInstance("EC");
    generator.initialize(new ECGenParameterSpec("secp256r1"), random);
    final KeyPair pair = generator.generateKeyPair();
    final byte[] signature = signer.sign(TlsIdentity.concat(TlsIdentity.SIGNATURE_PREFIX,
        pair.getPublic().getEncoded()));
    final byte[] extension = TlsIdentity.signedKey(claimed.publicKey().marshal(), signature);
    return new TlsIdentity(pair.getPrivate(),
        TlsIdentity.certificate(pair, extension, now, random));
  }
}
