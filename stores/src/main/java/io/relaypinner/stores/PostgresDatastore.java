package io.relaypinner.stores;

import static io.relaypinner.common.Failures.rootMessage;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.relaypinner.ipfs.blockstore.StoreUnavailableException;
import io.relaypinner.ipfs.datastore.Datastore;
import io.relaypinner.ipfs.datastore.Fence;
import io.relaypinner.ipfs.datastore.StaleFenceException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Supplier;
import javax.sql.DataSource;
import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.FlywayException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A {@link Datastore} in PostgreSQL, shared by every relay configured with the same database.
 * The schema is created and upgraded by Flyway migrations ({@code db/relaypinner/V*.sql}) at
 * open; relays starting together are serialized by Flyway's own lock.
 *
 * <p>Each call runs on a pooled connection (HikariCP, bounded) in autocommit: a put or delete
 * that returned is committed, so durable as PostgreSQL's commit is. A call that cannot get a
 * connection within the timeout, or loses it, throws {@link StoreUnavailableException} and has
 * changed nothing or committed its one statement atomically.
 */
public final class PostgresDatastore implements Datastore {
  static final String STORE = "postgres";
  private static final Logger LOG = LoggerFactory.getLogger(PostgresDatastore.class);

  private final PostgresStoreConfig config;
  private final HikariDataSource pool;
  private final StoreAvailability availability;

  private PostgresDatastore(final PostgresStoreConfig config, final HikariDataSource pool,
      final Clock clock) {
    this.config = config;
    this.pool = pool;
    this.availability = new StoreAvailability(STORE, clock);
    availability.opened();
  }

  /** {@link #open(PostgresStoreConfig, Clock)} on the system clock. */
  public static PostgresDatastore open(final PostgresStoreConfig config) {
    return open(config, Clock.systemUTC());
  }

  /**
   * Connects, migrates the schema and returns the store.
   *
   * @param clock what {@link #availability()} measures outages on
   * @throws StoreUnavailableException naming the database when it cannot be reached, refuses
   *     the credentials or the migration fails
   */
  public static PostgresDatastore open(final PostgresStoreConfig config, final Clock clock) {
    final HikariConfig hikari = new HikariConfig();
    hikari.setPoolName("relay-postgres");
    hikari.setJdbcUrl(config.jdbcUrl());
    config.user().ifPresent(hikari::setUsername);
    config.password().ifPresent(hikari::setPassword);
    hikari.setMaximumPoolSize(config.maxConnections());
    hikari.setMinimumIdle(1);
    hikari.setConnectionTimeout(config.connectTimeout().toMillis());
    hikari.setValidationTimeout(Math.min(config.connectTimeout().toMillis(), 3000));
    hikari.setInitializationFailTimeout(config.connectTimeout().toMillis());
    hikari.setAutoCommit(true);
    hikari.addDataSourceProperty("connectTimeout",
        Math.max(1, (int) config.connectTimeout().toSeconds()));
    hikari.addDataSourceProperty("socketTimeout", 60);
    hikari.addDataSourceProperty("tcpKeepAlive", true);
    final HikariDataSource pool;
    try {
      pool = new HikariDataSource(hikari);
    } catch (final RuntimeException e) {
      throw new StoreUnavailableException(STORE,
          "cannot connect to " + config.safeUrl() + ": " + rootMessage(e), e);
    }
    try {
      migrate(pool);
    } catch (final FlywayException e) {
      pool.close();
      throw new StoreUnavailableException(STORE,
          "cannot migrate the schema in " + config.safeUrl() + ": " + rootMessage(e), e);
    }
    LOG.info("datastore: PostgreSQL at {}", config.safeUrl());
    return new PostgresDatastore(config, pool, clock);
  }

  static void migrate(final DataSource source) {
    Flyway.configure()
        .dataSource(source)
        .locations("classpath:db/relaypinner")
        .table("relay_schema_history")
        .baselineOnMigrate(false)
        .load()
        .migrate();
  }

  /** The pool, for the coordination that shares this database. */
  public DataSource dataSource() {
    return pool;
  }

  /** The settings this store was opened with. */
  public PostgresStoreConfig config() {
    return config;
  }

  @Override
  public Optional<byte[]> get(final String key) {
    Datastore.checkKey(key);
    return run("get", c -> {
      try (PreparedStatement s =
          c.prepareStatement("SELECT value FROM relay_datastore WHERE key = ?")) {
        s.setString(1, key);
        try (ResultSet r = s.executeQuery()) {
          return r.next() ? Optional.of(r.getBytes(1)) : Optional.<byte[]>empty();
        }
      }
    });
  }

  @Override
  public void put(final String key, final byte[] value) {
    Datastore.checkKey(key);
    Datastore.checkValue(value);
    run("put", c -> {
      try (PreparedStatement s = c.prepareStatement("INSERT INTO relay_datastore (key, value) "
          + "VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value")) {
        s.setString(1, key);
        s.setBytes(2, value);
        return s.executeUpdate();
      }
    });
  }

  @Override
  public boolean delete(final String key) {
    Datastore.checkKey(key);
    return run("delete", c -> {
      try (PreparedStatement s = c.prepareStatement("DELETE FROM relay_datastore WHERE key = ?")) {
        s.setString(1, key);
        return s.executeUpdate() > 0;
      }
    });
  }

  /**
   * Every put and delete in one transaction (one commit): a join's markers, count and heads are
   * all written or, when PostgreSQL goes away meanwhile, none is.
   */
  @Override
  public void write(final Map<String, byte[]> puts, final Collection<String> deletes) {
    write(puts, deletes, null, "write");
  }

  /**
   * As {@link #write(Map, Collection)}, in a transaction that first locks {@code fence}'s lease
   * row {@code FOR SHARE} if it is still held at the fence's epoch: when it is not (taken over,
   * or released), nothing is written and {@link StaleFenceException} is thrown; when it is, a
   * takeover's {@code UPDATE} of that row waits until this write committed, so the write lands
   * strictly before any takeover, whatever the relays' clocks or pauses.
   */
  @Override
  public void write(final Map<String, byte[]> puts, final Collection<String> deletes,
      final Fence fence) {
    write(puts, deletes, Objects.requireNonNull(fence, "fence"), "fenced write");
  }

  private void write(final Map<String, byte[]> puts, final Collection<String> deletes,
      final Fence fence, final String what) {
    for (final Map.Entry<String, byte[]> e : puts.entrySet()) {
      Datastore.checkKey(e.getKey());
      Datastore.checkValue(e.getValue());
    }
    for (final String key : deletes) {
      Datastore.checkKey(key);
    }
    if (puts.isEmpty() && deletes.isEmpty()) {
      return;
    }
    run(what, c -> inTransaction(c, () -> {
      if (fence != null) {
        checkFence(c, fence);
      }
      if (!puts.isEmpty()) {
        try (PreparedStatement s = c.prepareStatement("INSERT INTO relay_datastore (key, value)"
            + " VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value")) {
          for (final Map.Entry<String, byte[]> e : puts.entrySet()) {
            s.setString(1, e.getKey());
            s.setBytes(2, e.getValue());
            s.addBatch();
          }
          s.executeBatch();
        }
      }
      if (!deletes.isEmpty()) {
        try (PreparedStatement s =
            c.prepareStatement("DELETE FROM relay_datastore WHERE key = ?")) {
          for (final String key : deletes) {
            s.setString(1, key);
            s.addBatch();
          }
          s.executeBatch();
        }
      }
      return null;
    }));
  }

  /**
   * Runs {@code work} (writes elsewhere: S3 deletes of the GC leader) inside a transaction that
   * holds {@code fence}'s lease row {@code FOR SHARE}: the work starts only while the lease is
   * held at the fence's epoch, and a takeover waits until it ended. Keep the work short (a page):
   * it holds a pooled connection and delays a takeover that long.
   *
   * @throws StaleFenceException when the lease is no longer held at that epoch (work not run)
   */
  public <T> T underFence(final Fence fence, final Supplier<T> work) {
    Objects.requireNonNull(fence, "fence");
    Objects.requireNonNull(work, "work");
    return run("fence " + fence.name(), c -> inTransaction(c, () -> {
      checkFence(c, fence);
      return work.get();
    }));
  }

  private static void checkFence(final Connection c, final Fence fence) throws SQLException {
    try (PreparedStatement s = c.prepareStatement("SELECT 1 FROM relay_leases"
        + " WHERE name = ? AND holder = ? AND epoch = ? FOR SHARE")) {
      s.setString(1, fence.name());
      s.setString(2, fence.holder());
      s.setLong(3, fence.epoch());
      try (ResultSet r = s.executeQuery()) {
        if (!r.next()) {
          throw new StaleFenceException(STORE, fence);
        }
      }
    }
  }

  /** A step of a transaction. */
  private interface TxWork<T> {
    T run() throws SQLException;
  }

  /** {@code work} in one transaction on {@code c}: committed, or rolled back when it throws. */
  private static <T> T inTransaction(final Connection c, final TxWork<T> work)
      throws SQLException {
    c.setAutoCommit(false);
    try {
      final T result = work.run();
      c.commit();
      return result;
    } catch (final SQLException | RuntimeException e) {
      try {
        c.rollback();
      } catch (final SQLException ignored) {
        // The session is gone: PostgreSQL rolled the transaction back itself.
      }
      throw e;
    } finally {
      try {
        c.setAutoCommit(true);
      } catch (final SQLException ignored) {
        // A broken connection: the pool discards it.
      }
    }
  }

  @Override
  public List<Entry> scan(final String prefix) {
    if (!prefix.isEmpty()) {
      Datastore.checkKey(prefix);
    }
    final List<Entry> entries = run("scan", c -> {
      try (PreparedStatement s = c.prepareStatement(
          "SELECT key, value FROM relay_datastore WHERE key LIKE ? ESCAPE '\\' ORDER BY key")) {
        s.setString(1, likePrefix(prefix));
        final List<Entry> found = new ArrayList<>();
        try (ResultSet r = s.executeQuery()) {
          while (r.next()) {
            found.add(new Entry(r.getString(1), r.getBytes(2)));
          }
        }
        return found;
      }
    });
    // The interface promises String order (UTF-16), which differs from bytes beyond the BMP.
    entries.sort(Comparator.comparing(Entry::key));
    return entries;
  }

  /**
   * One page in the table's key order (byte-wise, {@code COLLATE "C"}: String order for keys
   * without characters beyond U+FFFF), so that pages never skip or repeat a key; one round trip
   * on the primary key's index.
   */
  @Override
  public List<Entry> scan(final String prefix, final String after, final int limit) {
    if (limit < 1) {
      throw new IllegalArgumentException("limit must be positive");
    }
    if (!prefix.isEmpty()) {
      Datastore.checkKey(prefix);
    }
    return run("scan", c -> {
      try (PreparedStatement s = c.prepareStatement(
          "SELECT key, value FROM relay_datastore WHERE key LIKE ? ESCAPE '\\' AND key > ?"
              + " ORDER BY key LIMIT ?")) {
        s.setString(1, likePrefix(prefix));
        s.setString(2, after == null ? "" : after);
        s.setInt(3, limit);
        final List<Entry> found = new ArrayList<>();
        try (ResultSet r = s.executeQuery()) {
          while (r.next()) {
            found.add(new Entry(r.getString(1), r.getBytes(2)));
          }
        }
        return found;
      }
    });
  }

  /**
   * One round trip ({@code SELECT 1}): how an outage is noticed to end when nothing else calls
   * the database.
   *
   * @throws StoreUnavailableException when it still cannot be reached
   */
  public void probe() {
    run("probe", c -> {
      try (PreparedStatement s = c.prepareStatement("SELECT 1")) {
        return s.execute();
      }
    });
  }

  static String likePrefix(final String prefix) {
    return prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%";
  }

  /** Calls that failed with the database unavailable since open. */
  public long failures() {
    return availability.failures();
  }

  /**
   * Whether PostgreSQL answers, as the last call found it (this store's and the coordination's
   * on the same database); outages are logged once.
   */
  public StoreAvailability availability() {
    return availability;
  }

  @Override
  public void close() {
    pool.close();
  }

  /** A step on one pooled connection. */
  interface SqlWork<T> {
    T run(Connection connection) throws SQLException;
  }

  private <T> T run(final String what, final SqlWork<T> work) {
    try (Connection c = pool.getConnection()) {
      final T result = work.run(c);
      availability.succeeded();
      return result;
    } catch (final SQLException e) {
      throw availability.failed(new StoreUnavailableException(STORE,
          what + " failed on " + config.safeUrl() + ": " + rootMessage(e), e));
    } catch (final StaleFenceException e) {
      // Refused by the lease, not an outage: PostgreSQL answered.
      availability.succeeded();
      throw e;
    } catch (final RuntimeException e) {
      if (pool.isClosed()) {
        throw new IllegalStateException("datastore is closed", e);
      }
      throw e;
    }
  }
}
