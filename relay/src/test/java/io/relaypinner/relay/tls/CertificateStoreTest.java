package io.relaypinner.relay.tls;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.relaypinner.relay.testing.TestCertificates;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Loading, replacing and rejecting certificate pairs. */
class CertificateStoreTest {
  @TempDir
  Path dir;
  private CertificateStore store;

  @AfterEach
  void tearDown() {
    if (store != null) {
      store.close();
    }
  }

  private CertificateStore store(final Duration poll) {
    store = new CertificateStore(dir, poll, Clock.systemUTC());
    return store;
  }

  @ParameterizedTest
  @ValueSource(strings = {"EC", "RSA", "Ed25519"})
  void checkNow_shouldLoadPair_whenKeyIsPkcs8(final String algorithm) {
    final TestCertificates.Pair pair = TestCertificates.selfSigned(algorithm, "relay.test");
    pair.writeTo(dir);
    final CertificateStore certificates = store(Duration.ofHours(1));

    assertThat(certificates.checkNow()).isTrue();

    assertThat(certificates.current()).isPresent();
    assertThat(certificates.certificate().orElseThrow().leaf()).isEqualTo(pair.certificate());
    assertThat(certificates.current().orElseThrow().isServer()).isTrue();
    assertThat(certificates.checkNow()).isFalse();
  }

  @Test
  void checkNow_shouldKeepPreviousPair_whenNewPairIsInvalid() throws Exception {
    final TestCertificates.Pair first = TestCertificates.selfSigned("EC", "first.test");
    first.writeTo(dir);
    final CertificateStore certificates = store(Duration.ofHours(1));
    certificates.checkNow();
    final List<CertificateStore.LoadedCertificate> changes = new CopyOnWriteArrayList<>();
    certificates.onChange(changes::add);

    // A new certificate whose key has not been written yet: the pair does not match.
    final TestCertificates.Pair second = TestCertificates.selfSigned("EC", "second.test");
    TestCertificates.write(dir.resolve(CertificateStore.CERT_FILE), second.certificatePem());
    assertThat(certificates.checkNow()).isFalse();
    // Half a key file, then random bytes.
    TestCertificates.write(dir.resolve(CertificateStore.KEY_FILE),
        second.keyPem().substring(0, 60));
    assertThat(certificates.checkNow()).isFalse();
    Files.write(dir.resolve(CertificateStore.KEY_FILE), new byte[] {1, 2, 3, (byte) 0xff});
    assertThat(certificates.checkNow()).isFalse();
    Files.delete(dir.resolve(CertificateStore.KEY_FILE));
    assertThat(certificates.checkNow()).isFalse();

    assertThat(certificates.certificate().orElseThrow().leaf()).isEqualTo(first.certificate());
    assertThat(changes).hasSize(1);

    TestCertificates.write(dir.resolve(CertificateStore.KEY_FILE), second.keyPem());
    assertThat(certificates.checkNow()).isTrue();
    assertThat(certificates.certificate().orElseThrow().leaf()).isEqualTo(second.certificate());
    assertThat(changes).hasSize(2);
  }

  @Test
  void start_shouldPickUpCertificate_whenItAppearsLater() {
    final CertificateStore certificates = store(Duration.ofHours(1));
    final List<CertificateStore.LoadedCertificate> changes = new CopyOnWriteArrayList<>();
    certificates.onChange(changes::add);
    certificates.start();
    assertThat(certificates.current()).isEmpty();

    final TestCertificates.Pair pair = TestCertificates.selfSigned("EC", "late.test");
    pair.writeTo(dir);

    // Through the watch service; the hourly poll cannot be what finds it.
    await().atMost(Duration.ofSeconds(20)).until(() -> !changes.isEmpty());
    assertThat(certificates.current()).isPresent();
    assertThat(changes).extracting(CertificateStore.LoadedCertificate::leaf)
        .containsExactly(pair.certificate());
  }

  @Test
  void start_shouldPickUpCertificate_whenOnlyThePollSeesIt() throws Exception {
    final CertificateStore certificates = store(Duration.ofMillis(100));
    certificates.start();
    final TestCertificates.Pair pair = TestCertificates.selfSigned("EC", "polled.test");
    pair.writeTo(dir);

    await().atMost(Duration.ofSeconds(20)).until(() -> certificates.certificate()
        .map(c -> c.leaf().equals(pair.certificate())).orElse(false));
  }
}
