package io.relaypinner.libp2p.security.tls;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.relaypinner.libp2p.crypto.Ed25519PrivateKey;
import io.relaypinner.libp2p.crypto.KeyType;
import io.relaypinner.libp2p.crypto.Keys;
import io.relaypinner.libp2p.crypto.PrivateKey;
import io.relaypinner.multiformats.PeerId;
import java.io.ByteArrayInputStream;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.SecureRandom;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

class CertificateVerifierTest {
  private static final Instant NOW = Instant.parse("2026-11-29T12:00:00Z");
  private static final Clock CLOCK = Clock.fixed(NOW, ZoneOffset.UTC);
  private static final SecureRandom RANDOM = new SecureRandom();

  // libp2p/specs tls/tls.md, "Test vectors" 1, 3 and 4.
  private static final String ED25519_VECTOR =
      "308201ae30820156a0030201020204499602d2300a06082a8648ce3d040302302031123010060355040a1309"
      + "6c69627032702e696f310a300806035504051301313020170d3735303130313133303030305a180f34303936"
      + "303130313133303030305a302031123010060355040a13096c69627032702e696f310a300806035504051301"
      + "313059301306072a8648ce3d020106082a8648ce3d030107034200040c901d423c831ca85e27c73c263ba132"
      + "721bb9d7a84c4f0380b2a6756fd601331c8870234dec878504c174144fa4b14b66a651691606d8173e55bd37"
      + "e381569ea37c307a3078060a2b0601040183a25a0101046a3068042408011220a77f1d92fedb59dddaea5a1c"
      + "4abd1ac2fbde7d7b879ed364501809923d7c11b90440d90d2769db992d5e6195dbb08e706b6651e024fda6cf"
      + "b8846694a435519941cac215a8207792e42849cccc6cd8136c6e4bde92a58c5e08cfd4206eb5fe0bf909300a"
      + "06082a8648ce3d0403020346003043021f50f6b6c52711a881778718238f650c9fb48943ae6ee6d28427dc60"
      + "71ae55e702203625f116a7a454db9c56986c82a25682f7248ea1cb764d322ea983ed36a31b77";
  private static final String SECP256K1_VECTOR =
      "308201ba3082015fa0030201020204499602d2300a06082a8648ce3d040302302031123010060355040a1309"
      + "6c69627032702e696f310a300806035504051301313020170d3735303130313133303030305a180f34303936"
      + "303130313133303030305a302031123010060355040a13096c69627032702e696f310a300806035504051301"
      + "313059301306072a8648ce3d020106082a8648ce3d030107034200040c901d423c831ca85e27c73c263ba132"
      + "721bb9d7a84c4f0380b2a6756fd601331c8870234dec878504c174144fa4b14b66a651691606d8173e55bd37"
      + "e381569ea38184308181307f060a2b0601040183a25a01010471306f0425080212210206dc6968726765b820"
      + "f050263ececf7f71e4955892776c0970542efd689d2382044630440220145e15a991961f0d08cd15425bb95e"
      + "c93f6ffa03c5a385eedc34ecf464c7a8ab022026b3109b8a3f40ef833169777eb2aa337cfb6282f188de0666"
      + "d1bcec2a4690dd300a06082a8648ce3d0403020349003046022100e1a217eeef9ec9204b3f774a08b7084964"
      + "6b6a1e6b8b27f93dc00ed58545d9fe022100b00dafa549d0f03547878338c7b15e7502888f6d45db387e5ae6"
      + "b5d46899cef0";
  private static final String INVALID_VECTOR =
      "308201f73082019da0030201020204499602d2300a06082a8648ce3d040302302031123010060355040a1309"
      + "6c69627032702e696f310a300806035504051301313020170d3735303130313133303030305a180f34303936"
      + "303130313133303030305a302031123010060355040a13096c69627032702e696f310a300806035504051301"
      + "313059301306072a8648ce3d020106082a8648ce3d030107034200040c901d423c831ca85e27c73c263ba132"
      + "721bb9d7a84c4f0380b2a6756fd601331c8870234dec878504c174144fa4b14b66a651691606d8173e55bd37"
      + "e381569ea381c23081bf3081bc060a2b0601040183a25a01010481ad3081aa045f0803125b3059301306072a"
      + "8648ce3d020106082a8648ce3d03010703420004bf30511f909414ebdd3242178fd290f093a551cf75c97315"
      + "5de0bb5a96fedf6cb5d52da7563e794b512f66e60c7f55ba8a3acf3dd72a801980d205e8a1ad29f204473045"
      + "022100bb6e03577b7cc7a3cd1558df0da2b117dfdcc0399bc2504ebe7de6f65cade72802206de96e2a5be9b6"
      + "202adba24ee0362e490641ac45c240db71fe955f2c5cf8df6e300a06082a8648ce3d04030203480030450221"
      + "00e847f267f43717358f850355bdcabbefb2cfbf8a3c043b203a14788a092fe8db022027c1d04a2d41fd6b57"
      + "a7e8b3989e470325de4406e52e084e34a3fd56eef0d0df";

  // Issued by @chainsafe/libp2p-quic 2.1.1 (rust-libp2p's libp2p-tls): empty issuer and subject
  // (the JDK's X509Certificate refuses them), the libp2p extension critical, 1975 to 4096.
  private static final String RUST_LIBP2P_TLS =
      "MIIBgzCCASmgAwIBAgIUYHBJ7ZjPguDuRZT09AjSFa+WhrIwCgYIKoZIzj0EAwIwADAgFw03NTAxMDEwMDAwMDBa"
      + "GA80MDk2MDEwMTAwMDAwMFowADBZMBMGByqGSM49AgEGCCqGSM49AwEHA0IABAxHWkrSNUcHkXte2mIhU7j6zh6S"
      + "SRTYzNAVqp0Gl2ZCDsC8+bNo7HF784E2/dp0SHVqi/E6PWeJ44m9apUWN9ajfzB9MHsGCisGAQQBg6JaAQEBAf8E"
      + "ajBoBCQIARIg4zLPUBrW8DGCsi4kpEfWZVUFaUlf3z1CPHtuKeQJrC8EQODERMQ1Xh0O3tlC3PxpBg95aE+ylmKL"
      + "TT+n6uEfDkYVSEcUd/tYskODVYfzlsZbwVDnAXwOgJZjHOSk5Xj3qAQwCgYIKoZIzj0EAwIDSAAwRQIhAOQR3Tqe"
      + "IfAk6r7tELcb+YlOlgznRhZA82mT3NgOXhotAiAtzMcjCspg8EzZNPbqcxT2HRepvlgLzRi3sF8CSa63Rw==";

  private static X509Certificate parse(final String hex) throws Exception {
    return (X509Certificate) CertificateFactory.getInstance("X.509")
        .generateCertificate(new ByteArrayInputStream(HexFormat.of().parseHex(hex)));
  }

  private static KeyPair p256() throws Exception {
    final KeyPairGenerator generator = KeyPairGenerator.getInstance("EC");
    generator.initialize(new ECGenParameterSpec("secp256r1"), RANDOM);
    return generator.generateKeyPair();
  }

  @Test
  void verify_shouldAcceptSpecVectors_forEd25519AndSecp256k1() throws Exception {
    assertThat(CertificateVerifier.verify(new X509Certificate[] {parse(ED25519_VECTOR)}, NOW)
        .peerId()).isEqualTo(PeerId.parse("12D3KooWM6CgA9iBFZmcYAHA6A2qvbAxqfkmrYiRQuz3XEsk4Ksv"));
    assertThat(CertificateVerifier.verify(new X509Certificate[] {parse(SECP256K1_VECTOR)}, NOW)
        .peerId()).isEqualTo(PeerId.parse("16Uiu2HAkutTMoTzDw1tCvSRtu6YoixJwS46S1ZFxW8hSx9fWHiPs"));
  }

  @Test
  void verify_shouldAccept_aRustLibp2pCertificate_withEmptyNamesAndACriticalExtension()
      throws Exception {
    final byte[] der = java.util.Base64.getDecoder().decode(RUST_LIBP2P_TLS);

    assertThat(CertificateVerifier.verify(der, NOW).peerId().toString()).startsWith("12D3KooW");
  }

  @Test
  void verify_shouldRefuse_garbageDer() {
    assertThatThrownBy(() -> CertificateVerifier.verify(new byte[] {0x30, 0x03, 1, 2, 3}, NOW))
        .isInstanceOf(BadCertificateException.class);
  }

  @Test
  void verify_shouldRefuse_specInvalidVector() throws Exception {
    assertThatThrownBy(() ->
        CertificateVerifier.verify(new X509Certificate[] {parse(INVALID_VECTOR)}, NOW))
        .isInstanceOf(BadCertificateException.class);
  }

  @ParameterizedTest
  @EnumSource(value = KeyType.class, names = {"ED25519", "SECP256K1"})
  void generate_shouldRoundTrip_toTheHostsPeerId(final KeyType type) throws Exception {
    final PrivateKey host = Keys.generate(type, RANDOM);
    final TlsIdentity identity = TlsIdentity.generate(host, CLOCK, RANDOM);

    final X509Certificate[] chain = {identity.certificate()};

    assertThat(CertificateVerifier.verify(chain, NOW).peerId())
        .isEqualTo(host.publicKey().peerId());
    assertThat(CertificateVerifier.verify(chain, NOW, Optional.of(host.publicKey().peerId())))
        .isEqualTo(host.publicKey());
    assertThat(identity.certificate().getCriticalExtensionOIDs()).isNullOrEmpty();
    assertThat(identity.certificate().getNotBefore().toInstant()).isBefore(NOW);
  }

  @Test
  void verify_shouldRefuse_whenTheDialledPeerDiffers() {
    final PrivateKey host = Ed25519PrivateKey.generate(RANDOM);
    final PeerId other = Ed25519PrivateKey.generate(RANDOM).publicKey().peerId();
    final X509Certificate[] chain = {TlsIdentity.generate(host, CLOCK, RANDOM).certificate()};

    assertThatThrownBy(() -> CertificateVerifier.verify(chain, NOW, Optional.of(other)))
        .isInstanceOf(BadCertificateException.class).hasMessageContaining("expected peer");
  }

  @Test
  void verify_shouldRefuse_whenExpiredOrNotYetValid() {
    final X509Certificate[] chain = {TlsIdentity.generate(Ed25519PrivateKey.generate(RANDOM),
        CLOCK, RANDOM).certificate()};

    assertThatThrownBy(() -> CertificateVerifier.verify(chain, NOW.minus(Duration.ofHours(2))))
        .isInstanceOf(BadCertificateException.class).hasMessageContaining("not valid");
    assertThatThrownBy(() -> CertificateVerifier.verify(chain,
        NOW.plus(TlsIdentity.VALIDITY).plus(Duration.ofDays(1))))
        .isInstanceOf(BadCertificateException.class).hasMessageContaining("not valid");
  }

  @Test
  void verify_shouldRefuse_whenTheChainIsNotOneCertificate() {
    final X509Certificate one = TlsIdentity.generate(Ed25519PrivateKey.generate(RANDOM), CLOCK,
        RANDOM).certificate();

    assertThatThrownBy(() -> CertificateVerifier.verify(new X509Certificate[0], NOW))
        .isInstanceOf(BadCertificateException.class);
    assertThatThrownBy(() -> CertificateVerifier.verify(new X509Certificate[] {one, one}, NOW))
        .isInstanceOf(BadCertificateException.class).hasMessageContaining("exactly one");
  }

  @Test
  void verify_shouldRefuse_whenTheExtensionIsMissing() throws Exception {
    final X509Certificate certificate = TlsIdentity.certificate(p256(), null, NOW, RANDOM);

    assertThatThrownBy(() -> CertificateVerifier.verify(new X509Certificate[] {certificate}, NOW))
        .isInstanceOf(BadCertificateException.class).hasMessageContaining("lacks");
  }

  @Test
  void verify_shouldRefuse_whenTheExtensionSignsAnotherCertificateKey() throws Exception {
    final PrivateKey host = Ed25519PrivateKey.generate(RANDOM);
    // A SignedKey lifted from another certificate: the host signed a different key.
    final byte[] foreign = TlsIdentity.signedKey(host, p256().getPublic().getEncoded());
    final X509Certificate certificate = TlsIdentity.certificate(p256(), foreign, NOW, RANDOM);

    assertThatThrownBy(() -> CertificateVerifier.verify(new X509Certificate[] {certificate}, NOW))
        .isInstanceOf(BadCertificateException.class).hasMessageContaining("signature");
  }

  @Test
  void verify_shouldRefuse_whenTheSignatureIsBySomeoneElse() throws Exception {
    final PrivateKey host = Ed25519PrivateKey.generate(RANDOM);
    final PrivateKey impostor = Ed25519PrivateKey.generate(RANDOM);
    final KeyPair pair = p256();
    final byte[] signed = TlsIdentity.concat(TlsIdentity.SIGNATURE_PREFIX,
        pair.getPublic().getEncoded());
    final byte[] claim = TlsIdentity.signedKey(host.publicKey().marshal(), impostor.sign(signed));
    final X509Certificate certificate = TlsIdentity.certificate(pair, claim, NOW, RANDOM);

    assertThatThrownBy(() -> CertificateVerifier.verify(new X509Certificate[] {certificate}, NOW))
        .isInstanceOf(BadCertificateException.class).hasMessageContaining("signature");
  }

  @Test
  void verify_shouldRefuse_malformedExtensions() throws Exception {
    final List<byte[]> hostile = new ArrayList<>();
    hostile.add(new byte[] {0x30, 0x00});                       // empty SEQUENCE
    hostile.add(new byte[] {0x04, 0x01, 0x00});                 // not a SEQUENCE
    hostile.add(new byte[] {0x30, (byte) 0x84, 0x7f, -1, -1, -1}); // a hostile length
    hostile.add(TlsIdentity.signedKey(new byte[] {1, 2, 3}, new byte[64])); // not a key
    hostile.add(TlsIdentity.signedKey(new byte[0], new byte[0]));
    for (final byte[] extension : hostile) {
      final X509Certificate certificate = TlsIdentity.certificate(p256(), extension, NOW, RANDOM);
      assertThatThrownBy(() ->
          CertificateVerifier.verify(new X509Certificate[] {certificate}, NOW))
          .isInstanceOf(BadCertificateException.class);
    }
  }

  @Test
  void verify_shouldAccept_whenTheLibp2pExtensionIsCritical() throws Exception {
    final PrivateKey host = Ed25519PrivateKey.generate(RANDOM);
    final KeyPair pair = p256();
    final byte[] extension = TlsIdentity.signedKey(host, pair.getPublic().getEncoded());
    final X509Certificate critical = TlsIdentity.certificate(pair, extension, true,
        NOW.minusSeconds(60), NOW.plusSeconds(60), RANDOM);

    assertThat(CertificateVerifier.verify(new X509Certificate[] {critical}, NOW))
        .isEqualTo(host.publicKey());
  }

  @Test
  void trustManager_shouldReportEveryRefusal() throws Exception {
    final List<BadCertificateException> refused = new ArrayList<>();
    final Libp2pTrustManager trust = new Libp2pTrustManager(CLOCK, refused::add);
    final X509Certificate good = TlsIdentity.generate(Ed25519PrivateKey.generate(RANDOM), CLOCK,
        RANDOM).certificate();

    trust.checkClientTrusted(new X509Certificate[] {good}, "ECDHE_ECDSA");
    assertThatThrownBy(() -> trust.checkServerTrusted(
        new X509Certificate[] {parse(INVALID_VECTOR)}, "ECDHE_ECDSA"))
        .isInstanceOf(BadCertificateException.class);

    assertThat(refused).hasSize(1);
  }
}
