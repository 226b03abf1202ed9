package io.relaypinner.relay.autotls;

import io.netty.util.concurrent.DefaultThreadFactory;
import io.relaypinner.multiformats.Multiaddr;
import io.relaypinner.relay.tls.CertificateStore;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.CertificateParsingException;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The AutoTLS client of one relay: keeps a certificate for {@code *.<zone>} in the certificate
 * directory that {@link CertificateStore} watches (so WSS and HTTPS pick it up), obtaining it at
 * start when none is there and renewing it per {@link AutoTlsEngine}. Runs on its own thread and
 * never blocks start-up; failures back off and are logged once per streak.
 *
 * <p>At start the directory is read: a certificate for {@code *.<zone>} (ours, maybe from before a
 * restart) is kept until its renewal time; a certificate for anything else is the operator's, and
 * AutoTLS then stays idle rather than replace it.
 */
public final class AutoTlsService implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(AutoTlsService.class);
  /** Re-check at least this often (a clock change, or addresses that appear later). */
  private static final Duration MAX_SLEEP = Duration.ofHours(1);

  private final String zone;
  private final Path certDir;
  private final CertificateIssuer issuer;
  private final Supplier<List<Multiaddr>> addresses;
  private final Runnable onInstalled;
  private final AutoTlsEngine engine;
  private final ScheduledExecutorService executor;
  private volatile AutoTlsEngine.Snapshot snapshot;

  /**
   * @param zone {@code <peer id base36>.<domain>}
   * @param addresses the addresses the broker should dial back (public ones in deployed mode)
   * @param onInstalled called after a new pair was written (e.g. the store's {@code checkNow})
   */
  public AutoTlsService(final String zone, final Path certDir, final CertificateIssuer issuer,
      final Supplier<List<Multiaddr>> addresses, final Runnable onInstalled,
      final AutoTlsEngine engine) {
    this.zone = zone.toLowerCase(Locale.ROOT);
    this.certDir = Objects.requireNonNull(certDir, "certDir");
    this.issuer = Objects.requireNonNull(issuer, "issuer");
    this.addresses = Objects.requireNonNull(addresses, "addresses");
    this.onInstalled = Objects.requireNonNull(onInstalled, "onInstalled");
    this.engine = Objects.requireNonNull(engine, "engine");
    this.snapshot = engine.snapshot();
    this.executor = Executors.newSingleThreadScheduledExecutor(
        new DefaultThreadFactory("relay-autotls", true));
  }

  public String zone() {
    return zone;
  }

  /** What the client knows now. */
  public AutoTlsEngine.Snapshot snapshot() {
    return snapshot;
  }

  /** Reads the directory and schedules the first attempt; returns at once. */
  public void start() {
    LOG.info("AutoTLS: keeping a certificate for *.{} in {}", zone, certDir);
    submit(this::resume, Duration.ZERO);
  }

  private void resume() {
    try {
      final Optional<X509Certificate> existing = readLeaf(certDir.resolve(
          CertificateStore.CERT_FILE));
      if (existing.isPresent()) {
        final X509Certificate leaf = existing.get();
        if (covers(leaf, zone)) {
          engine.onCertificate(leaf.getNotBefore().toInstant(), leaf.getNotAfter().toInstant(),
              false);
          LOG.info("AutoTLS: certificate for *.{} found (expires {}), renewal at {}", zone,
              leaf.getNotAfter().toInstant(), engine.renewalTime());
        } else {
          engine.onForeignCertificate();
          LOG.info("AutoTLS: {} holds a certificate for {} (the operator's); AutoTLS leaves it"
              + " alone", certDir, leaf.getSubjectX500Principal().getName());
        }
      }
    } catch (final IOException | CertificateException e) {
      LOG.warn("AutoTLS: cannot read the certificate in {} ({}); obtaining a new one", certDir,
          e.getMessage());
    }
    snapshot = engine.snapshot();
    loop();
  }

  private void loop() {
    if (engine.due()) {
      attempt();
    }
    snapshot = engine.snapshot();
    final Duration wait = engine.untilNextAttempt();
    submit(this::loop, wait.compareTo(MAX_SLEEP) > 0 ? MAX_SLEEP : wait);
  }

  private void attempt() {
    engine.onAttempt();
    snapshot = engine.snapshot();
    try {
      final List<Multiaddr> dialBack = addresses.get();
      if (dialBack.isEmpty()) {
        throw new AutoTlsFailure(FailureReason.NO_ADDRESS,
            "no address the broker can dial back yet");
      }
      final CertificateIssuer.Issued issued = issuer.issue(zone, dialBack);
      try {
        CertificateFiles.writePair(certDir, issued.chain(), issued.key());
      } catch (final IOException e) {
        throw new AutoTlsFailure(FailureReason.STORAGE, "cannot write the certificate to "
            + certDir + ": " + e.getMessage());
      }
      onInstalled.run();
      final X509Certificate leaf = issued.chain().get(0);
      engine.onCertificate(leaf.getNotBefore().toInstant(), leaf.getNotAfter().toInstant(), true);
      snapshot = engine.snapshot();
      LOG.info("AutoTLS: certificate for *.{} obtained, valid until {}; renewal at {}", zone,
          leaf.getNotAfter().toInstant(), engine.renewalTime());
    } catch (final AutoTlsFailure failure) {
      final boolean news = engine.onFailure(failure.reason(), failure.retryAfter());
      snapshot = engine.snapshot();
      final String line = "AutoTLS: {} ({}); next attempt in {} ms, serving {}";
      final Object[] args = {failure.getMessage(), failure.reason().label(),
          engine.untilNextAttempt().toMillis(), engine.snapshot().notAfter().isPresent()
              ? "the current certificate until it is replaced" : "without an AutoTLS certificate"};
      if (news) {
        LOG.warn(line, args);
      } else {
        LOG.debug(line, args);
      }
    } catch (final InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (final RuntimeException e) {
      engine.onFailure(FailureReason.ACME_ERROR, Optional.empty());
      LOG.error("AutoTLS attempt failed unexpectedly", e);
    }
  }

  private void submit(final Runnable task, final Duration delay) {
    try {
      executor.schedule(task, delay.toMillis(), TimeUnit.MILLISECONDS);
    } catch (final RejectedExecutionException e) {
      // closed
    }
  }

  /** The first certificate of a PEM file, if the file exists. */
  static Optional<X509Certificate> readLeaf(final Path file)
      throws IOException, CertificateException {
    try (InputStream in = Files.newInputStream(file)) {
      return Optional.of((X509Certificate) CertificateFactory.getInstance("X.509")
          .generateCertificate(in));
    } catch (final NoSuchFileException e) {
      return Optional.empty();
    }
  }

  /** Whether the certificate names {@code *.<zone>} among its DNS subject alternative names. */
  public static boolean covers(final X509Certificate leaf, final String zone) {
    try {
      final var names = leaf.getSubjectAlternativeNames();
      if (names == null) {
        return false;
      }
      final String wanted = "*." + zone.toLowerCase(Locale.ROOT);
      for (final List<?> name : names) {
        if (name.size() == 2 && Integer.valueOf(2).equals(name.get(0))
            && wanted.equalsIgnoreCase(String.valueOf(name.get(1)))) {
          return true;
        }
      }
      return false;
    } catch (final CertificateParsingException e) {
      return false;
    }
  }

  @Override
  public void close() {
    executor.shutdownNow();
  }
}
