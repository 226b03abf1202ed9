package io.relaypinner.stores;

import io.relaypinner.common.Failures;
import io.relaypinner.ipfs.blockstore.StoreUnavailableException;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Properties;
import java.util.function.Consumer;
import java.util.regex.Pattern;
import javax.sql.DataSource;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Tells the other relays on one PostgreSQL about changes (new heads of a followed database) with
 * {@code NOTIFY}, and hears theirs with {@code LISTEN} on a dedicated session read by one daemon
 * thread. Notifications are hints, not the data: the receiver re-reads the datastore, so a lost
 * one (while a session was down) costs at most a delay until the next poll. Payloads are at most
 * {@value #MAX_PAYLOAD} characters (PostgreSQL's limit is 8000 bytes).
 */
public final class PostgresNotifier implements AutoCloseable {
  public static final int MAX_PAYLOAD = 1000;
  private static final Pattern CHANNEL = Pattern.compile("[a-z_][a-z0-9_]{0,62}");
  private static final Logger LOG = LoggerFactory.getLogger(PostgresNotifier.class);

  private final PostgresStoreConfig config;
  private final DataSource pool;
  private final String channel;
  private final Consumer<String> listener;
  private final StoreAvailability availability;
  private final Thread reader;
  private volatile boolean closed;
  /** Failed attempts to listen since the last success (the reader thread's). */
  private long listenFailures;

  /**
   * Listens on {@code channel}; every payload sent by any relay (this one included) reaches
   * {@code listener} on the reader thread.
   */
  public PostgresNotifier(final PostgresStoreConfig config, final DataSource pool,
      final String channel, final Consumer<String> listener) {
    this(config, pool, channel, listener, new StoreAvailability(PostgresDatastore.STORE));
  }

  /** Listens on {@code store}'s database; its availability tells of outages. */
  public PostgresNotifier(final PostgresDatastore store, final String channel,
      final Consumer<String> listener) {
    this(store.config(), store.dataSource(), channel, listener, store.availability());
  }

  private PostgresNotifier(final PostgresStoreConfig config, final DataSource pool,
      final String channel, final Consumer<String> listener,
      final StoreAvailability availability) {
    this.availability = availability;
    if (!CHANNEL.matcher(channel).matches()) {
      throw new IllegalArgumentException("not a channel name: " + channel);
    }
    this.config = config;
    this.pool = pool;
    this.channel = channel;
    this.listener = listener;
    this.reader = new Thread(this::listen, "relay-postgres-listen-" + channel);
    reader.setDaemon(true);
    reader.start();
  }

  /** Sends {@code payload} to every listening relay. */
  public void notify(final String payload) {
    if (payload.length() > MAX_PAYLOAD) {
      throw new IllegalArgumentException("notification payload over " + MAX_PAYLOAD);
    }
    try (Connection c = pool.getConnection();
        PreparedStatement s = c.prepareStatement("SELECT pg_notify(?, ?)")) {
      s.setString(1, channel);
      s.setString(2, payload);
      s.execute();
      availability.succeeded();
    } catch (final SQLException e) {
      throw availability.failed(new StoreUnavailableException(PostgresDatastore.STORE,
          "notify failed on " + config.safeUrl() + ": " + Failures.rootMessage(e), e));
    }
  }

  private void listen() {
    while (!closed) {
      try (Connection c = open()) {
        try (Statement s = c.createStatement()) {
          s.execute("LISTEN " + channel);
        }
        final PGConnection pg = c.unwrap(PGConnection.class);
        if (listenFailures > 0) {
          LOG.info("listening on {} again after {} failed attempts", channel, listenFailures);
          listenFailures = 0;
        }
        // Not availability.succeeded(): this session is not the pool the routes use, which may
        // still be failing; the pool's next call tells the end of the outage.
        while (!closed) {
          final PGNotification[] got = pg.getNotifications(500);
          if (got != null) {
            for (final PGNotification n : got) {
              deliver(n.getParameter());
            }
          }
        }
      } catch (final SQLException e) {
        if (!closed) {
          // One line per outage (the store's availability logs it); retried every second.
          listenFailures++;
          availability.failed(new StoreUnavailableException(PostgresDatastore.STORE,
              "listening on " + channel + " at " + config.safeUrl() + " failed: "
              + Failures.rootMessage(e), e));
          LOG.debug("listening on {} failed, retrying: {}", channel,
              Failures.rootMessage(e));
          sleepQuietly();
        }
      }
    }
  }

  private void deliver(final String payload) {
    try {
      listener.accept(payload);
    } catch (final RuntimeException e) {
      LOG.warn("notification listener on {} failed: {}", channel, e.toString());
    }
  }

  private Connection open() throws SQLException {
    final Properties properties = new Properties();
    config.user().ifPresent(u -> properties.setProperty("user", u));
    config.password().ifPresent(p -> properties.setProperty("password", p));
    properties.setProperty("tcpKeepAlive", "true");
    properties.setProperty("ApplicationName", "relay-pinner listen");
    return DriverManager.getConnection(config.jdbcUrl(), properties);
  }

  private static void sleepQuietly() {
    try {
      Thread.sleep(1000);
    } catch (final InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  @Override
  public void close() {
    closed = true;
    reader.interrupt();
    try {
      reader.join(5000);
    } catch (final InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
