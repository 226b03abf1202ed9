package io.relaypinner.relay.export;

import io.relaypinner.common.budget.LimitListener;
import io.relaypinner.common.budget.Limits;
import io.relaypinner.common.budget.Reservation;
import io.relaypinner.common.budget.Resource;
import io.relaypinner.common.budget.Scope;
import io.relaypinner.ipfs.blockstore.Blocks;
import io.relaypinner.ipfs.blockstore.Blockstore;
import io.relaypinner.ipfs.car.CarWriter;
import io.relaypinner.ipfs.dagcbor.DagCborValue;
import io.relaypinner.ipfs.datastore.Datastore;
import io.relaypinner.ipfs.pin.LinkResolver;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.multiformats.Multicodec;
import io.relaypinner.orbitdb.Manifest;
import io.relaypinner.orbitdb.OrbitDbAddress;
import io.relaypinner.orbitdb.access.AccessControllerRef;
import io.relaypinner.orbitdb.log.Entry;
import io.relaypinner.orbitdb.log.LogStore;
import io.relaypinner.relay.gateway.CarPlanner;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;

/**
 * Plans the CAR v1 of one followed OrbitDB database (CONTRACT.md {@code GET /pinning/export}):
 * roots {@code [manifest, head…]}, then the manifest, the access controller's blocks (an
 * {@code ipfs} controller's manifest; an {@code orbitdb} controller's database, exported the
 * same way), every entry reachable from the heads through {@code next} and {@code refs} with the
 * identity block each names, and, when asked, the DAGs of the media CIDs the entries' payloads
 * name. Reads the blockstore and the log's persisted heads; blocks that are not held are left out
 * (a database the relay holds only in part exports that part). Bounded by
 * {@link CarPlanner.Limits}. Blocks whose bytes the plan does not need (raw leaves, identity
 * blocks) are sized through {@link Blockstore#size}, not read. No Netty; runs on the storage
 * executor.
 */
public final class DatabaseExporter {
  /** The database is not followed here (no readable persisted heads, or no manifest block). */
  public static final class UnknownDatabaseException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    UnknownDatabaseException(final String message) {
      super(message, null, false, false);
    }
  }

  private final Blockstore blockstore;
  private final Datastore datastore;
  private final LinkResolver resolver;
  private final Function<DagCborValue, Set<Cid>> mediaOf;
  private final CarPlanner.Limits limits;
  private final Scope memory;

  /**
   * @param mediaOf the media CIDs an entry's payload names (the relay's media extractor)
   */
  public DatabaseExporter(final Blockstore blockstore, final Datastore datastore,
      final LinkResolver resolver, final Function<DagCborValue, Set<Cid>> mediaOf,
      final CarPlanner.Limits limits) {
    this(blockstore, datastore, resolver, mediaOf, limits, Scope.root("gateway", Limits.NONE,
        LimitListener.NONE));
  }

  /**
   * @param memory where a plan reserves what it holds while it is made
   *     ({@link CarPlanner#CID_HEAP_BYTES} per block: its list, its seen set and walk stacks),
   *     the node budget's {@code gateway} memory
   */
  public DatabaseExporter(final Blockstore blockstore, final Datastore datastore,
      final LinkResolver resolver, final Function<DagCborValue, Set<Cid>> mediaOf,
      final CarPlanner.Limits limits, final Scope memory) {
    this.memory = Objects.requireNonNull(memory, "memory");
    this.blockstore = Objects.requireNonNull(blockstore, "blockstore");
    this.datastore = Objects.requireNonNull(datastore, "datastore");
    this.resolver = Objects.requireNonNull(resolver, "resolver");
    this.mediaOf = Objects.requireNonNull(mediaOf, "mediaOf");
    this.limits = Objects.requireNonNull(limits, "limits");
  }

  /**
   * The persisted heads of a followed database (the OrbitDB log's own record of them, read
   * through {@link LogStore#storedHeads}, which owns the layout). What cannot be read of the
   * record is left out (the log store logs it at WARN): a record with no readable head makes
   * the export answer that the database is not followed here (404 {@code database_not_found})
   * instead of failing with 500 as it did, and a CAR never names a head it could not read.
   */
  public List<Cid> heads(final OrbitDbAddress address) {
    return LogStore.storedHeads(datastore, address);
  }

  /**
   * The CAR for {@code address}.
   *
   * @throws UnknownDatabaseException when the relay holds nothing of it
   * @throws CarPlanner.TooLargeException over the limits
   */
  public CarPlanner.Plan plan(final OrbitDbAddress address, final boolean media) {
    final List<Cid> heads = heads(address);
    if (heads.isEmpty() || !blockstore.has(address.manifest())) {
      throw new UnknownDatabaseException(address
          + " is not followed here (no readable heads stored)");
    }
    final List<Cid> roots = new ArrayList<>();
    roots.add(address.manifest());
    roots.addAll(heads);
    try (Collector out = new Collector()) {
      database(out, address, heads, media, true);
      return new CarPlanner.Plan(List.copyOf(roots), List.copyOf(out.blocks), out.sizes(),
          CarWriter.headerLength(roots) + out.length, out.complete);
    }
  }

  private void database(final Collector out, final OrbitDbAddress address, final List<Cid> heads,
      final boolean media, final boolean withController) {
    final Optional<byte[]> manifestBlock = blockstore.get(address.manifest());
    if (!out.add(address.manifest(), manifestBlock)) {
      return;
    }
    final Manifest manifest = Manifest.decode(address, manifestBlock.get());
    final AccessControllerRef ref = manifest.accessController();
    if (AccessControllerRef.IPFS.equals(ref.type())) {
      walkIpld(out, ref.ipfsManifest());
    } else if (AccessControllerRef.ORBITDB.equals(ref.type()) && withController) {
      final OrbitDbAddress controller = ref.orbitDbAddress();
      database(out, controller, heads(controller), false, false);
    }
    final Deque<Cid> stack = new ArrayDeque<>(heads);
    final Set<Cid> seen = new HashSet<>();
    final Set<Cid> mediaRoots = new LinkedHashSet<>();
    while (!stack.isEmpty()) {
      final Cid cid = stack.pop();
      if (!seen.add(cid)) {
        continue;
      }
      final Optional<byte[]> block = blockstore.get(cid);
      if (!out.add(cid, block)) {
        continue;
      }
      final Entry entry = Entry.decode(cid, block.get());
      // Only its size is needed: looked up, not read.
      out.addSized(entry.identity(), blockstore.size(entry.identity()));
      if (media) {
        mediaRoots.addAll(mediaOf.apply(entry.payload()));
      }
      for (final Cid next : entry.next()) {
        stack.push(next);
      }
      for (final Cid ref2 : entry.refs()) {
        stack.push(ref2);
      }
    }
    for (final Cid root : mediaRoots) {
      walkIpld(out, root);
    }
  }

  /** A DAG by its IPLD links, depth first. */
  private void walkIpld(final Collector out, final Cid root) {
    final Deque<Cid> stack = new ArrayDeque<>();
    stack.push(root);
    while (!stack.isEmpty()) {
      final Cid cid = stack.pop();
      if (Blocks.isIdentity(cid) || out.has(cid)) {
        continue;
      }
      if (cid.codec() == Multicodec.RAW.code()) {
        // A raw block links nothing: its size is all the plan needs (a file's stat, an S3
        // HEAD), not its bytes; the body reads it when it is sent.
        out.addSized(cid, blockstore.size(cid));
        continue;
      }
      final Optional<byte[]> block = blockstore.get(cid);
      if (!out.add(cid, block)) {
        continue;
      }
      final List<Cid> links = resolver.links(cid, block.get());
      for (int i = links.size() - 1; i >= 0; i--) {
        stack.push(links.get(i));
      }
    }
  }

  /** The blocks in order, each once, within the limits. */
  private final class Collector implements AutoCloseable {
    /** What the walk holds, reserved before it is held; given back when planning ends. */
    private final Reservation reserved = memory.reserve(Resource.MEMORY, 0);
    private final Set<Cid> seen = new HashSet<>();
    private final List<Cid> blocks = new ArrayList<>();
    private final List<Long> sizes = new ArrayList<>();
    private long length;
    private boolean complete = true;

    boolean has(final Cid cid) {
      return seen.contains(cid);
    }

    /** Adds a held block once; false when it is not held (the walk skips it). */
    boolean add(final Cid cid, final Optional<byte[]> block) {
      return addSized(cid, block.map(bytes -> bytes.length));
    }

    /** As {@link #add}, for a block whose size is known without reading it. */
    boolean addSized(final Cid cid, final Optional<Integer> size) {
      if (size.isEmpty()) {
        complete = false;
        return false;
      }
      if (!seen.add(cid)) {
        return true;
      }
      if (blocks.size() >= limits.maxBlocks()) {
        throw new CarPlanner.TooLargeException(CarPlanner.Limit.BLOCKS,
            "the export would hold more than " + limits.maxBlocks() + " blocks");
      }
      length += CarWriter.sectionLength(cid, size.get());
      if (length > limits.maxBytes()) {
        throw new CarPlanner.TooLargeException(CarPlanner.Limit.BYTES,
            "the export would be larger than " + limits.maxBytes() + " bytes");
      }
      if (!reserved.grow(CarPlanner.CID_HEAP_BYTES)) {
        throw new CarPlanner.MemoryRefusedException(reserved.held());
      }
      blocks.add(cid);
      sizes.add((long) size.get());
      return true;
    }

    long[] sizes() {
      return sizes.stream().mapToLong(Long::longValue).toArray();
    }

    @Override
    public void close() {
      reserved.close();
    }
  }
}
