package io.relaypinner.stores;

import io.relaypinner.ipfs.blockstore.StoreUnavailableException;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.HashSet;
import java.util.Properties;
import java.util.Set;

/**
 * Exclusive ownership of named things (one followed database each) among the relays sharing one
 * PostgreSQL, with session-level advisory locks ({@code pg_try_advisory_lock} on a 64-bit hash
 * of the name) on one dedicated connection. A lease lasts until {@link #release} or until this
 * relay's session ends: a relay killed with SIGKILL loses its socket, PostgreSQL ends the session
 * at once and the leases are free for the next relay's {@link #tryAcquire} (relays poll every few
 * seconds, so ownership moves within the 10 s of issue 24). A relay cut off by the network is
 * ended by TCP keepalive ({@code tcpKeepAlive=true}; tune the server's {@code tcp_keepalives_*}).
 *
 * <p>When the connection is lost every lease is lost with it: {@link #tryAcquire} and
 * {@link #holds} then throw {@link StoreUnavailableException} and the owner must stop its work;
 * {@link #reconnect} starts again with no lease. Thread-safe (calls are serialized).
 */
public final class PostgresLeases implements AutoCloseable {
  private final PostgresStoreConfig config;
  private final Set<String> held = new HashSet<>();
  private Connection connection;

  /** Opens the dedicated session. */
  public PostgresLeases(final PostgresStoreConfig config) {
    this.config = config;
    reconnect();
  }

  /** Drops the current session (and with it every lease) and opens a new one. */
  public synchronized void reconnect() {
    closeConnection();
    held.clear();
    final Properties properties = new Properties();
    config.user().ifPresent(u -> properties.setProperty("user", u));
    config.password().ifPresent(p -> properties.setProperty("password", p));
    properties.setProperty("tcpKeepAlive", "true");
    properties.setProperty("connectTimeout",
        Long.toString(Math.max(1, config.connectTimeout().toSeconds())));
    properties.setProperty("ApplicationName", "relay-pinner leases");
    try {
      connection = DriverManager.getConnection(config.jdbcUrl(), properties);
      connection.setAutoCommit(true);
    } catch (final SQLException e) {
      throw unavailable("connect", e);
    }
  }

  /** Takes the lease on {@code name} if no relay holds it; true if this relay holds it now. */
  public synchronized boolean tryAcquire(final String name) {
    if (held.contains(name)) {
      return holds(name);
    }
    final boolean got = query("SELECT pg_try_advisory_lock(hashtextextended(?, 0))", name);
    if (got) {
      held.add(name);
    }
    return got;
  }

  /** Whether this relay still holds {@code name} (checks that the session is alive). */
  public synchronized boolean holds(final String name) {
    if (!held.contains(name)) {
      return false;
    }
    try {
      if (!connection.isValid(Math.max(1, (int) config.connectTimeout().toSeconds()))) {
        held.clear();
        throw new StoreUnavailableException(PostgresDatastore.STORE,
            "the leases' session to " + config.safeUrl() + " was lost", null);
      }
    } catch (final SQLException e) {
      held.clear();
      throw unavailable("check", e);
    }
    return true;
  }

  /** Gives the lease up; false when this relay did not hold it. */
  public synchronized boolean release(final String name) {
    if (!held.remove(name)) {
      return false;
    }
    return query("SELECT pg_advisory_unlock(hashtextextended(?, 0))", name);
  }

  /** The names this relay holds, as far as it knows. */
  public synchronized Set<String> held() {
    return Set.copyOf(held);
  }

  @Override
  public synchronized void close() {
    held.clear();
    closeConnection();
  }

  private boolean query(final String sql, final String name) {
    try (PreparedStatement s = connection.prepareStatement(sql)) {
      s.setString(1, name);
      try (ResultSet r = s.executeQuery()) {
        return r.next() && r.getBoolean(1);
      }
    } catch (final SQLException e) {
      held.clear();
      throw unavailable("lease " + name, e);
    }
  }

  private StoreUnavailableException unavailable(final String what, final SQLException e) {
    return new StoreUnavailableException(PostgresDatastore.STORE, what + " failed on "
        + config.safeUrl() + ": " + PostgresDatastore.rootMessage(e), e);
  }

  private void closeConnection() {
    if (connection != null) {
      try {
        connection.close();
      } catch (final SQLException e) {
        // Closing a dead session: its leases are gone either way.
      }
      connection = null;
    }
  }
}
