package io.relaypinner.stores;

import io.relaypinner.common.Failures;
import io.relaypinner.ipfs.blockstore.StoreUnavailableException;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.Semaphore;

/**
 * Media pins shared by the relays on one PostgreSQL without duplicates, in the work table
 * {@code relay_media_work}: {@link #claim} queues a CID (one row) and locks its row with
 * {@code SELECT ... FOR UPDATE SKIP LOCKED} in a transaction on a session of its own, which stays
 * open while this relay pins it; another relay's claim of the same CID skips the locked row and
 * gets nothing (it waits for the pin to show in the shared pins instead). {@link Claim#close}
 * with {@code done} deletes the row and commits; without, it rolls back and the row is free for
 * the next claim. A relay that dies mid-pin loses its session and with it the lock, so another
 * relay's next claim gets the row at once.
 *
 * <p>At most {@code maxClaims} claims (sessions) are open at once; beyond that {@link #claim}
 * throws {@link IllegalStateException}. Thread-safe.
 */
public final class PostgresMediaWork {
  private final PostgresStoreConfig config;
  private final Semaphore sessions;
  private final StoreAvailability availability;

  public PostgresMediaWork(final PostgresStoreConfig config, final int maxClaims) {
    this(config, maxClaims, new StoreAvailability(PostgresDatastore.STORE));
  }

  /** Work in {@code store}'s database; its availability tells of outages. */
  public PostgresMediaWork(final PostgresDatastore store, final int maxClaims) {
    this(store.config(), maxClaims, store.availability());
  }

  private PostgresMediaWork(final PostgresStoreConfig config, final int maxClaims,
      final StoreAvailability availability) {
    this.config = config;
    this.availability = availability;
    if (maxClaims < 1) {
      throw new IllegalArgumentException("maxClaims must be positive");
    }
    this.sessions = new Semaphore(maxClaims);
  }

  /** A CID this relay works on; close it when the pin ended. */
  public final class Claim implements AutoCloseable {
    private final Connection connection;
    private final String cid;
    private boolean closed;

    private Claim(final Connection connection, final String cid) {
      this.connection = connection;
      this.cid = cid;
    }

    public String cid() {
      return cid;
    }

    /** Ends the claim: {@code done} removes the work, otherwise it is left for another try. */
    public synchronized void close(final boolean done) {
      if (closed) {
        return;
      }
      closed = true;
      try {
        if (done) {
          try (PreparedStatement s =
              connection.prepareStatement("DELETE FROM relay_media_work WHERE cid = ?")) {
            s.setString(1, cid);
            s.executeUpdate();
          }
          connection.commit();
        } else {
          connection.rollback();
        }
      } catch (final SQLException e) {
        // The session is gone: so is the lock; the row stays for the next claim.
      } finally {
        closeQuietly(connection);
        sessions.release();
      }
    }

    @Override
    public void close() {
      close(false);
    }
  }

  /**
   * Claims the work on {@code cid}: empty when another relay holds it now.
   *
   * @throws StoreUnavailableException when PostgreSQL cannot be reached
   */
  public Optional<Claim> claim(final String cid) {
    if (!sessions.tryAcquire()) {
      throw new IllegalStateException("too many media claims open");
    }
    Connection c = null;
    try {
      c = open();
      try (PreparedStatement s = c.prepareStatement(
          "INSERT INTO relay_media_work (cid) VALUES (?) ON CONFLICT (cid) DO NOTHING")) {
        s.setString(1, cid);
        s.executeUpdate();
      }
      c.setAutoCommit(false);
      try (PreparedStatement s = c.prepareStatement(
          "SELECT cid FROM relay_media_work WHERE cid = ? FOR UPDATE SKIP LOCKED")) {
        s.setString(1, cid);
        try (ResultSet r = s.executeQuery()) {
          if (r.next()) {
            return Optional.of(new Claim(c, cid));
          }
        }
      }
      c.rollback();
      closeQuietly(c);
      sessions.release();
      return Optional.empty();
    } catch (final SQLException e) {
      if (c != null) {
        closeQuietly(c);
      }
      sessions.release();
      throw availability.failed(new StoreUnavailableException(PostgresDatastore.STORE,
          "media claim failed on " + config.safeUrl() + ": " + Failures.rootMessage(e),
          e));
    }
  }

  private Connection open() throws SQLException {
    final Properties properties = new Properties();
    config.user().ifPresent(u -> properties.setProperty("user", u));
    config.password().ifPresent(p -> properties.setProperty("password", p));
    properties.setProperty("tcpKeepAlive", "true");
    properties.setProperty("connectTimeout",
        Long.toString(Math.max(1, config.connectTimeout().toSeconds())));
    properties.setProperty("ApplicationName", "relay-pinner media");
    final Connection c = DriverManager.getConnection(config.jdbcUrl(), properties);
    c.setAutoCommit(true);
    return c;
  }

  private static void closeQuietly(final Connection c) {
    try {
      c.close();
    } catch (final SQLException e) {
      // Closing a dead session.
    }
  }
}
