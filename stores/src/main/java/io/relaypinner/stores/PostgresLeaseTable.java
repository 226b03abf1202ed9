package io.relaypinner.stores;

import io.relaypinner.common.Failures;
import io.relaypinner.ipfs.blockstore.StoreUnavailableException;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Collection;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import javax.sql.DataSource;

/**
 * Leases with a time to live in the table {@code relay_leases}, shared by every relay on one
 * PostgreSQL: one holder per name (a followed database's address, the GC leadership). A lease is
 * taken when nobody holds it or its holder let it expire, and the holder renews it (one
 * statement for all its names) well before it expires; a relay that dies, is cut off, or cannot
 * reach PostgreSQL stops renewing and loses its leases after {@code ttl}, measured by
 * PostgreSQL's clock only (the relays' clocks do not matter).
 *
 * <p>Each call is one autocommitted statement on the shared pool; a failure throws
 * {@link StoreUnavailableException}. Whether a caller may still act on a lease it took is for
 * the caller to judge from when its last renewal succeeded (see the relay's
 * {@code LeaseKeeper}): it must stop before {@code ttl} has passed since then. A write that must
 * not land once the lease is lost (a pause longer than the lease) is fenced by the lease's
 * epoch ({@link PostgresDatastore#write(Map, Collection, io.relaypinner.ipfs.datastore.Fence)}).
 * Thread-safe.
 */
public final class PostgresLeaseTable {
  /** Longest name (a database address is about 100 characters). */
  public static final int MAX_NAME = 512;

  /**
   * Takes a free or expired lease, renews this relay's own: a renewal (same holder, unexpired)
   * keeps the epoch, a takeover or a retake after expiry gets the new row's, a fresh value of
   * the one sequence {@code relay_lease_epoch}, so epochs of a name only grow.
   */
  private static final String ON_CONFLICT = " ON CONFLICT (name) DO UPDATE"
      + " SET holder = EXCLUDED.holder, expires_at = EXCLUDED.expires_at,"
      + " epoch = CASE WHEN relay_leases.holder = EXCLUDED.holder"
      + " AND relay_leases.expires_at >= clock_timestamp()"
      + " THEN relay_leases.epoch ELSE EXCLUDED.epoch END"
      + " WHERE relay_leases.holder = EXCLUDED.holder"
      + " OR relay_leases.expires_at < clock_timestamp()";

  private final DataSource pool;
  private final String where;
  private final String holder;
  private final Duration ttl;
  private final StoreAvailability availability;

  /** Leases in {@code store}'s database; its availability tells of outages. */
  public PostgresLeaseTable(final PostgresDatastore store, final String holder,
      final Duration ttl) {
    this(store.dataSource(), store.config(), holder, ttl, store.availability());
  }

  /**
   * @param holder this relay's name in the table (its peer id)
   * @param ttl how long a lease lasts without renewal
   */
  public PostgresLeaseTable(final DataSource pool, final PostgresStoreConfig config,
      final String holder, final Duration ttl) {
    this(pool, config, holder, ttl, new StoreAvailability(PostgresDatastore.STORE));
  }

  private PostgresLeaseTable(final DataSource pool, final PostgresStoreConfig config,
      final String holder, final Duration ttl, final StoreAvailability availability) {
    this.availability = Objects.requireNonNull(availability, "availability");
    this.pool = Objects.requireNonNull(pool, "pool");
    this.where = config.safeUrl();
    this.holder = Objects.requireNonNull(holder, "holder");
    this.ttl = Objects.requireNonNull(ttl, "ttl");
    if (ttl.toMillis() < 100) {
      throw new IllegalArgumentException("lease ttl under 100 ms: " + ttl);
    }
  }

  public String holder() {
    return holder;
  }

  public Duration ttl() {
    return ttl;
  }

  /**
   * Takes {@code name} (free or expired) or renews it (held by this relay); its epoch if held
   * now (kept by a renewal, new after a takeover or a retake after expiry).
   */
  public OptionalLong tryAcquire(final String name) {
    check(name);
    return run("lease " + name, c -> {
      try (PreparedStatement s = c.prepareStatement(
          "INSERT INTO relay_leases (name, holder, expires_at)"
              + " VALUES (?, ?, clock_timestamp() + ? * interval '1 millisecond')"
              + ON_CONFLICT + " RETURNING epoch")) {
        s.setString(1, name);
        s.setString(2, holder);
        s.setLong(3, ttl.toMillis());
        try (ResultSet r = s.executeQuery()) {
          return r.next() ? OptionalLong.of(r.getLong(1)) : OptionalLong.empty();
        }
      }
    });
  }

  /**
   * Takes (free or expired) or renews each of {@code names} in one statement; returns those this
   * relay holds now, with their epochs.
   */
  public Map<String, Long> tryAcquire(final Collection<String> names) {
    if (names.isEmpty()) {
      return Map.of();
    }
    names.forEach(PostgresLeaseTable::check);
    return run("lease " + names.size() + " names", c -> {
      final Array array = c.createArrayOf("text", names.toArray());
      try (PreparedStatement s = c.prepareStatement(
          "INSERT INTO relay_leases (name, holder, expires_at)"
              + " SELECT n, ?, clock_timestamp() + ? * interval '1 millisecond'"
              + " FROM unnest(?::text[]) AS n"
              + ON_CONFLICT + " RETURNING name, epoch")) {
        s.setString(1, holder);
        s.setLong(2, ttl.toMillis());
        s.setArray(3, array);
        return held(s);
      } finally {
        array.free();
      }
    });
  }

  /**
   * Renews every lease of {@code names} this relay still holds (unexpired); returns those, with
   * their epochs (unchanged by a renewal).
   */
  public Map<String, Long> renew(final Collection<String> names) {
    if (names.isEmpty()) {
      return Map.of();
    }
    names.forEach(PostgresLeaseTable::check);
    return run("renew", c -> {
      final Array array = c.createArrayOf("text", names.toArray());
      try (PreparedStatement s = c.prepareStatement(
          "UPDATE relay_leases SET expires_at = clock_timestamp() + ? * interval '1 millisecond'"
              + " WHERE holder = ? AND name = ANY(?) AND expires_at >= clock_timestamp()"
              + " RETURNING name, epoch")) {
        s.setLong(1, ttl.toMillis());
        s.setString(2, holder);
        s.setArray(3, array);
        return held(s);
      } finally {
        array.free();
      }
    });
  }

  /** Gives {@code name} up if this relay holds it. */
  public void release(final String name) {
    check(name);
    run("release " + name, c -> {
      try (PreparedStatement s = c.prepareStatement(
          "DELETE FROM relay_leases WHERE name = ? AND holder = ?")) {
        s.setString(1, name);
        s.setString(2, holder);
        return s.executeUpdate();
      }
    });
  }

  /** Who holds {@code name} now (an unexpired lease), if anyone. */
  public Optional<String> holderOf(final String name) {
    check(name);
    return run("read lease " + name, c -> {
      try (PreparedStatement s = c.prepareStatement("SELECT holder FROM relay_leases"
          + " WHERE name = ? AND expires_at >= clock_timestamp()")) {
        s.setString(1, name);
        try (ResultSet r = s.executeQuery()) {
          return r.next() ? Optional.of(r.getString(1)) : Optional.<String>empty();
        }
      }
    });
  }

  private static Map<String, Long> held(final PreparedStatement s) throws SQLException {
    final Map<String, Long> held = new HashMap<>();
    try (ResultSet r = s.executeQuery()) {
      while (r.next()) {
        held.put(r.getString(1), r.getLong(2));
      }
    }
    return held;
  }

  private static void check(final String name) {
    if (name == null || name.isEmpty() || name.length() > MAX_NAME) {
      throw new IllegalArgumentException("bad lease name");
    }
  }

  private interface Call<T> {
    T run(Connection c) throws SQLException;
  }

  private <T> T run(final String what, final Call<T> call) {
    try (Connection c = pool.getConnection()) {
      final T result = call.run(c);
      availability.succeeded();
      return result;
    } catch (final SQLException e) {
      throw availability.failed(new StoreUnavailableException(PostgresDatastore.STORE,
          what + " failed on " + where + ": " + Failures.rootMessage(e), e));
    }
  }
}
