package io.relaypinner.relay.testing;

import io.relaypinner.relay.RelayNode;
import io.relaypinner.testkit.PostgresServer;
import io.relaypinner.testkit.S3ProxyServer;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * One S3 bucket (s3proxy) and one PostgreSQL database on loopback for a test class, and relays
 * on them: {@code @RegisterExtension static final SharedStores STORES = new SharedStores("b");}
 * starts both before the class's first test and stops them after its last.
 */
public final class SharedStores implements BeforeAllCallback, AfterAllCallback {
  private final String bucket;
  private Path dir;
  private S3ProxyServer s3;
  private PostgresServer postgres;

  public SharedStores(final String bucket) {
    this.bucket = bucket;
  }

  @Override
  public void beforeAll(final ExtensionContext context) throws IOException {
    PostgresServer.ensureInstalled();
    dir = Files.createTempDirectory("shared-stores-");
    s3 = new S3ProxyServer(dir.resolve("s3"), bucket).start();
    postgres = new PostgresServer().start();
  }

  @Override
  public void afterAll(final ExtensionContext context) throws IOException {
    if (s3 != null) {
      s3.close();
    }
    if (postgres != null) {
      postgres.close();
    }
    if (dir != null) {
      try (Stream<Path> paths = Files.walk(dir)) {
        for (final Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
          Files.deleteIfExists(path);
        }
      }
    }
  }

  public S3ProxyServer s3() {
    return s3;
  }

  public PostgresServer postgres() {
    return postgres;
  }

  public String bucket() {
    return bucket;
  }

  /** The stores' part of {@link SharedStoresRelayMain}'s arguments (after dir and seed). */
  public List<String> relayArgs() {
    return List.of(s3.endpoint().toString(), bucket, S3ProxyServer.REGION,
        S3ProxyServer.ACCESS_KEY, S3ProxyServer.SECRET_KEY, postgres.jdbcUrl(),
        PostgresServer.USER, PostgresServer.PASSWORD);
  }

  /** A relay in this JVM on these stores, its identity from {@code seed}; not started. */
  public RelayNode relay(final Path dataDir, final int seed) {
    return SharedStoresRelayMain.relay(dataDir, seed, relayArgs());
  }
}
