package io.relaypinner.orbitdb;

import io.relaypinner.libp2p.host.Connection;
import io.relaypinner.libp2p.host.ProtocolRegistry;
import io.relaypinner.orbitdb.heads.HeadsConfig;
import io.relaypinner.orbitdb.heads.HeadsEndpoint;
import io.relaypinner.orbitdb.heads.HeadsExchangeProtocol;
import io.relaypinner.orbitdb.heads.HeadsExchangeResult;
import io.relaypinner.orbitdb.log.JoinResult;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The databases a node follows, for the replication service: {@link #follow} opens a replica
 * (and the database of an {@code orbitdb} access controller along with it), the heads exchange
 * answers for every followed database ({@link #register}) and is dialed with
 * {@link #exchangeHeads}, and pubsub messages on a followed topic are joined with
 * {@link #onPubsubMessage}. Opening failures are counted by kind, e.g.
 * {@code open-failed.unsupported-access-controller.todo-delegation}.
 *
 * <p>Thread-safe.
 */
public final class OrbitDbReplicas {
  private static final Logger LOG = LoggerFactory.getLogger(OrbitDbReplicas.class);

  private final ReplicaContext context;
  private final HeadsExchangeProtocol headsProtocol;
  private final Map<OrbitDbAddress, CompletableFuture<OrbitDbReplica>> opening =
      new ConcurrentHashMap<>();
  private final Map<OrbitDbAddress, OrbitDbReplica> replicas = new ConcurrentHashMap<>();
  private final Map<String, LongAdder> counters = new ConcurrentHashMap<>();

  public OrbitDbReplicas(final ReplicaContext context, final HeadsConfig headsConfig) {
    this.context = Objects.requireNonNull(context, "context");
    this.headsProtocol = new HeadsExchangeProtocol(headsConfig,
        address -> Optional.ofNullable(replicas.get(address)).map(OrbitDbReplica::headsEndpoint));
  }

  public ReplicaContext context() {
    return context;
  }

  /** The heads exchange protocol over the followed databases. */
  public HeadsExchangeProtocol headsProtocol() {
    return headsProtocol;
  }

  /** Answers {@code /orbitdb/heads/<address>} for every followed database. */
  public void register(final ProtocolRegistry registry) {
    headsProtocol.register(registry);
  }

  /**
   * Opens (once) and follows a database; also follows its access controller's database when it
   * has one. Fails as {@link OrbitDbReplica#open} does.
   */
  public CompletableFuture<OrbitDbReplica> follow(final OrbitDbAddress address) {
    final OrbitDbReplica open = replicas.get(address);
    if (open != null) {
      return CompletableFuture.completedFuture(open);
    }
    final CompletableFuture<OrbitDbReplica> created = new CompletableFuture<>();
    final CompletableFuture<OrbitDbReplica> raced = opening.putIfAbsent(address, created);
    if (raced != null) {
      return raced;
    }
    OrbitDbReplica.open(address, context).whenComplete((replica, error) -> {
      if (error != null) {
        countFailure(address, error);
      } else {
        replicas.put(address, replica);
        replica.accessControllerDatabase().ifPresent(acDb ->
            replicas.putIfAbsent(acDb.address(), acDb));
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

  private void countFailure(final OrbitDbAddress address, final Throwable error) {
    Throwable cause = error;
    while (cause instanceof CompletionException && cause.getCause() != null) {
      cause = cause.getCause();
    }
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

  /** Stops answering for a database (its stored state stays). */
  public void unfollow(final OrbitDbAddress address) {
    replicas.remove(address);
  }

  /** The open replica of a followed database. */
  public Optional<OrbitDbReplica> replica(final OrbitDbAddress address) {
    return Optional.ofNullable(replicas.get(address));
  }

  /** Every open replica, access-controller databases included. */
  public Collection<OrbitDbReplica> replicas() {
    return List.copyOf(replicas.values());
  }

  /**
   * Joins a pubsub message on a followed database's topic (the topic is the address, the data
   * the entry block). Empty when the topic is not a followed database.
   */
  public Optional<CompletableFuture<JoinResult>> onPubsubMessage(final String topic,
      final byte[] data) {
    if (!OrbitDbAddress.isValid(topic)) {
      return Optional.empty();
    }
    return replica(OrbitDbAddress.parse(topic)).map(replica -> replica.joinBlock(data));
  }

  /** Runs the heads exchange for a followed database as dialer on {@code connection}. */
  public CompletableFuture<HeadsExchangeResult> exchangeHeads(final Connection connection,
      final OrbitDbAddress address) {
    final OrbitDbReplica replica = replicas.get(address);
    if (replica == null) {
      return CompletableFuture.failedFuture(new IllegalStateException("not following "
          + address));
    }
    final HeadsEndpoint endpoint = replica.headsEndpoint();
    return headsProtocol.exchange(connection, address, endpoint);
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
