package io.relaypinner.orbitdb;

import io.relaypinner.ipfs.blockstore.StoreUnavailableException;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.orbitdb.access.AccessController;
import io.relaypinner.orbitdb.access.AccessControllerRef;
import io.relaypinner.orbitdb.access.IpfsAccessController;
import io.relaypinner.orbitdb.access.OrbitDbAccessController;
import io.relaypinner.orbitdb.log.EntryVerifier;
import io.relaypinner.orbitdb.log.JoinResult;
import io.relaypinner.orbitdb.log.OrbitDbLog;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The verified replica of one OrbitDB database: its manifest, access controller and
 * {@link OrbitDbLog}. Opening fetches and checks the manifest and the controller (and, for an
 * {@code orbitdb} controller, opens the controller's own database as a replica, which must be
 * replicated too: {@link #accessControllerDatabase()}); the blocks are stored once checked, so
 * readers can fetch them from this node.
 *
 * <p>Heads reach it through the same verify-and-join path: {@link #join(Cid)} and
 * {@link #joinBlock(byte[])} (a pubsub message's or heads-exchange frame's data is the entry
 * block); the relay's replication routes both here.
 */
public final class OrbitDbReplica {
  private static final Logger LOG = LoggerFactory.getLogger(OrbitDbReplica.class);

  private final Manifest manifest;
  private final AccessController accessController;
  private final OrbitDbReplica accessControllerDatabase;
  private final OrbitDbLog log;
  private final ReplicaContext context;
  private final List<Consumer<JoinResult>> listeners = new CopyOnWriteArrayList<>();
  /** Refreshes the controller when its database changes; null without an orbitdb controller. */
  private final Consumer<JoinResult> controllerListener;

  private OrbitDbReplica(final Manifest manifest, final AccessController accessController,
      final OrbitDbReplica accessControllerDatabase, final ReplicaContext context) {
    this.manifest = manifest;
    this.accessController = accessController;
    this.accessControllerDatabase = accessControllerDatabase;
    this.context = context;
    final EntryVerifier verifier = new EntryVerifier(manifest.address(), accessController,
        context.identities(), context.executor());
    this.log = new OrbitDbLog(manifest.address(), verifier, context.blockstore(),
        context.fetcher(), context.datastore(), context.logConfig(), context.logMemory(),
        context.executor(), context.clock(), context.fences());
    if (accessController instanceof OrbitDbAccessController orbitdb
        && accessControllerDatabase != null) {
      // The new entries of each join update the capabilities: no pass over the controller's log
      // (which its writers may make long) but this one, when the database opens.
      controllerListener = result -> {
        if (!result.added().isEmpty()) {
          orbitdb.apply(result.added());
          log.forgetRejections();
        }
      };
      accessControllerDatabase.addListener(controllerListener);
      accessControllerDatabase.log().forEachEntry(orbitdb::add);
      orbitdb.publish();
    } else {
      controllerListener = null;
    }
  }

  /**
   * Opens the replica of {@code address}: fetches and checks the manifest and the access
   * controller. Fails with {@link UnsupportedTypeException} for a controller type this node
   * cannot verify, {@link MalformedBlockException} for bad blocks, or the fetcher's error.
   */
  public static CompletableFuture<OrbitDbReplica> open(final OrbitDbAddress address,
      final ReplicaContext context) {
    return open(address, context, a -> openController(a, context));
  }

  /**
   * Opens the replica of {@code address} as {@link #open(OrbitDbAddress, ReplicaContext)} does;
   * an {@code orbitdb} controller's database is asked of {@code controllers} (so that a node
   * holds one replica of it, whoever opened it first).
   */
  public static CompletableFuture<OrbitDbReplica> open(final OrbitDbAddress address,
      final ReplicaContext context,
      final Function<OrbitDbAddress, CompletableFuture<OrbitDbReplica>> controllers) {
    return open(address, context, true, controllers);
  }

  /**
   * Opens the replica of an {@code orbitdb} controller's database: its own controller must be an
   * {@code ipfs} one.
   */
  public static CompletableFuture<OrbitDbReplica> openController(final OrbitDbAddress address,
      final ReplicaContext context) {
    return open(address, context, false, null);
  }

  private static CompletableFuture<OrbitDbReplica> open(final OrbitDbAddress address,
      final ReplicaContext context, final boolean allowOrbitDbController,
      final Function<OrbitDbAddress, CompletableFuture<OrbitDbReplica>> controllers) {
    Objects.requireNonNull(address, "address");
    return context.block(address.manifest()).thenCompose(bytes -> {
      final Manifest manifest = Manifest.decode(address, bytes);
      context.blockstore().put(address.manifest(), bytes);
      final AccessControllerRef ref = manifest.accessController();
      if (ref.type().equals(AccessControllerRef.IPFS)) {
        return context.block(ref.ipfsManifest()).thenApply(acBytes -> {
          final IpfsAccessController ac = IpfsAccessController.decode(ref, acBytes);
          context.blockstore().put(ref.ipfsManifest(), acBytes);
          return new OrbitDbReplica(manifest, ac, null, context);
        });
      }
      if (ref.type().equals(AccessControllerRef.ORBITDB) && allowOrbitDbController) {
        return controllers.apply(ref.orbitDbAddress()).thenApply(acDb -> {
          if (!(acDb.accessController() instanceof IpfsAccessController acOfAc)) {
            throw new UnsupportedTypeException(UnsupportedTypeException.Kind.ACCESS_CONTROLLER,
                acDb.accessController().type() + " (inside an orbitdb controller)");
          }
          return new OrbitDbReplica(manifest, new OrbitDbAccessController(ref, acOfAc), acDb,
              context);
        });
      }
      throw new UnsupportedTypeException(UnsupportedTypeException.Kind.ACCESS_CONTROLLER,
          ref.type());
    });
  }

  public OrbitDbAddress address() {
    return manifest.address();
  }

  public Manifest manifest() {
    return manifest;
  }

  public AccessController accessController() {
    return accessController;
  }

  /**
   * The database that holds an {@code orbitdb} controller's capabilities: follow it like this
   * one (its pubsub topic, heads exchange), or writes that depend on later grants are refused.
   */
  public Optional<OrbitDbReplica> accessControllerDatabase() {
    return Optional.ofNullable(accessControllerDatabase);
  }

  public OrbitDbLog log() {
    return log;
  }

  /** Called after every join with what it added and rejected (on the executor). */
  public void addListener(final Consumer<JoinResult> listener) {
    listeners.add(Objects.requireNonNull(listener, "listener"));
  }

  /**
   * This replica is no longer used (its database is unfollowed, or it served one import): it
   * stops listening to its controller's database (which other databases may share) and gives its
   * log's memory back.
   */
  public void close() {
    if (controllerListener != null) {
      accessControllerDatabase.listeners.remove(controllerListener);
    }
    log.release();
  }

  /** Joins a head named by CID. */
  public CompletableFuture<JoinResult> join(final Cid head) {
    return notifying(CompletableFuture.supplyAsync(() -> log.join(head), context.executor())
        .thenCompose(f -> f));
  }

  /** Joins a head given as entry block bytes (pubsub message data, heads-exchange frame). */
  public CompletableFuture<JoinResult> joinBlock(final byte[] block) {
    final byte[] copy = block.clone();
    return notifying(CompletableFuture.supplyAsync(() -> log.joinBlock(copy),
        context.executor()).thenCompose(f -> f));
  }

  /** Joins heads given as entry blocks in one join (one barrier, one datastore write). */
  public CompletableFuture<JoinResult> joinBlocks(final List<byte[]> blocks) {
    final List<byte[]> copies = new java.util.ArrayList<>(blocks.size());
    for (final byte[] block : blocks) {
      copies.add(block.clone());
    }
    return notifying(CompletableFuture.supplyAsync(() -> log.joinBlocks(copies),
        context.executor()).thenCompose(f -> f));
  }

  /** Continues where truncated or failed joins stopped. */
  public CompletableFuture<JoinResult> resume() {
    return notifying(CompletableFuture.supplyAsync(log::resume, context.executor())
        .thenCompose(f -> f));
  }

  private CompletableFuture<JoinResult> notifying(final CompletableFuture<JoinResult> join) {
    return join.thenApplyAsync(result -> {
      for (final Consumer<JoinResult> listener : listeners) {
        try {
          listener.accept(result);
        } catch (final RuntimeException e) {
          if (StoreUnavailableException.find(e) != null) {
            // A shared store is down (logged once by the store); the sync retries.
            LOG.debug("{}: join listener failed: {}", address(), e.getMessage());
          } else {
            LOG.error("{}: join listener failed", address(), e);
          }
        }
      }
      return result;
    }, context.executor());
  }

  @Override
  public String toString() {
    return "OrbitDbReplica[" + address() + ", " + manifest.type() + ", " + log.size()
        + " entries]";
  }
}
