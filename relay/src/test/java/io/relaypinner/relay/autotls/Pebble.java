package io.relaypinner.relay.autotls;

import static org.awaitility.Awaitility.await;

import io.relaypinner.relay.testing.TestCertificates;
import io.relaypinner.testkit.DebianPackages;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/**
 * Debian's {@code pebble} ACME test server and {@code pebble-challtestsrv} (its DNS) on loopback,
 * for the AutoTLS end-to-end test. When they are missing and the test runs as root, they are
 * installed with {@code apt-get install pebble}; when that fails the test fails saying so; a
 * non-root machine without them skips.
 */
final class Pebble implements AutoCloseable {
  static final Path PEBBLE = Path.of("/usr/bin/pebble");
  static final Path CHALLTESTSRV = Path.of("/usr/bin/pebble-challtestsrv");

  private final List<Process> processes = new ArrayList<>();
  private final int acmePort;
  private final int managementPort;
  private final int challtestManagementPort;
  private final SSLContext listenerTrust;
  private final HttpClient http;

  /**
   * Starts both servers; certificates pebble issues are valid for {@code validitySeconds}.
   */
  Pebble(final Path dir, final long validitySeconds) throws Exception {
    ensureInstalled();
    acmePort = freePort();
    managementPort = freePort();
    challtestManagementPort = freePort();
    final int dnsPort = freePort();
    // Pebble's own HTTPS listener: a self-signed certificate made for the run.
    final TestCertificates.Pair listener = TestCertificates.selfSigned("EC", "localhost");
    final Path cert = dir.resolve("pebble-listener.pem");
    final Path key = dir.resolve("pebble-listener.key");
    TestCertificates.write(cert, listener.certificatePem());
    TestCertificates.write(key, listener.keyPem());
    listenerTrust = trusting(List.of(listener.certificate()));
    http = HttpClient.newBuilder().sslContext(listenerTrust)
        .connectTimeout(Duration.ofSeconds(5)).build();
    final Path config = dir.resolve("pebble-config.json");
    Files.writeString(config, "{\"pebble\": {"
        + "\"listenAddress\": \"127.0.0.1:" + acmePort + "\","
        + "\"managementListenAddress\": \"127.0.0.1:" + managementPort + "\","
        + "\"certificate\": \"" + cert + "\", \"privateKey\": \"" + key + "\","
        + "\"httpPort\": 5002, \"tlsPort\": 5001, \"ocspResponderURL\": \"\","
        + "\"externalAccountBindingRequired\": false,"
        + "\"certificateValidityPeriod\": " + validitySeconds + "}}");
    start(dir, "challtestsrv", List.of(CHALLTESTSRV.toString(),
        "-management", "127.0.0.1:" + challtestManagementPort,
        "-dns01", "127.0.0.1:" + dnsPort, "-http01", "", "-https01", "", "-tlsalpn01", "",
        "-defaultIPv6", ""));
    start(dir, "pebble", List.of(PEBBLE.toString(), "-config", config.toString(),
        "-dnsserver", "127.0.0.1:" + dnsPort));
    await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200))
        .ignoreExceptions().until(() -> get(directory()).statusCode() == 200
            && get(URI.create("http://127.0.0.1:" + challtestManagementPort + "/")) != null);
  }

  private void start(final Path dir, final String name, final List<String> command)
      throws IOException {
    final ProcessBuilder builder = new ProcessBuilder(command)
        .redirectErrorStream(true).redirectOutput(dir.resolve(name + ".log").toFile());
    // No random validation sleeps; no nonce rejections; a fresh challenge for almost every order
    // (pebble still reuses a valid authorization 1 % of the time at 0: see AutoTlsIT).
    builder.environment().put("PEBBLE_VA_NOSLEEP", "1");
    builder.environment().put("PEBBLE_WFE_NONCEREJECT", "0");
    builder.environment().put("PEBBLE_AUTHZREUSE", "0");
    processes.add(builder.start());
  }

  /** The ACME directory URL. */
  URI directory() {
    return URI.create("https://127.0.0.1:" + acmePort + "/dir");
  }

  /** Trust for pebble's HTTPS listener (what the relay's ACME client needs). */
  SSLContext listenerTrust() {
    return listenerTrust;
  }

  /** pebble-challtestsrv's management API (set-txt, clear-txt). */
  URI challtestsrv() {
    return URI.create("http://127.0.0.1:" + challtestManagementPort);
  }

  /** The root pebble generated for this run, which signs the certificates it issues. */
  String rootPem() throws Exception {
    final HttpResponse<String> response = http.send(HttpRequest.newBuilder(
        URI.create("https://127.0.0.1:" + managementPort + "/roots/0")).build(),
        HttpResponse.BodyHandlers.ofString());
    if (response.statusCode() != 200) {
      throw new IllegalStateException("pebble /roots/0 answered " + response.statusCode());
    }
    return response.body();
  }

  static X509Certificate parse(final String pem) throws GeneralSecurityException {
    return (X509Certificate) CertificateFactory.getInstance("X.509").generateCertificate(
        new ByteArrayInputStream(pem.getBytes(StandardCharsets.US_ASCII)));
  }

  static SSLContext trusting(final List<X509Certificate> roots)
      throws GeneralSecurityException, IOException {
    final KeyStore store = KeyStore.getInstance(KeyStore.getDefaultType());
    store.load(null, null);
    for (int i = 0; i < roots.size(); i++) {
      store.setCertificateEntry("root" + i, roots.get(i));
    }
    final TrustManagerFactory factory =
        TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
    factory.init(store);
    final SSLContext context = SSLContext.getInstance("TLS");
    context.init(null, factory.getTrustManagers(), null);
    return context;
  }

  private HttpResponse<String> get(final URI uri) throws Exception {
    return http.send(HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(5)).build(),
        HttpResponse.BodyHandlers.ofString());
  }

  private static int freePort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0)) {
      return socket.getLocalPort();
    }
  }

  /** Installs the Debian package when missing (see {@link DebianPackages}). */
  static void ensureInstalled() {
    DebianPackages.ensure("pebble",
        () -> Files.isExecutable(PEBBLE) && Files.isExecutable(CHALLTESTSRV),
        "the AutoTLS end-to-end test (pebble, pebble-challtestsrv)");
  }

  @Override
  public void close() {
    for (final Process process : processes) {
      process.destroy();
    }
    for (final Process process : processes) {
      try {
        if (!process.waitFor(5, TimeUnit.SECONDS)) {
          process.destroyForcibly();
        }
      } catch (final InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }
}
