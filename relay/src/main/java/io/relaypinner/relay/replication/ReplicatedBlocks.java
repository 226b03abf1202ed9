package io.relaypinner.relay.replication;

import io.relaypinner.ipfs.blockstore.StoreUnavailableException;
import io.relaypinner.ipfs.blockstore.Blockstore;
import io.relaypinner.ipfs.pin.PinHolder;
import io.relaypinner.ipfs.pin.PinResult;
import io.relaypinner.ipfs.pin.PinStore;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.multiformats.Multibase;
import io.relaypinner.orbitdb.OrbitDbReplica;
import io.relaypinner.orbitdb.access.AccessControllerRef;
import io.relaypinner.orbitdb.log.Entry;
import io.relaypinner.relay.storage.PinHolders;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Pins what replication verified and stored: a database's manifest and controller blocks, its
 * entries and the identities that signed them, and announces them to bitswap peers. An entry
 * whose payload links media (dag-cbor tag 42) cannot be pinned before that media is: it waits,
 * indexed by that media, and is pinned again when {@link #mediaPinned} names it (no pass over
 * every waiting entry). Runs on the replication executor.
 *
 * <p>Bounded: at most {@link #MAX_WAITING} entries wait for media, naming at most
 * {@link #MAX_WAITING} media CIDs in all (beyond that they stay stored but unpinned until a
 * fallback scan, counted {@code bound.pins-waiting}).
 *
 * <p>Durability: an entry's and an identity's pin is written deferred ({@link
 * PinStore#pinDeferred}): durable with the datastore's next commit (the next join's, a media
 * pin's, or the relay's periodic flush), not one fsync each. A crash may lose the latest ones;
 * the entries stay log members (kept by GC) and a fallback scan of the log pins them again.
 */
final class ReplicatedBlocks {
  private static final Logger LOG = LoggerFactory.getLogger(ReplicatedBlocks.class);
  /** Entries waiting for their media before their pin, and media CIDs they wait for, at most. */
  static final int MAX_WAITING = 10_000;

  private final Consumer<Cid> announce;
  private final Blockstore blockstore;
  private final PinStore pins;
  private final Consumer<String> counter;
  /** Media CID to the entries whose pin waits for it. */
  private final Map<Cid, Set<Waiting>> waitingForMedia = new LinkedHashMap<>();
  /** Entries indexed in {@link #waitingForMedia}. */
  private final Set<Waiting> waiting = new java.util.HashSet<>();

  /** An entry whose pin waits for media, and the database it is pinned for. */
  private record Waiting(Cid entry, PinHolder holder) {}

  /**
   * @param announce tells bitswap peers that a block is stored here now
   */
  ReplicatedBlocks(final Consumer<Cid> announce, final Blockstore blockstore,
      final PinStore pins, final Consumer<String> counter) {
    this.announce = Objects.requireNonNull(announce, "announce");
    this.blockstore = Objects.requireNonNull(blockstore, "blockstore");
    this.pins = Objects.requireNonNull(pins, "pins");
    this.counter = Objects.requireNonNull(counter, "counter");
  }

  /**
   * Pins a verified entry and its identity for {@code holder} (the replication of the database
   * whose log holds it); {@code media}: what its payload names.
   *
   * @throws StoreUnavailableException when a shared store is down (nothing half-pinned: a pin
   *     is one datastore write once its DAG was read)
   */
  void entryAdded(final PinHolder holder, final Entry entry, final Set<Cid> media) {
    announce.accept(entry.cid());
    if (pin(entry.cid(), holder) == Pinned.WAITS_FOR_MEDIA && !media.isEmpty()) {
      final Waiting waits = new Waiting(entry.cid(), holder);
      synchronized (this) {
        // A fallback scan passes an entry again: it is indexed once.
        if (waiting.contains(waits)) {
          counter.accept("pins-waiting-again");
        } else if (waiting.size() < MAX_WAITING
            && waitingForMedia.size() + media.size() <= MAX_WAITING) {
          for (final Cid cid : media) {
            waitingForMedia.computeIfAbsent(cid, k -> new LinkedHashSet<>()).add(waits);
          }
          waiting.add(waits);
        } else {
          counter.accept("bound.pins-waiting");
        }
      }
    }
    if (blockstore.has(entry.identity())) {
      announce.accept(entry.identity());
      pin(entry.identity(), holder);
    }
  }

  /** A media DAG is pinned: pin the entries that waited for it. */
  void mediaPinned(final Cid media) {
    final Set<Waiting> entries;
    synchronized (this) {
      entries = waitingForMedia.remove(media);
      if (entries == null) {
        return;
      }
    }
    for (final Waiting entry : entries) {
      final Pinned result = pin(entry.entry(), entry.holder());
      if (result != Pinned.WAITS_FOR_MEDIA) {
        synchronized (this) {
          if (waiting.remove(entry)) {
            // Pinned: it no longer waits on the other media it named either.
            waitingForMedia.values().removeIf(set -> set.remove(entry) && set.isEmpty());
          }
        }
      }
    }
  }

  /**
   * The manifest and access-controller blocks (and those of the controller's database), held by
   * the replication of {@code replica}'s database.
   */
  void databaseOpened(final OrbitDbReplica replica) {
    databaseOpened(PinHolders.replication(replica.address()), replica);
  }

  private void databaseOpened(final PinHolder holder, final OrbitDbReplica replica) {
    pin(replica.address().manifest(), holder, false);
    final AccessControllerRef ref = replica.manifest().accessController();
    if (ref.type().equals(AccessControllerRef.IPFS)) {
      pin(ref.ipfsManifest(), holder, false);
    }
    replica.accessControllerDatabase().ifPresent(ac -> databaseOpened(holder, ac));
  }

  synchronized int waitingCount() {
    return waiting.size();
  }

  private enum Pinned { DONE, WAITS_FOR_MEDIA, FAILED }

  /** A replicated entry's or identity's pin: deferred (see the class comment). */
  private Pinned pin(final Cid cid, final PinHolder holder) {
    return pin(cid, holder, true);
  }

  /**
   * Holds {@code cid} for {@code holder}: a root pinned already (by this database or another
   * holder) only gets the hold, without a walk; anything else is pinned.
   */
  private Pinned pin(final Cid cid, final PinHolder holder, final boolean deferred) {
    try {
      if (pins.holdIfPinned(cid, holder, deferred)) {
        return Pinned.DONE;
      }
      final PinResult result = deferred ? pins.pinDeferred(cid, holder) : pins.pin(cid, holder);
      if (result instanceof PinResult.Incomplete) {
        counter.accept("pins-incomplete");
        return Pinned.WAITS_FOR_MEDIA;
      }
      return Pinned.DONE;
    } catch (final StoreUnavailableException e) {
      // The caller marks its database for a fallback scan once the store is back.
      counter.accept("pins-store-unavailable");
      throw e;
    } catch (final RuntimeException e) {
      counter.accept("pins-failed");
      LOG.debug("pinning {} failed: {}", cid.toString(Multibase.Base.BASE58BTC), e.toString());
      return Pinned.FAILED;
    }
  }
}
