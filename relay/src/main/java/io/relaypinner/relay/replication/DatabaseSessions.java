package io.relaypinner.relay.replication;

import io.relaypinner.orbitdb.OrbitDbAddress;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The {@link DatabaseSession}s of the relay: one per followed database, plus one per database of
 * an {@code orbitdb} access controller that a followed database uses (owned by the databases
 * that use it, closed with the last of them). At most {@link #MAX_SESSIONS}; beyond that no new
 * session opens (counted by the caller). Thread-safe.
 */
final class DatabaseSessions {
  /** Sessions at most: every followed database and its controller's database. */
  static final int MAX_SESSIONS = 2 * io.relaypinner.relay.pubsub.OrbitDbTopics.MAX_TOPICS;
  /** The heap the JVM really has, which the sessions' shared counts follow. */
  private static final long MAX_HEAP = Runtime.getRuntime().maxMemory();

  private final InboxBudget budget;
  /**
   * The media CIDs all sessions' ledgers remember together; this and the two below are sized
   * from the heap ({@link CountBudget#forHeap}): fixed, they held ~40 MB when full whatever the
   * heap, and filled the soak's heap for its whole hour.
   */
  private final CountBudget media = CountBudget.media().forHeap(MAX_HEAP);
  /** The peers all sessions remember together (seen on their topics, and to dial). */
  private final CountBudget peers = CountBudget.peers().forHeap(MAX_HEAP);
  /** The media all sessions keep of their logs' last scans. */
  private final CountBudget named = CountBudget.named().forHeap(MAX_HEAP);
  private final int maxSessions;
  private final Map<OrbitDbAddress, DatabaseSession> sessions = new ConcurrentHashMap<>();
  /** Controller database to the databases using it. Guarded by this. */
  private final Map<OrbitDbAddress, Set<OrbitDbAddress>> controllerUsers = new HashMap<>();
  /** Database to its controller's database. Guarded by this. */
  private final Map<OrbitDbAddress, OrbitDbAddress> controllerOf = new HashMap<>();
  /** Databases with a session of their own (followed, or being synced). Guarded by this. */
  private final Set<OrbitDbAddress> own = new HashSet<>();

  DatabaseSessions(final InboxBudget budget) {
    this(budget, MAX_SESSIONS);
  }

  DatabaseSessions(final InboxBudget budget, final int maxSessions) {
    this.budget = Objects.requireNonNull(budget, "budget");
    this.maxSessions = maxSessions;
  }

  /** The session of {@code address}, if it has one. */
  Optional<DatabaseSession> get(final OrbitDbAddress address) {
    return Optional.ofNullable(sessions.get(address));
  }

  boolean has(final OrbitDbAddress address) {
    return sessions.containsKey(address);
  }

  /** The session of {@code address}, opened now if needed; empty when the bound is reached. */
  synchronized Optional<DatabaseSession> open(final OrbitDbAddress address) {
    final Optional<DatabaseSession> session = create(address);
    session.ifPresent(s -> own.add(address));
    return session;
  }

  private Optional<DatabaseSession> create(final OrbitDbAddress address) {
    final DatabaseSession existing = sessions.get(address);
    if (existing != null) {
      return Optional.of(existing);
    }
    if (sessions.size() >= maxSessions) {
      return Optional.empty();
    }
    final DatabaseSession created = new DatabaseSession(address, budget, media, peers, named);
    sessions.put(address, created);
    return Optional.of(created);
  }

  /**
   * The session of {@code controller}'s database, used by {@code user}'s database: opened now if
   * needed and closed with the last database using it.
   */
  synchronized Optional<DatabaseSession> openController(final OrbitDbAddress user,
      final OrbitDbAddress controller) {
    final Optional<DatabaseSession> session = create(controller);
    if (session.isPresent()) {
      controllerOf.put(user, controller);
      controllerUsers.computeIfAbsent(controller, k -> new HashSet<>()).add(user);
    }
    return session;
  }

  /**
   * Closes the session of {@code address} (its inbox is released) unless it is the controller of
   * a database that keeps its session, and then that of its controller's database unless another
   * database uses it or it has a session of its own.
   */
  synchronized void close(final OrbitDbAddress address) {
    own.remove(address);
    final Set<OrbitDbAddress> users = controllerUsers.get(address);
    if (users != null && !users.isEmpty()) {
      return;
    }
    final DatabaseSession session = sessions.remove(address);
    if (session != null) {
      session.close();
    }
    final OrbitDbAddress controller = controllerOf.remove(address);
    if (controller != null) {
      final Set<OrbitDbAddress> left = controllerUsers.get(controller);
      if (left != null) {
        left.remove(address);
        if (left.isEmpty()) {
          controllerUsers.remove(controller);
          if (!own.contains(controller)) {
            close(controller);
          }
        }
      }
    }
  }

  int size() {
    return sessions.size();
  }

  /** Media CIDs all sessions' ledgers remember now (at most {@link CountBudget#total()}). */
  long mediaCids() {
    return media.usedCount();
  }
}
