package io.relaypinner.relay.tls;

import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.ClosedWatchServiceException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardWatchEventKinds;
import java.nio.file.WatchKey;
import java.nio.file.WatchService;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.PrivateKey;
import java.security.Signature;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.bouncycastle.asn1.pkcs.PrivateKeyInfo;
import org.bouncycastle.openssl.PEMKeyPair;
import org.bouncycastle.openssl.PEMParser;
import org.bouncycastle.openssl.jcajce.JcaPEMKeyConverter;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The relay's TLS certificate, read from {@code RELAY_TLS_CERT_DIR} (CONTRACT.md): {@code cert.pem}
 * (the leaf certificate first, then its chain) and {@code key.pem} (PKCS#8 {@code PRIVATE KEY}, EC,
 * RSA or Ed25519; the traditional {@code EC PRIVATE KEY} and {@code RSA PRIVATE KEY} forms are
 * accepted too, encrypted keys are not). Knows nothing about HTTP: the HTTPS listener and the
 * libp2p WebSocket transport (WSS) take their server context from the same store.
 *
 * <p>The directory is watched ({@link WatchService}) and checked every {@code pollInterval} as well
 * (watch events are lost on some file systems and in containers): when the content hash of the
 * pair changed, the new pair is parsed, the key is checked against the leaf certificate (a test
 * signature), and a Netty server {@link SslContext} is built. Only then does it replace the active
 * one and the listeners hear of it. A pair that is missing, half-written or invalid is logged once
 * (one WARN line per distinct content) and the previous certificate stays active. Loading runs on
 * the store's own thread, never an event loop; {@link #current()} is a volatile read.
 *
 * <p>A certificate past its {@code notAfter} is still loaded (nothing better is available), with a
 * warning.
 */
public final class CertificateStore implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(CertificateStore.class);
  public static final String CERT_FILE = "cert.pem";
  public static final String KEY_FILE = "key.pem";
  /** How often the files are checked besides watch events. */
  public static final Duration DEFAULT_POLL_INTERVAL = Duration.ofSeconds(30);
  /** Largest {@code cert.pem}: a chain of a few certificates is a few KiB. */
  static final int MAX_CERT_BYTES = 256 * 1024;
  /** Largest {@code key.pem}. */
  static final int MAX_KEY_BYTES = 64 * 1024;
  /** Wait after a watch event before reading, so both files of an update are usually written. */
  private static final Duration SETTLE = Duration.ofMillis(200);
  private static final byte[] PROBE = "relay-pinner certificate/key match".getBytes(
      StandardCharsets.US_ASCII);

  /**
   * One loaded pair.
   *
   * @param chain the leaf first, then the chain as in {@code cert.pem}
   * @param privateKey the leaf's key
   * @param serverContext a Netty server context for the pair (JDK provider, default protocols)
   * @param fingerprint SHA-256 of the leaf's DER encoding, lower-case hex
   * @param notAfter end of the leaf's validity
   * @param loadedAt when this pair became active
   */
  public record LoadedCertificate(List<X509Certificate> chain, PrivateKey privateKey,
      SslContext serverContext, String fingerprint, Instant notAfter, Instant loadedAt) {
    public LoadedCertificate {
      chain = List.copyOf(chain);
      Objects.requireNonNull(privateKey, "privateKey");
      Objects.requireNonNull(serverContext, "serverContext");
    }

    /** The leaf certificate. */
    public X509Certificate leaf() {
      return chain.get(0);
    }

    @Override
    public String toString() {
      return "LoadedCertificate[subject=" + leaf().getSubjectX500Principal().getName()
          + ", fingerprint=" + fingerprint + ", notAfter=" + notAfter + "]";
    }
  }

  private final Path dir;
  private final Duration pollInterval;
  private final Clock clock;
  private final List<Consumer<LoadedCertificate>> listeners = new CopyOnWriteArrayList<>();
  private final ScheduledExecutorService executor;
  private volatile LoadedCertificate active;
  /** Content hash of the active pair, and of the last pair that was reported as unusable. */
  private byte[] activeHash;
  private byte[] reportedHash;
  private String reportedProblem;
  private WatchService watcher;
  private Thread watchThread;
  private ScheduledFuture<?> pendingCheck;
  private boolean closed;

  public CertificateStore(final Path dir, final Duration pollInterval, final Clock clock) {
    this.dir = Objects.requireNonNull(dir, "dir");
    this.pollInterval = Objects.requireNonNull(pollInterval, "pollInterval");
    if (pollInterval.isNegative() || pollInterval.isZero()) {
      throw new IllegalArgumentException("pollInterval must be positive: " + pollInterval);
    }
    this.clock = Objects.requireNonNull(clock, "clock");
    this.executor = Executors.newSingleThreadScheduledExecutor(
        new DefaultThreadFactory("relay-tls", true));
  }

  /** The directory watched. */
  public Path directory() {
    return dir;
  }

  /** The server context of the active certificate, if one was loaded. */
  public Optional<SslContext> current() {
    final LoadedCertificate loaded = active;
    return loaded == null ? Optional.empty() : Optional.of(loaded.serverContext());
  }

  /** The active certificate, if one was loaded. */
  public Optional<LoadedCertificate> certificate() {
    return Optional.ofNullable(active);
  }

  /**
   * Called on the store's thread each time a new pair becomes active (also for the first one,
   * and at once on this thread when a pair is active already). Must not block for long.
   */
  public void onChange(final Consumer<LoadedCertificate> listener) {
    Objects.requireNonNull(listener, "listener");
    listeners.add(listener);
    final LoadedCertificate loaded = active;
    if (loaded != null) {
      listener.accept(loaded);
    }
  }

  /**
   * Starts watching: creates the directory when missing (best effort), checks the files once on
   * the store's thread (this call does not wait for it), then on every change and poll.
   */
  public synchronized void start() {
    if (closed || watchThread != null) {
      return;
    }
    try {
      Files.createDirectories(dir);
      watcher = dir.getFileSystem().newWatchService();
      dir.register(watcher, StandardWatchEventKinds.ENTRY_CREATE,
          StandardWatchEventKinds.ENTRY_MODIFY, StandardWatchEventKinds.ENTRY_DELETE);
      watchThread = new DefaultThreadFactory("relay-tls-watch", true).newThread(this::watch);
      watchThread.start();
    } catch (final IOException | RuntimeException e) {
      LOG.warn("cannot watch {} ({}); checking it every {} s instead", dir, e.toString(),
          pollInterval.toSeconds());
    }
    executor.execute(this::checkQuietly);
    executor.scheduleWithFixedDelay(this::checkQuietly, pollInterval.toMillis(),
        pollInterval.toMillis(), TimeUnit.MILLISECONDS);
  }

  private void watch() {
    try {
      while (true) {
        final WatchKey key = watcher.take();
        key.pollEvents();
        key.reset();
        scheduleCheck();
      }
    } catch (final InterruptedException | ClosedWatchServiceException e) {
      // closing
    }
  }

  private synchronized void scheduleCheck() {
    if (closed) {
      return;
    }
    if (pendingCheck != null) {
      pendingCheck.cancel(false);
    }
    try {
      pendingCheck = executor.schedule(this::checkQuietly, SETTLE.toMillis(),
          TimeUnit.MILLISECONDS);
    } catch (final RejectedExecutionException e) {
      // closing
    }
  }

  private void checkQuietly() {
    try {
      checkNow();
    } catch (final RuntimeException e) {
      LOG.error("checking the TLS certificate in {} failed", dir, e);
    }
  }

  /**
   * Reads the pair now and activates it when it changed and is valid. Blocks on disk and crypto:
   * never call on an event loop.
   *
   * @return whether a new certificate became active
   */
  public boolean checkNow() {
    final LoadedCertificate loaded;
    synchronized (this) {
      final byte[] cert;
      final byte[] key;
      try {
        cert = read(dir.resolve(CERT_FILE), MAX_CERT_BYTES);
        key = read(dir.resolve(KEY_FILE), MAX_KEY_BYTES);
      } catch (final NoSuchFileException e) {
        if (active != null) {
          report(null, "missing " + e.getFile());
        }
        return false;
      } catch (final IOException e) {
        report(null, e.toString());
        return false;
      }
      final byte[] hash = hash(cert, key);
      if (Arrays.equals(hash, activeHash) || Arrays.equals(hash, reportedHash)) {
        return false;
      }
      try {
        loaded = load(cert, key, clock.instant());
      } catch (final GeneralSecurityException | IOException | IllegalArgumentException e) {
        reportedHash = hash;
        report(hash, e.getMessage() != null ? e.getMessage() : e.toString());
        return false;
      }
      active = loaded;
      activeHash = hash;
      reportedHash = null;
      reportedProblem = null;
    }
    if (loaded.notAfter().isBefore(clock.instant())) {
      LOG.warn("TLS certificate {} expired at {}; using it until a new one arrives", loaded,
          loaded.notAfter());
    } else {
      LOG.info("TLS certificate loaded from {}: {}", dir, loaded);
    }
    for (final Consumer<LoadedCertificate> listener : listeners) {
      try {
        listener.accept(loaded);
      } catch (final RuntimeException e) {
        LOG.error("TLS certificate listener failed", e);
      }
    }
    return true;
  }

  /** One WARN line per distinct problem. Holds the lock. */
  private void report(final byte[] hash, final String problem) {
    final String text = hash == null ? problem : problem + "#" + HexFormat.of().formatHex(hash);
    if (text.equals(reportedProblem)) {
      return;
    }
    reportedProblem = text;
    LOG.warn("TLS certificate in {} not usable ({}); {}", dir, problem, active != null
        ? "keeping the previous one (" + active.fingerprint() + ")" : "no certificate yet");
  }

  private static byte[] read(final Path file, final int limit) throws IOException {
    try (InputStream in = Files.newInputStream(file)) {
      final byte[] bytes = in.readNBytes(limit + 1);
      if (bytes.length > limit) {
        throw new IOException(file + " is larger than " + limit + " bytes");
      }
      return bytes;
    }
  }

  private static byte[] hash(final byte[] cert, final byte[] key) {
    final MessageDigest digest = sha256();
    digest.update(cert);
    digest.update((byte) 0);
    digest.update(key);
    return digest.digest();
  }

  private static MessageDigest sha256() {
    try {
      return MessageDigest.getInstance("SHA-256");
    } catch (final NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is part of every JDK", e);
    }
  }

  /**
   * Parses a PEM pair and builds its server context.
   *
   * @throws GeneralSecurityException when the certificates or the key cannot be used, or do not
   *     belong together
   * @throws IOException when the PEM text cannot be parsed
   */
  public static LoadedCertificate load(final byte[] certPem, final byte[] keyPem,
      final Instant now) throws GeneralSecurityException, IOException {
    final List<X509Certificate> chain = new ArrayList<>();
    for (final Certificate certificate : CertificateFactory.getInstance("X.509")
        .generateCertificates(new ByteArrayInputStream(certPem))) {
      chain.add((X509Certificate) certificate);
    }
    if (chain.isEmpty()) {
      throw new GeneralSecurityException(CERT_FILE + " holds no certificate");
    }
    final PrivateKey key = parseKey(keyPem);
    checkPair(chain.get(0), key);
    final SslContext context = SslContextBuilder.forServer(key, chain).build();
    final String fingerprint =
        HexFormat.of().formatHex(sha256().digest(chain.get(0).getEncoded()));
    return new LoadedCertificate(chain, key, context, fingerprint,
        chain.get(0).getNotAfter().toInstant(), now);
  }

  private static PrivateKey parseKey(final byte[] keyPem)
      throws IOException, GeneralSecurityException {
    final Object parsed;
    try (Reader reader = new InputStreamReader(
        new ByteArrayInputStream(keyPem), StandardCharsets.US_ASCII);
        PEMParser parser = new PEMParser(reader)) {
      parsed = parser.readObject();
    } catch (final RuntimeException e) {
      // BouncyCastle reports malformed base64 and DER as runtime exceptions.
      throw new IOException(KEY_FILE + " is not valid PEM: " + e.getMessage(), e);
    }
    final JcaPEMKeyConverter converter = new JcaPEMKeyConverter();
    if (parsed instanceof PrivateKeyInfo info) {
      return converter.getPrivateKey(info);
    }
    if (parsed instanceof PEMKeyPair pair) {
      return converter.getPrivateKey(pair.getPrivateKeyInfo());
    }
    throw new GeneralSecurityException(KEY_FILE + " holds no unencrypted private key"
        + (parsed == null ? "" : " (found " + parsed.getClass().getSimpleName() + ")"));
  }

  /** The key signs, the leaf's public key verifies: they belong together. */
  private static void checkPair(final X509Certificate leaf, final PrivateKey key)
      throws GeneralSecurityException {
    final String algorithm = switch (key.getAlgorithm().toUpperCase(Locale.ROOT)) {
      case "EC", "ECDSA" -> "SHA256withECDSA";
      case "RSA" -> "SHA256withRSA";
      case "ED25519", "EDDSA" -> "Ed25519";
      default -> throw new GeneralSecurityException(
          "unsupported key algorithm " + key.getAlgorithm() + " (EC, RSA or Ed25519)");
    };
    final Signature signer = Signature.getInstance(algorithm);
    signer.initSign(key);
    signer.update(PROBE);
    final byte[] signature = signer.sign();
    final Signature verifier = Signature.getInstance(algorithm);
    verifier.initVerify(leaf.getPublicKey());
    verifier.update(PROBE);
    if (!verifier.verify(signature)) {
      throw new GeneralSecurityException(KEY_FILE + " does not belong to the first certificate in "
          + CERT_FILE);
    }
  }

  /** Stops watching; the active context stays readable. */
  @Override
  public void close() {
    synchronized (this) {
      if (closed) {
        return;
      }
      closed = true;
    }
    if (watcher != null) {
      try {
        watcher.close();
      } catch (final IOException e) {
        LOG.debug("closing the watch service of {}: {}", dir, e.toString());
      }
    }
    executor.shutdownNow();
  }
}
