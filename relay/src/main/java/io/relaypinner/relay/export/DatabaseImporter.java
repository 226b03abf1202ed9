package io.relaypinner.relay.export;

import io.relaypinner.common.Failures;
import io.relaypinner.common.budget.Scope;
import io.relaypinner.ipfs.blockstore.Blockstore;
import io.relaypinner.ipfs.car.CarBlock;
import io.relaypinner.ipfs.car.CarFormatException;
import io.relaypinner.ipfs.car.CarReader;
import io.relaypinner.ipfs.dagcbor.DagCborValue;
import io.relaypinner.ipfs.datastore.Datastore;
import io.relaypinner.ipfs.datastore.MemoryDatastore;
import io.relaypinner.ipfs.pin.DagLimitExceededException;
import io.relaypinner.ipfs.pin.DagWalker;
import io.relaypinner.ipfs.pin.LinkResolutionException;
import io.relaypinner.ipfs.pin.LinkResolver;
import io.relaypinner.ipfs.pin.PinHolder;
import io.relaypinner.ipfs.pin.PinStore;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.multiformats.MultiformatException;
import io.relaypinner.multiformats.Multihash;
import io.relaypinner.orbitdb.BlockFetcher;
import io.relaypinner.orbitdb.InvalidAddressException;
import io.relaypinner.orbitdb.OrbitDbAddress;
import io.relaypinner.orbitdb.OrbitDbReplica;
import io.relaypinner.orbitdb.ReplicaContext;
import io.relaypinner.orbitdb.identity.Identities;
import io.relaypinner.orbitdb.identity.IdentityVerifiers;
import io.relaypinner.orbitdb.log.Entry;
import io.relaypinner.orbitdb.log.JoinResult;
import io.relaypinner.orbitdb.log.LogConfig;
import io.relaypinner.relay.storage.PinHolders;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.security.SecureRandom;
import java.time.Duration;
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
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Imports a database CAR ({@code POST /pinning/import}): the CAR is staged on disk as it arrives
 * ({@link ImportStaging}; its header first, so a database the operator's policy refuses is
 * refused before anything else), then its blocks are checked against their CIDs and read from
 * the staged file one at a time ({@link StagedCar}), never put into the node's blockstore
 * unchecked and never all in the heap; then the database is
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
  /**
   * What an import did.
   *
   * @param heldBytes the most memory the import held for the CAR's blocks at once (its index
   *     and the largest block; the CAR itself is on disk)
   */
  public record Result(OrbitDbAddress address, int entries, Map<String, Integer> rejected,
      List<Cid> heads, int media, long heldBytes) {}

  /** A CAR that cannot be imported: the sender's fault (400). */
  public static final class BadImportException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    BadImportException(final String message, final Throwable cause) {
      super(message, cause, false, false);
    }
  }

  /**
   * A database the operator's policy ({@code RELAY_ORBITDB_ALLOW} / {@code _DENY}) does not let
   * the relay follow (403): refused from the CAR's header, before anything is stored.
   */
  public static final class DeniedException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    DeniedException(final OrbitDbAddress address) {
      super(address + " is not followed by this relay (RELAY_ORBITDB_ALLOW / RELAY_ORBITDB_DENY)",
          null, false, false);
    }
  }

  /** A body that is not a CAR prefix: the header is read through it into the staged file. */
  private static final class TeeInput extends FilterInputStream {
    private final OutputStream copy;

    TeeInput(final InputStream in, final OutputStream copy) {
      super(in);
      this.copy = copy;
    }

    @Override
    public int read() throws IOException {
      final int b = super.read();
      if (b >= 0) {
        copy.write(b);
      }
      return b;
    }

    @Override
    public int read(final byte[] into, final int offset, final int length) throws IOException {
      final int n = super.read(into, offset, length);
      if (n > 0) {
        copy.write(into, offset, n);
      }
      return n;
    }
  }

  private static final Logger LOG = LoggerFactory.getLogger(DatabaseImporter.class);

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
  private final ImportStaging staging;
  private final Predicate<OrbitDbAddress> permitted;
  private final SecureRandom random = new SecureRandom();

  /**
   * @param verifiers the identity types the node accepts (as its replication does)
   * @param followed the node's replica of a database it follows, if it does
   * @param staging where bodies are staged while they arrive
   * @param permitted the operator's policy on databases, the one sync and topic admission use
   */
  public DatabaseImporter(final Blockstore blockstore, final Datastore datastore,
      final PinStore pins, final LinkResolver resolver,
      final Function<DagCborValue, Set<Cid>> mediaOf, final Executor executor,
      final CarReader.Limits limits, final Duration timeout, final IdentityVerifiers verifiers,
      final Function<OrbitDbAddress, Optional<OrbitDbReplica>> followed,
      final ImportStaging staging, final Predicate<OrbitDbAddress> permitted) {
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
    this.staging = Objects.requireNonNull(staging, "staging");
    this.permitted = Objects.requireNonNull(permitted, "permitted");
  }

  /**
   * Imports one database CAR (roots: the manifest, then the heads). The body is written to a
   * staged file as it arrives, never held in the heap; its header is read on the way, and a
   * database the operator's policy refuses is refused then, before the rest of the body is
   * taken. Once the whole CAR is staged, every block is checked against its CID; only then is
   * the database opened from it and verified, and only what verified is stored and pinned. A
   * body that fails or is cut short before its end therefore leaves nothing behind but its
   * staged file, which is deleted.
   *
   * @throws BadImportException on a malformed CAR, missing roots, or a database that does not
   *     open (manifest or controller absent or unsupported)
   * @throws DeniedException when the database is one the relay does not follow
   *     ({@code RELAY_ORBITDB_ALLOW} / {@code _DENY})
   * @throws ImportStaging.TooLargeException when the CAR is larger than a staged file may be
   * @throws IOException when reading the body or the staged file fails
   */
  public Result importCar(final InputStream in) throws IOException {
    return importCar(in, staging.disk());
  }

  /**
   * {@link #importCar(InputStream)}, the staged bytes reserved from {@code disk} (the client's
   * scope in the node budget, below the staging's own).
   *
   * @throws ImportStaging.StagingFullException when the node budget has no room for the body
   */
  public Result importCar(final InputStream in, final Scope disk) throws IOException {
    try (ImportStaging.Staged staged = staging.create(disk)) {
      final OrbitDbAddress address = stage(in, staged);
      final StagedCar car;
      try {
        car = StagedCar.open(staged.file(), limits, random.nextLong());
      } catch (final CarFormatException | MultiformatException e) {
        throw new BadImportException("not an importable CAR: " + e.getMessage(), e);
      }
      try (car) {
        return importStaged(address, car);
      }
    }
  }

  /**
   * Writes the body to {@code staged}, checking the CAR's header (and the database's address
   * against the policy) as soon as it has arrived.
   */
  private OrbitDbAddress stage(final InputStream in, final ImportStaging.Staged staged)
      throws IOException {
    try (OutputStream out = staged.output()) {
      final List<Cid> roots;
      try {
        roots = new CarReader(new TeeInput(in, out), limits).roots();
      } catch (final CarFormatException e) {
        throw new BadImportException("not an importable CAR: " + e.getMessage(), e);
      }
      if (roots.size() < 2) {
        throw new BadImportException("the CAR's roots must be the manifest, then the heads",
            null);
      }
      final OrbitDbAddress address;
      try {
        address = new OrbitDbAddress(roots.get(0));
      } catch (final InvalidAddressException e) {
        throw new BadImportException("the CAR's first root is not a database manifest: "
            + e.getMessage(), e);
      }
      if (!permitted.test(address)) {
        throw new DeniedException(address);
      }
      in.transferTo(out);
      return address;
    }
  }

  private Result importStaged(final OrbitDbAddress address, final StagedCar scratch)
      throws IOException {
    final List<Cid> roots = scratch.roots();
    final BlockFetcher fromCar = cid -> {
      final Optional<byte[]> block;
      try {
        block = scratch.get(cid);
      } catch (final RuntimeException e) {
        return CompletableFuture.failedFuture(e);
      }
      return block.map(CompletableFuture::completedFuture)
          .orElseGet(() -> CompletableFuture.failedFuture(
              new IllegalStateException(cid + " is not in the CAR")));
    };
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
      for (final Cid head : roots.subList(1, roots.size())) {
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
        joinVerified(live.get(), replica, roots.subList(1, roots.size()));
      }
      heads = List.copyOf(live.orElse(replica).log().heads());
    } finally {
      replica.close();
    }
    int mediaPinned = 0;
    for (final Cid root : media) {
      final DagWalker.Result dag;
      try {
        dag = new DagWalker(scratch, resolver, PinStore.DEFAULT_MAX_PIN_BLOCKS)
            .walk(List.of(root));
      } catch (final DagLimitExceededException | LinkResolutionException e) {
        // The sender's DAG, not ours to fix: that media is not pinned, the rest goes on.
        LOG.debug("import of {}: media {} not pinned: {}", address, root, e.getMessage());
        continue;
      }
      if (!dag.complete()) {
        continue;
      }
      // One block at a time from the staged file, under the CID the CAR gave it.
      for (final Multihash multihash : dag.reached()) {
        final CarBlock block = scratch.block(multihash).orElseThrow();
        blockstore.stage(block.cid(), block.data());
      }
      // The pin runs the block barrier first: the blocks are durable before it is.
      if (pins.pin(root, holder) instanceof io.relaypinner.ipfs.pin.PinResult.Pinned) {
        mediaPinned++;
      }
    }
    return new Result(address, added, rejected, heads, mediaPinned, scratch.heldBytes());
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
