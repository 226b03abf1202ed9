package io.relaypinner.stores;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.relaypinner.ipfs.blockstore.StoreUnavailableException;
import io.relaypinner.ipfs.datastore.Datastore;
import io.relaypinner.testkit.PostgresServer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** {@link PostgresDatastore} against a PostgreSQL server the test starts on loopback. */
class PostgresDatastoreIT {
  private static PostgresServer server;

  @BeforeAll
  static void startServer() {
    PostgresServer.ensureInstalled();
    server = new PostgresServer().start();
  }

  @AfterAll
  static void stopServer() {
    if (server != null) {
      server.close();
    }
  }

  static PostgresStoreConfig config(final String url, final String password) {
    return new PostgresStoreConfig(url, Optional.of(PostgresServer.USER),
        Optional.of(password), 4, Duration.ofSeconds(2));
  }

  private static byte[] bytes(final String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }

  @Test
  void keepsKeysAndValuesSharedBetweenRelays() {
    try (PostgresDatastore one = PostgresDatastore.open(config(server.jdbcUrl(),
        PostgresServer.PASSWORD));
        PostgresDatastore two = PostgresDatastore.open(config(server.jdbcUrl(),
            PostgresServer.PASSWORD))) {
      one.put("/kv/pins/b", bytes("2"));
      one.put("/kv/pins/a", bytes("1"));
      one.put("/kv/pins_x", bytes("not under the prefix"));
      one.put("/kv/pins/a", bytes("1 again"));
      assertThat(two.get("/kv/pins/a")).hasValueSatisfying(
          v -> assertThat(v).isEqualTo(bytes("1 again")));
      assertThat(two.scan("/kv/pins/")).extracting(Datastore.Entry::key)
          .containsExactly("/kv/pins/a", "/kv/pins/b");
      // LIKE wildcards in a prefix are literal.
      assertThat(two.scan("/kv/pins_")).extracting(Datastore.Entry::key)
          .containsExactly("/kv/pins_x");
      // Pages: after a key, at most a limit, the prefix only.
      assertThat(two.scan("/kv/pins/", null, 1)).extracting(Datastore.Entry::key)
          .containsExactly("/kv/pins/a");
      assertThat(two.scan("/kv/pins/", "/kv/pins/a", 5)).extracting(Datastore.Entry::key)
          .containsExactly("/kv/pins/b");
      assertThat(two.scan("/kv/pins_", null, 5)).extracting(Datastore.Entry::key)
          .containsExactly("/kv/pins_x");
      assertThat(two.delete("/kv/pins/a")).isTrue();
      assertThat(one.delete("/kv/pins/a")).isFalse();
      assertThat(one.get("/kv/pins/a")).isEmpty();
      final byte[] big = new byte[Datastore.MAX_VALUE_SIZE];
      one.put("/kv/big", big);
      assertThat(two.get("/kv/big")).hasValueSatisfying(v -> assertThat(v).hasSize(big.length));
      assertThatThrownBy(() -> one.put("/kv/big", new byte[Datastore.MAX_VALUE_SIZE + 1]))
          .isInstanceOf(IllegalArgumentException.class);
      assertThatThrownBy(() -> one.put("no-slash", big)).isInstanceOf(
          IllegalArgumentException.class);
    }
  }

  @Test
  void badCredentialsAndUnreachableServersFailOpenNamingTheStore() {
    assertThatThrownBy(() -> PostgresDatastore.open(config(server.jdbcUrl(), "wrong")))
        .isInstanceOf(StoreUnavailableException.class)
        .hasMessageContaining("postgres unavailable").hasMessageContaining(server.jdbcUrl());
    assertThatThrownBy(() -> PostgresDatastore.open(
        config("jdbc:postgresql://127.0.0.1:9/postgres", PostgresServer.PASSWORD)))
        .isInstanceOf(StoreUnavailableException.class)
        .hasMessageContaining("127.0.0.1:9");
    assertThatThrownBy(() -> config("postgres://nope", "x"))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("RELAY_POSTGRES_URL");
  }

  @Test
  void anOutageFailsCallsClearlyAndLosesNothing() {
    try (PostgresDatastore store = PostgresDatastore.open(config(server.jdbcUrl(),
        PostgresServer.PASSWORD))) {
      store.put("/kv/outage/kept", bytes("kept"));
      server.stop();
      try {
        assertThatThrownBy(() -> store.put("/kv/outage/lost", bytes("x")))
            .isInstanceOf(StoreUnavailableException.class).hasMessageContaining("put failed");
        assertThatThrownBy(() -> store.get("/kv/outage/kept"))
            .isInstanceOf(StoreUnavailableException.class);
      } finally {
        server.start();
      }
      org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(30)).ignoreExceptions()
          .untilAsserted(() -> assertThat(store.get("/kv/outage/kept")).isPresent());
      store.put("/kv/outage/after", bytes("after"));
      assertThat(store.scan("/kv/outage/")).extracting(Datastore.Entry::key)
          .containsExactly("/kv/outage/after", "/kv/outage/kept");
    }
  }
}
