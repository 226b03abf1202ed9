package io.relaypinner.relay.autotls;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.relaypinner.multiformats.Multiaddr;
import io.relaypinner.relay.testing.TestCertificates;
import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.KeyPair;
import java.security.cert.X509Certificate;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Date;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@link AutoTlsService} with a fake issuer: files, resume, operator certificates, failures. */
class AutoTlsServiceTest {
  private static final String ZONE = "k51qzi5uqu5dtest.libp2p.direct";
  private static final List<Multiaddr> ADDRESSES =
      List.of(Multiaddr.parse("/ip4/203.0.113.8/tcp/4001"));
  private static final AutoTlsEngine.Config FAST = new AutoTlsEngine.Config(
      Duration.ofHours(1), Duration.ofHours(2), Duration.ofHours(3), 2.0 / 3.0);
  @TempDir
  Path dir;
  private final AtomicInteger issued = new AtomicInteger();
  private final AtomicInteger installed = new AtomicInteger();
  private AutoTlsService service;

  @AfterEach
  void close() {
    if (service != null) {
      service.close();
    }
  }

  private AutoTlsService start(final CertificateIssuer issuer) {
    service = new AutoTlsService(ZONE, dir, issuer, () -> ADDRESSES, installed::incrementAndGet,
        new AutoTlsEngine(FAST, Clock.systemUTC()));
    service.start();
    return service;
  }

  private CertificateIssuer good() {
    return (zone, addresses) -> {
      issued.incrementAndGet();
      assertThat(addresses).isEqualTo(ADDRESSES);
      final KeyPair keys = CertificateFiles.newEcKeyPair();
      return new CertificateIssuer.Issued(List.of(wildcard(keys, "*." + zone)), keys.getPrivate());
    };
  }

  @Test
  void start_shouldObtainAndWriteThePair_whenTheDirectoryIsEmpty() throws Exception {
    start(good());
    await().atMost(Duration.ofSeconds(10)).until(() -> installed.get() == 1
        && service.snapshot().state() == AutoTlsEngine.State.VALID);
    assertThat(service.snapshot().state()).isEqualTo(AutoTlsEngine.State.VALID);
    assertThat(service.snapshot().obtained()).isEqualTo(1);
    assertThat(AutoTlsService.covers(AutoTlsService.readLeaf(dir.resolve("cert.pem"))
        .orElseThrow(), ZONE)).isTrue();
    assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(
        dir.resolve("key.pem")))).isEqualTo("rw-------");
    assertThat(io.relaypinner.relay.tls.CertificateStore.load(
        Files.readAllBytes(dir.resolve("cert.pem")), Files.readAllBytes(dir.resolve("key.pem")),
        Instant.now()).leaf().getSubjectX500Principal().getName()).contains(ZONE);
  }

  @Test
  void start_shouldResumeFromTheStoredCertificate_withoutANewOrder() throws Exception {
    final KeyPair keys = CertificateFiles.newEcKeyPair();
    CertificateFiles.writePair(dir, List.of(wildcard(keys, "*." + ZONE)), keys.getPrivate());
    start(good());
    await().atMost(Duration.ofSeconds(10)).until(() ->
        service.snapshot().state() == AutoTlsEngine.State.VALID);
    assertThat(issued).hasValue(0);
    assertThat(service.snapshot().obtained()).isZero();
    assertThat(service.snapshot().notAfter()).isPresent();
  }

  @Test
  void start_shouldLeaveAnOperatorsCertificateAlone() throws Exception {
    TestCertificates.selfSigned("EC", "operator.example").writeTo(dir);
    final String before = Files.readString(dir.resolve("cert.pem"));
    start(good());
    await().atMost(Duration.ofSeconds(10)).until(() ->
        service.snapshot().state() == AutoTlsEngine.State.IDLE);
    assertThat(issued).hasValue(0);
    assertThat(Files.readString(dir.resolve("cert.pem"))).isEqualTo(before);
  }

  @Test
  void failure_shouldBackOffAndWriteNothing() {
    start((zone, addresses) -> {
      issued.incrementAndGet();
      throw new AutoTlsFailure(FailureReason.BROKER_RATE_LIMITED, "429",
          Optional.of(Duration.ofHours(2)));
    });
    await().atMost(Duration.ofSeconds(10)).until(() ->
        service.snapshot().state() == AutoTlsEngine.State.BACKING_OFF);
    assertThat(issued).hasValue(1);
    assertThat(service.snapshot().failures()).containsEntry(FailureReason.BROKER_RATE_LIMITED, 1L);
    assertThat(Duration.between(Instant.now(), service.snapshot().nextAttempt()))
        .isGreaterThan(Duration.ofMinutes(119));
    assertThat(dir.resolve("cert.pem")).doesNotExist();
    assertThat(installed).hasValue(0);
  }

  /** A self-signed certificate for {@code name}, valid from an hour ago for 90 days. */
  static X509Certificate wildcard(final KeyPair keys, final String name) {
    try {
      final X500Name subject = new X500Name("CN=" + name);
      final Instant now = Instant.now();
      final JcaX509v3CertificateBuilder builder = new JcaX509v3CertificateBuilder(subject,
          BigInteger.valueOf(now.toEpochMilli()), Date.from(now.minus(Duration.ofHours(1))),
          Date.from(now.plus(Duration.ofDays(90))), subject, keys.getPublic());
      builder.addExtension(Extension.subjectAlternativeName, false,
          new GeneralNames(new GeneralName(GeneralName.dNSName, name)));
      return new JcaX509CertificateConverter().getCertificate(builder.build(
          new JcaContentSignerBuilder("SHA256withECDSA").build(keys.getPrivate())));
    } catch (final Exception e) {
      throw new IllegalStateException(e);
    }
  }
}
