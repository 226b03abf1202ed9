package io.relaypinner.relay.export;

import io.relaypinner.common.Failures;
import io.relaypinner.ipfs.blockstore.Blockstore;
import io.relaypinner.ipfs.blockstore.MemoryBlockstore;
import io.relaypinner.ipfs.car.CarBlock;
import io.relaypinner.ipfs.car.CarFormatException;
import io.relaypinner.ipfs.car.CarReader;
import io.relaypinner.ipfs.dagcbor.DagCborValue;
import io.relaypinner.ipfs.datastore.Datastore;
import io.relaypinner.ipfs.datastore.MemoryDatastore;
import io.relaypinner.ipfs.pin.DagWalker;
import io.relaypinner.ipfs.pin.LinkResolver;
import io.relaypinner.ipfs.pin.PinHolder;
import io.relaypinner.ipfs.pin.PinStore;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.orbitdb.BlockFetcher;
import io.relaypinner.orbitdb.OrbitDbAddress;
import io.relaypinner.orbitdb.OrbitDbReplica;
import io.relaypinner.orbitdb.ReplicaContext;
import io.relaypinner.orbitdb.identity.Identities;
import io.relaypinner.orbitdb.identity.IdentityVerifiers;
import io.relaypinner.orbitdb.log.Entry;
import io.relaypinner.orbitdb.log.JoinResult;
import io.relaypinner.orbitdb.log.LogConfig;
import io.relaypinner.relay.storage.PinHolders;
import java.io.IOException;
import java.io.InputStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * Imports a database CAR ({@code POST /pinning/import}): the CAR's blocks are read (each checked
 * against its CID) into a scratch store, never into the node's blockstore; then the database is
 * opened from them like a replica (manifest, access controller) and each head is joined into its
 * OrbitDB log, which verifies every entry (signature, identity, write access) before it stores
 * it. Only what was verified reaches the node: the manifest and controller blocks, verified
 * entries and their identities, and, for the media CIDs those entries name, their whole DAGs
 * (pinned). Blocks the CAR carries beyond those are dropped.
 *
 * <p>A database the node follows already has its one replica, whose log alone writes its stored
 * state: the CAR is then verified into a scratch state (the verified blocks still reach the
 * blockstore), and its heads are joined into the followed replica, which finds every verified
 * block stored and records the entries, heads and media as any join does. No Netty.
 */
public final class DatabaseImporter {
  /** What an import did. */
  public record Result(OrbitDbAddress address, int entries, Map<String, Integer> rejected,
      List<Cid> heads, int media) {}

  /** A CAR that cannot be imported: the sender's fault (400). */
  public static final class BadImportException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    BadImportException(final String message, final Throwable cause) {
      super(message, cause, false, false);
    }
  }

  private final Blockstore blockstore;
  private final Datastore datastore;
  private final PinStore pins;
  private final LinkResolver resolver;
  private final Function<DagCborValue, Set<Cid>> mediaOf;
  private final Executor executor;
  private final CarReader.Limits limits;
  private final Duration timeout;
  private final IdentityVerifiers verifiers;
  private final Function<OrbitDbAddress, Optional<OrbitDbReplica>> followed;

  /**
   * @param verifiers the identity types the node accepts (as its replication does)
   * @param followed the node's replica of a database it follows, if it does
   */
  public DatabaseImporter(final Blockstore blockstore, final Datastore datastore,
      final PinStore pins, final LinkResolver resolver,
      final Function<DagCborValue, Set<Cid>> mediaOf, final Executor executor,
      final CarReader.Limits limits, final Duration timeout, final IdentityVerifiers verifiers,
      final Function<OrbitDbAddress, Optional<OrbitDbReplica>> followed) {
    this.blockstore = Objects.requireNonNull(blockstore, "blockstore");
    this.datastore = Objects.requireNonNull(datastore, "datastore");
    this.pins = Objects.requireNonNull(pins, "pins");
    this.resolver = Objects.requireNonNull(resolver, "resolver");
    this.mediaOf = Objects.requireNonNull(mediaOf, "mediaOf");
    this.executor = Objects.requireNonNull(executor, "executor");
    this.limits = Objects.requireNonNull(limits, "limits");
    this.timeout = Objects.requireNonNull(timeout, "timeout");
    this.verifiers = Objects.requireNonNull(verifiers, "verifiers");
    this.followed = Objects.requireNonNull(followed, "followed");
  }

  /**
   * Imports one database CAR (roots: the manifest, then the heads).
   *
   * @throws BadImportException on a malformed CAR, missing roots, or a database that does not
   *     open (manifest or controller absent or unsupported)
   * @throws IOException when reading the body fails
   */
  public Result importCar(final InputStream in) throws IOException {
    final MemoryBlockstore scratch = new MemoryBlockstore();
    final CarReader reader;
    final OrbitDbAddress address;
    try {
      reader = new CarReader(in, limits);
      if (reader.roots().size() < 2) {
        throw new BadImportException("the CAR's roots must be the manifest, then the heads",
            null);
      }
      address = new OrbitDbAddress(reader.roots().get(0));
      for (Optional<CarBlock> next = reader.next(); next.isPresent(); next = reader.next()) {
        scratch.put(next.get().cid(), next.get().data());
      }
    } catch (final CarFormatException e) {
      throw new BadImportException("not an importable CAR: " + e.getMessage(), e);
    }
    final BlockFetcher fromCar = cid -> scratch.get(cid)
        .map(CompletableFuture::completedFuture)
        .orElseGet(() -> CompletableFuture.failedFuture(
            new IllegalStateException(cid + " is not in the CAR")));
    final LogConfig d = LogConfig.DEFAULT;
    final Optional<OrbitDbReplica> live = followed.apply(address);
    // A followed database's stored state is its replica's alone: verify into a scratch one.
    final ReplicaContext context = new ReplicaContext(blockstore,
        live.isPresent() ? new MemoryDatastore() : datastore, fromCar,
        new Identities(blockstore, fromCar, verifiers, executor,
            Identities.DEFAULT_CACHE_SIZE), executor,
        new LogConfig(d.maxConcurrentFetches(), d.maxEntriesPerJoin(), d.maxDepth(), timeout));
    final OrbitDbReplica replica;
    try {
      // An orbitdb controller's database the node holds is the one whose grants apply.
      replica = OrbitDbReplica.open(address, context, controller -> live
          .flatMap(OrbitDbReplica::accessControllerDatabase)
          .filter(acDb -> acDb.address().equals(controller))
          .map(CompletableFuture::completedFuture)
          .orElseGet(() -> OrbitDbReplica.openController(controller, context)))
          .get(timeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (final ExecutionException | TimeoutException e) {
      // A JVM error or our bug is not a bad CAR: the dispatcher answers 500 and logs it.
      Failures.rethrowIfFatal(e);
      final Throwable cause = Failures.unwrap(e);
      throw new BadImportException("the database does not open from the CAR: "
          + cause.getMessage(), cause);
    } catch (final InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted", e);
    }
    // The database's own blocks stay as long as the import: pinned like replication pins them,
    // held by the import of this database (a /pins request cannot release them).
    final PinHolder holder = PinHolders.imported(address);
    pins.pin(address.manifest(), holder);
    replica.manifest().accessController().blockCid().ifPresent(cid -> pins.pin(cid, holder));
    final int added;
    final Map<String, Integer> rejected = new TreeMap<>();
    final Set<Cid> media = new LinkedHashSet<>();
    final List<Cid> heads;
    try {
      final int[] count = new int[1];
      for (final Cid head : reader.roots().subList(1, reader.roots().size())) {
        try {
          joinWhole(replica, head, result -> {
            count[0] += result.added().size();
            result.rejected().forEach((reason, n) ->
                rejected.merge(reason.name(), n, Integer::sum));
            for (final Entry entry : result.added()) {
              media.addAll(mediaOf.apply(entry.payload()));
              pins.pin(entry.cid(), holder);
              pins.pin(entry.identity(), holder);
            }
          });
        } catch (final ExecutionException | TimeoutException e) {
          // A JVM error or our bug is not a bad CAR: the dispatcher answers 500 and logs it.
          Failures.rethrowIfFatal(e);
          final Throwable cause = Failures.unwrap(e);
          throw new BadImportException("joining head " + head + " failed: "
              + cause.getMessage(), cause);
        }
      }
      added = count[0];
      if (live.isPresent()) {
        joinVerified(live.get(), replica, reader.roots().subList(1, reader.roots().size()));
      }
      heads = List.copyOf(live.orElse(replica).log().heads());
    } finally {
      replica.close();
    }
    int mediaPinned = 0;
    for (final Cid root : media) {
      final DagWalker.Result dag = new DagWalker(scratch, resolver, PinStore.DEFAULT_MAX_PIN_BLOCKS)
          .walk(List.of(root));
      if (!dag.complete()) {
        continue;
      }
      final List<Cid> copy = new ArrayList<>();
      scratch.forEachKey(cid -> {
        if (dag.reached().contains(cid.multihash())) {
          copy.add(cid);
        }
      });
      for (final Cid cid : copy) {
        blockstore.put(cid, scratch.get(cid).orElseThrow());
      }
      if (pins.pin(root, holder) instanceof io.relaypinner.ipfs.pin.PinResult.Pinned) {
        mediaPinned++;
      }
    }
    return new Result(address, added, rejected, heads, mediaPinned);
  }

  /**
   * Joins the heads the import verified into the node's replica of the followed database: its
   * blocks are stored now, so it reads them, verifies them and records them as any join does.
   */
  private void joinVerified(final OrbitDbReplica live, final OrbitDbReplica imported,
      final List<Cid> heads) throws IOException {
    for (final Cid head : heads) {
      if (!imported.log().contains(head)) {
        continue;
      }
      try {
        joinWhole(live, head, result -> { });
      } catch (final ExecutionException | TimeoutException e) {
        // A JVM error or our bug is not a bad CAR: the dispatcher answers 500 and logs it.
        Failures.rethrowIfFatal(e);
        final Throwable cause = Failures.unwrap(e);
        throw new IOException("joining head " + head + " into the followed database failed: "
            + cause.getMessage(), cause);
      }
    }
  }

  /**
   * Joins {@code head} into {@code replica}, again while a limit stopped a join that added
   * entries; each join's result goes to {@code each}.
   */
  private void joinWhole(final OrbitDbReplica replica, final Cid head,
      final Consumer<JoinResult> each)
      throws IOException, ExecutionException, TimeoutException {
    JoinResult result;
    do {
      try {
        result = replica.join(head).get(timeout.toMillis(), TimeUnit.MILLISECONDS);
      } catch (final InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IOException("interrupted", e);
      }
      each.accept(result);
    } while (result.truncated() && !result.added().isEmpty());
  }
}
