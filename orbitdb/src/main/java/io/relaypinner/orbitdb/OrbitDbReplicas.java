package io.relaypinner.orbitdb;

import io.relaypinner.common.Failures;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The databases a node follows: {@link #follow} opens a replica (and the database of an
 * {@code orbitdb} access controller along with it) once, and {@link #replica} finds it. Heads
 * reach a replica through its log ({@link OrbitDbReplica#joinBlock} and friends); the relay's
 * replication service routes pubsub messages and heads exchanges there. Opening failures are
 * counted by kind, e.g. {@code open-failed.unsupported-access-controller.todo-delegation}.
 *
 * <p>Thread-safe.
 */
public final class OrbitDbReplicas {
  private static final Logger LOG = LoggerFactory.getLogger(OrbitDbReplicas.class);

  private final ReplicaContext context;
  private final Map<OrbitDbAddress, CompletableFuture<OrbitDbReplica>> opening =
      new ConcurrentHashMap<>();
  private final Map<OrbitDbAddress, OrbitDbReplica> replicas = new ConcurrentHashMap<>();
  private final Map<String, LongAdder> counters = new ConcurrentHashMap<>();
  /** Databases followed for themselves (not only as another's access controller). */
  private final Set<OrbitDbAddress> own = ConcurrentHashMap.newKeySet();
  /** Access-controller database to the followed databases it serves. Guarded by itself. */
  private final Map<OrbitDbAddress, Set<OrbitDbAddress>> controllerUsers = new HashMap<>();
  /** The counters of logs no longer followed, so that the sums never go down. */
  private final Map<String, LongAdder> retiredLogCounters = new ConcurrentHashMap<>();

  public OrbitDbReplicas(final ReplicaContext context) {
    this.context = Objects.requireNonNull(context, "context");
  }

  public ReplicaContext context() {
    return context;
  }
  /**
   * Opens (once) and follows a database; also follows its access controller's database when it
   * has one. Fails as {@link OrbitDbReplica#open} does.
   */
  public CompletableFuture<OrbitDbReplica> follow(final OrbitDbAddress address) {
    final OrbitDbReplica open = replicas.get(address);
    if (open != null) {
      own.add(address);
      return CompletableFuture.completedFuture(open);
    }
    final CompletableFuture<OrbitDbReplica> created = new CompletableFuture<>();
    final CompletableFuture<OrbitDbReplica> raced = opening.putIfAbsent(address, created);
    if (raced != null) {
      return raced;
    }
    OrbitDbReplica.open(address, context, this::controller).whenComplete((opened, error) -> {
      OrbitDbReplica replica = opened;
      if (error != null) {
        countFailure(address, error);
      } else {
        own.add(address);
        // Opened meanwhile as another database's controller: that one replica serves both.
        replica = held(address, opened);
        replica.accessControllerDatabase().ifPresent(acDb -> {
          synchronized (controllerUsers) {
            controllerUsers.computeIfAbsent(acDb.address(), k -> new HashSet<>()).add(address);
          }
        });
        count("followed");
      }
      opening.remove(address, created);
      if (error != null) {
        created.completeExceptionally(error);
      } else {
        created.complete(replica);
      }
    });
    return created;
  }

  /**
   * The replica of an {@code orbitdb} controller's database: the one this node holds (followed
   * for itself, or another database's controller), else opened now and held. One replica per
   * database, so that two logs never write the same stored state.
   */
  private CompletableFuture<OrbitDbReplica> controller(final OrbitDbAddress address) {
    final OrbitDbReplica held = replicas.get(address);
    if (held != null) {
      return CompletableFuture.completedFuture(held);
    }
    return OrbitDbReplica.openController(address, context)
        .thenApply(opened -> held(address, opened));
  }

  /** Holds {@code opened} unless a replica of {@code address} is held already (then that one). */
  private OrbitDbReplica held(final OrbitDbAddress address, final OrbitDbReplica opened) {
    final OrbitDbReplica prior = replicas.putIfAbsent(address, opened);
    if (prior == null) {
      return opened;
    }
    if (prior != opened) {
      opened.close();
    }
    return prior;
  }

  private void countFailure(final OrbitDbAddress address, final Throwable error) {
    final Throwable cause = Failures.unwrap(error);
    if (cause instanceof UnsupportedTypeException unsupported) {
      count("open-failed.unsupported-" + unsupported.kind().label() + "."
          + unsupported.typeName());
    } else if (cause instanceof MalformedBlockException) {
      count("open-failed.malformed");
    } else {
      count("open-failed.unavailable");
    }
    LOG.debug("{}: cannot open: {}", address, cause.toString());
  }

  /**
   * Stops answering for a database (its stored state stays) and gives its log's share of the
   * {@link io.relaypinner.orbitdb.log.LogMemory} back; so too for its access controller's
   * database once no followed database uses it and it is not followed for itself. A database
   * that is the controller of a followed one stays open for that one.
   */
  public void unfollow(final OrbitDbAddress address) {
    own.remove(address);
    synchronized (controllerUsers) {
      final Set<OrbitDbAddress> users = controllerUsers.get(address);
      if (users != null && !users.isEmpty()) {
        return;
      }
    }
    final OrbitDbReplica replica = replicas.remove(address);
    if (replica == null) {
      return;
    }
    retire(replica);
    replica.accessControllerDatabase().ifPresent(acDb -> {
      final boolean unused;
      synchronized (controllerUsers) {
        final Set<OrbitDbAddress> users = controllerUsers.get(acDb.address());
        if (users != null) {
          users.remove(address);
        }
        unused = users == null || users.isEmpty();
        if (unused) {
          controllerUsers.remove(acDb.address());
        }
      }
      if (unused && !own.contains(acDb.address())) {
        final OrbitDbReplica controller = replicas.remove(acDb.address());
        if (controller != null) {
          retire(controller);
        }
      }
    });
  }

  /** Gives a dropped replica's log memory back and keeps its counters. */
  private void retire(final OrbitDbReplica replica) {
    replica.close();
    replica.log().counters().forEach((k, v) ->
        retiredLogCounters.computeIfAbsent(k, x -> new LongAdder()).add(v));
  }

  /**
   * Every log's counters ({@link io.relaypinner.orbitdb.log.OrbitDbLog#counters()}) summed, those
   * of logs no longer followed included: each sum only grows.
   */
  public Map<String, Long> logCounters() {
    final Map<String, Long> out = new TreeMap<>();
    retiredLogCounters.forEach((k, v) -> out.put(k, v.sum()));
    for (final OrbitDbReplica replica : replicas.values()) {
      replica.log().counters().forEach((k, v) -> out.merge(k, v, Long::sum));
    }
    return out;
  }

  /** The open replica of a followed database. */
  public Optional<OrbitDbReplica> replica(final OrbitDbAddress address) {
    return Optional.ofNullable(replicas.get(address));
  }

  /** Every open replica, access-controller databases included. */
  public Collection<OrbitDbReplica> replicas() {
    return List.copyOf(replicas.values());
  }

  private void count(final String name) {
    counters.computeIfAbsent(name, k -> new LongAdder()).increment();
  }

  /** Counters: {@code followed}, {@code open-failed.<why>}. */
  public Map<String, Long> counters() {
    final Map<String, Long> out = new TreeMap<>();
    counters.forEach((k, v) -> out.put(k, v.sum()));
    return out;
  }
}
