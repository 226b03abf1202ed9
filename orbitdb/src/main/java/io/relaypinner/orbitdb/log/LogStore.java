package io.relaypinner.orbitdb.log;

import io.relaypinner.ipfs.dagcbor.DagCbor;
import io.relaypinner.ipfs.dagcbor.DagCborException;
import io.relaypinner.ipfs.dagcbor.DagCborValue;
import io.relaypinner.ipfs.datastore.Datastore;
import io.relaypinner.ipfs.datastore.Fence;
import io.relaypinner.multiformats.Cid;
import io.relaypinner.multiformats.Multibase;
import io.relaypinner.multiformats.MultiformatException;
import io.relaypinner.orbitdb.OrbitDbAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The datastore layout of replicated OrbitDB logs ({@link OrbitDbLog}), the one place that knows
 * it: what other modules need of a stored log (whether it has entries, its heads, the entry
 * blocks that are its members, for garbage collection) is read through the static methods here,
 * never by parsing keys of their own.
 *
 * <p>A log is stored under {@code /orbitdb/logs/<manifest CID, base58btc>/}, and, when several
 * nodes share one datastore ({@link LogConfig#stateScope()}), each node's state under
 * {@code .../r/<scope>/}; the heads are also written unscoped, for the others to read, by the
 * log's owner only, fenced by its lease ({@link LogFences}), or by every node for a log nobody
 * leases:
 *
 * <ul>
 *   <li>{@code e/<CID>}: an empty marker per verified entry;
 *   <li>{@code count}: the number of verified entries, in ASCII decimal;
 *   <li>{@code heads}: the heads, a dag-cbor list of base58btc CID strings (at most
 *       {@link #BATCH});
 *   <li>{@code pending}: the frontier (blocks named, not verified), the same kind of list;
 *   <li>{@code i/<CID>}: an empty record per incomplete entry (a write adds and removes only
 *       those that changed);
 *   <li>{@code walk}: present while the log walks a history, listing the blocks of its frontier
 *       no verified entry names.
 * </ul>
 *
 * <p>Earlier layouts, still read: {@code incomplete/<n>} (lists of the incomplete entries,
 * replaced by {@code i/<CID>} at the next write), and before the markers {@code entries/<CID>}
 * and {@code batches/<first CID>} (lists of every entry, converted once when the log is opened;
 * a log in that layout has no {@code count}).
 *
 * <p>An instance is one log's records under one node's scope; it is not thread-safe (the log
 * calls it under its lock, or for reads that need none).
 */
public final class LogStore {
  // The log's own category: operators configure the log's logging by that name.
  private static final Logger LOG = LoggerFactory.getLogger(OrbitDbLog.class);

  /** Under which every log is stored. */
  static final String ROOT = "/orbitdb/logs/";
  /** CIDs per datastore record (a record holds at most 1 MiB). */
  static final int BATCH = 10_000;
  /** Markers read at once by a pass over a log's entries. */
  static final int SCAN_PAGE = 1_000;
  /**
   * Records read at once by {@link #forEachMember}: ≈ 1 MiB of markers (a key of ≈ 130
   * characters, an empty value, the entry: ≈ 250 B each). A record of the layout before the
   * markers ({@code batches/}) lists up to {@link #BATCH} CIDs (≈ 0.5 MiB); only a store written
   * by a build before the markers has them, until each log's first open converts it (reading
   * them all at once).
   */
  static final int MEMBER_PAGE = 4_096;
  private static final byte[] MARKER = new byte[0];
  private static final String MARKERS = "e/";
  private static final String INCOMPLETE = "i/";
  private static final String SCOPES = "r/";
  private static final String LEGACY_INCOMPLETE = "incomplete/";
  private static final String LEGACY_ENTRIES = "entries/";
  private static final String LEGACY_BATCHES = "batches/";

  private final Datastore datastore;
  /** This node's records of the log: the log's prefix, with its scope if it has one. */
  private final String prefix;
  /** The heads key every node sharing the datastore reads. */
  private final String sharedHeadsKey;
  private final boolean scoped;
  private final OrbitDbAddress address;
  private final LogFences fences;
  /** Records of the earlier layout ({@code incomplete/<n>}) read at load: deleted by a write. */
  private int legacyRecords;

  /**
   * The state of a log as {@link #read()} finds it.
   *
   * @param walk the {@code walk} record (the frontier's blocks no verified entry names), or null
   *     when the log does not walk a history
   * @param incomplete the incomplete entries, of both layouts
   * @param legacyIncomplete those listed by the earlier layout's records (to be written as keys)
   */
  record Stored(long size, List<Cid> heads, List<Cid> walk, List<Cid> pending,
      Set<Cid> incomplete, List<Cid> legacyIncomplete) {}

  /**
   * A log of the layout before the markers ({@link #readListed()}).
   *
   * @param entries every entry it lists
   * @param keys its records, deleted once the log is converted
   */
  record Listed(List<Cid> entries, List<String> keys) {}

  /**
   * What one {@link #write} records.
   *
   * @param marked the verified entries whose marker is to be written
   * @param frontier the whole frontier ({@code pending}, deleted when empty)
   * @param walk the {@code walk} record while the log walks a history, else null
   * @param walkEnded the log stopped walking since the last write: {@code walk} goes
   * @param incompleteAdded entries that became incomplete since the last write
   * @param incompleteGone entries no longer incomplete whose record was written
   */
  record Write(Collection<Cid> marked, long size, Collection<Cid> heads,
      Collection<Cid> frontier, Collection<Cid> walk, boolean walkEnded,
      Collection<Cid> incompleteAdded, Collection<Cid> incompleteGone) {}

  /**
   * One log's records.
   *
   * @param scope empty, or this node's name among several sharing {@code datastore}
   */
  LogStore(final Datastore datastore, final OrbitDbAddress address, final String scope) {
    this(datastore, address, scope, LogFences.NONE);
  }

  /**
   * One log's records.
   *
   * @param scope empty, or this node's name among several sharing {@code datastore}
   * @param fences who writes the shared heads of a scoped log
   */
  LogStore(final Datastore datastore, final OrbitDbAddress address, final String scope,
      final LogFences fences) {
    this.datastore = Objects.requireNonNull(datastore, "datastore");
    this.address = Objects.requireNonNull(address, "address");
    this.fences = Objects.requireNonNull(fences, "fences");
    this.sharedHeadsKey = logPrefix(address) + "heads";
    this.scoped = !scope.isEmpty();
    // Nodes sharing one datastore keep their own state of the log (what each verified, its
    // count, frontier and heads): a marker another node wrote says nothing of this node's heads.
    this.prefix = logPrefix(address) + (scoped ? SCOPES + scope + "/" : "");
  }

  private static String logPrefix(final OrbitDbAddress address) {
    return ROOT + address.manifest().toString(Multibase.Base.BASE58BTC) + "/";
  }

  /**
   * Whether a log of {@code address} with at least one verified entry is stored in
   * {@code datastore}, without opening it.
   */
  public static boolean hasStoredEntries(final Datastore datastore,
      final OrbitDbAddress address) {
    final Optional<byte[]> count = datastore.get(logPrefix(address) + "count");
    if (count.isPresent()) {
      return !new String(count.get(), StandardCharsets.US_ASCII).equals("0");
    }
    // The earlier layout.
    return datastore.get(logPrefix(address) + "heads").map(h -> !decodeCids(h).isEmpty())
        .orElse(false);
  }

  /**
   * The heads of the log of {@code address} last written to {@code datastore} (by any node
   * sharing it), empty when none are.
   */
  public static List<Cid> storedHeads(final Datastore datastore, final OrbitDbAddress address) {
    return datastore.get(logPrefix(address) + "heads").map(LogStore::decodeCids)
        .orElse(List.of());
  }

  /**
   * Hands every entry the stored log of {@code address} lists as its member to {@code action}:
   * the verified entries of every node's state of it (shared datastores), and those listed by
   * the earlier layouts. An entry may be handed more than once (several nodes verified it, or
   * its log was converted during the read). Unreadable records are skipped.
   *
   * <p>Read a page of {@link #MEMBER_PAGE} records at a time, in two passes (see
   * {@link #forEachMember(Datastore, Consumer)}), so only one page is in the heap.
   */
  public static void forEachMember(final Datastore datastore, final OrbitDbAddress address,
      final Consumer<Cid> action) {
    members(datastore, logPrefix(address), MEMBER_PAGE, action);
  }

  /**
   * As {@link #forEachMember(Datastore, OrbitDbAddress, Consumer)} for every log stored in
   * {@code datastore}: the entry blocks some replicated log holds (what garbage collection
   * keeps).
   *
   * <p>Memory: the records are read a page of {@link #MEMBER_PAGE} at a time
   * ({@link Datastore#scan(String, String, int)}), each handed on before the next is read, so
   * the heap holds one page however many entries the logs have (a marker, the only record of
   * today's layout that names members, is a key of ≈ 130 characters and an empty value).
   *
   * <p>Why two passes: pages are not one snapshot, and a log converted from the layout before
   * the markers while the pages are read could otherwise hide its entries: its markers
   * ({@code e/}) written behind the reader's position, its listed records ({@code entries/},
   * which sort after {@code e/}) deleted ahead of it. So the first pass reads the earlier
   * layouts' records of every log, and the second, started after the first has ended, the
   * markers. That is correct because of how logs are written, by any node sharing the
   * datastore: a conversion writes the markers (one datastore write) before it deletes the
   * listed records ({@link OrbitDbLog}'s load: {@link #write} then {@link #deleteListed}),
   * nothing writes records of the earlier layouts any more, and no marker is ever deleted. An
   * entry whose listed record the first pass found gone was therefore converted before then,
   * and its marker is there for the whole second pass. (Entries listed by neither pass were
   * not members when the read started or were verified after it: as for blocks written during
   * a GC run, the grace period keeps them.) No lock is needed, so it holds across the nodes of
   * a shared store as well. The cost: the log records' keys are read twice.
   */
  public static void forEachMember(final Datastore datastore, final Consumer<Cid> action) {
    members(datastore, ROOT, MEMBER_PAGE, action);
  }

  /** As {@link #forEachMember(Datastore, Consumer)}, with pages of {@code page} records. */
  static void forEachMember(final Datastore datastore, final int page,
      final Consumer<Cid> action) {
    members(datastore, ROOT, page, action);
  }

  private static void members(final Datastore datastore, final String under, final int page,
      final Consumer<Cid> action) {
    // The earlier layouts' records, then the markers: see forEachMember(Datastore, Consumer).
    pages(datastore, under, page, record -> {
      if (isListed(record.key())) {
        member(record, action);
      }
    });
    pages(datastore, under, page, record -> {
      if (!isListed(record.key())) {
        member(record, action);
      }
    });
  }

  /** Every record under {@code under}, read {@code page} at a time, in key order. */
  private static void pages(final Datastore datastore, final String under, final int page,
      final Consumer<Datastore.Entry> action) {
    String after = null;
    while (true) {
      final List<Datastore.Entry> records = datastore.scan(under, after, page);
      for (final Datastore.Entry record : records) {
        action.accept(record);
      }
      if (records.size() < page) {
        return;
      }
      after = records.get(records.size() - 1).key();
    }
  }

  /** Whether a record under {@link #ROOT} is of the layout before the markers. */
  private static boolean isListed(final String key) {
    final int at = kindAt(key);
    return at > 0 && (key.startsWith(LEGACY_ENTRIES, at) || key.startsWith(LEGACY_BATCHES, at));
  }

  /**
   * Where the kind of record starts in a key {@code <ROOT><manifest>/[r/<scope>/]<kind>...},
   * or 0 when the key has none.
   */
  private static int kindAt(final String key) {
    int at = key.indexOf('/', ROOT.length()) + 1;
    if (at == 0) {
      return 0;
    }
    if (key.startsWith(SCOPES, at)) {
      at = key.indexOf('/', at + SCOPES.length()) + 1;
    }
    return at;
  }

  /** The members a record lists: none unless it is a marker or an earlier layout's list. */
  private static void member(final Datastore.Entry record, final Consumer<Cid> action) {
    // <manifest>/[r/<scope>/]<kind>...
    final String key = record.key();
    final int at = kindAt(key);
    if (at == 0) {
      return;
    }
    if (key.startsWith(MARKERS, at)) {
      parse(key.substring(at + MARKERS.length())).ifPresent(action);
    } else if (key.startsWith(LEGACY_ENTRIES, at)) {
      parse(key.substring(at + LEGACY_ENTRIES.length())).ifPresent(action);
    } else if (key.startsWith(LEGACY_BATCHES, at)) {
      // Each item on its own: one that is not a CID does not hide the others.
      try {
        for (final DagCborValue item : DagCbor.decode(record.value()).asList().items()) {
          parse(item.asText()).ifPresent(action);
        }
      } catch (final DagCborException e) {
        LOG.debug("unreadable log record {}: {}", key, e.getMessage());
      }
    }
  }

  private static Optional<Cid> parse(final String text) {
    try {
      return Optional.of(Cid.parse(text));
    } catch (final MultiformatException e) {
      return Optional.empty();
    }
  }

  /** The heads every node sharing the datastore reads ({@link OrbitDbLog#storedHeads()}). */
  List<Cid> sharedHeads() {
    return datastore.get(sharedHeadsKey).map(LogStore::decodeCids).orElse(List.of());
  }

  /** Whether {@code cid} has a marker: a verified entry of this node's log. */
  boolean isMarked(final Cid cid) {
    return datastore.get(markerKey(cid)).isPresent();
  }

  /**
   * One page of the markers, in key order: at most {@link #SCAN_PAGE} verified entries after the
   * marker key {@code after} (null: from the first). Returns the key to pass for the next page,
   * or null after the last one.
   */
  String markers(final String after, final Consumer<Cid> action) {
    final String markers = prefix + MARKERS;
    final List<Datastore.Entry> page = datastore.scan(markers, after, SCAN_PAGE);
    for (final Datastore.Entry e : page) {
      parse(e.key().substring(markers.length())).ifPresent(action);
    }
    return page.size() < SCAN_PAGE ? null : page.get(page.size() - 1).key();
  }

  /**
   * The stored state of the log, empty when it has none in this layout ({@link #readListed()}
   * then tells whether it has one in the layout before the markers). Remembers the earlier
   * layout's records of incomplete entries, for the next {@link #write} to delete.
   */
  Optional<Stored> read() {
    final Optional<byte[]> count = datastore.get(prefix + "count");
    if (count.isEmpty()) {
      return Optional.empty();
    }
    final long size = Long.parseLong(new String(count.get(), StandardCharsets.US_ASCII));
    final List<Cid> heads = datastore.get(prefix + "heads").map(LogStore::decodeCids)
        .orElse(List.of());
    final List<Cid> walk = datastore.get(prefix + "walk").map(LogStore::decodeCids)
        .orElse(null);
    final List<Cid> pending = pending();
    final Set<Cid> incomplete = new LinkedHashSet<>();
    final String incompletePrefix = prefix + INCOMPLETE;
    for (final Datastore.Entry e : datastore.scan(incompletePrefix)) {
      parse(e.key().substring(incompletePrefix.length())).ifPresent(incomplete::add);
    }
    // The earlier layout: lists of 10,000 CIDs, rewritten as keys by the next write.
    final List<Cid> listed = new ArrayList<>();
    for (final Datastore.Entry e : datastore.scan(prefix + LEGACY_INCOMPLETE)) {
      listed.addAll(decodeCids(e.value()));
      legacyRecords++;
    }
    incomplete.addAll(listed);
    return Optional.of(new Stored(size, heads, walk, pending, incomplete, listed));
  }

  /** The stored frontier ({@code pending}), in either layout. */
  List<Cid> pending() {
    return datastore.get(prefix + "pending").map(LogStore::decodeCids).orElse(List.of());
  }

  /** The log as the layout before the markers listed it: every entry. */
  Listed readListed() {
    final List<Cid> entries = new ArrayList<>();
    final List<String> keys = new ArrayList<>();
    final String entriesPrefix = prefix + LEGACY_ENTRIES;
    for (final Datastore.Entry e : datastore.scan(entriesPrefix)) {
      keys.add(e.key());
      parse(e.key().substring(entriesPrefix.length())).ifPresent(entries::add);
    }
    for (final Datastore.Entry e : datastore.scan(prefix + LEGACY_BATCHES)) {
      keys.add(e.key());
      entries.addAll(decodeCids(e.value()));
    }
    return new Listed(entries, keys);
  }

  /**
   * Deletes the records of a converted log of the layout before the markers: only once its
   * markers are written ({@link #write}), which {@link #forEachMember(Datastore, Consumer)}'s
   * paged read relies on.
   */
  void deleteListed(final Listed listed) {
    datastore.write(Map.of(), listed.keys());
  }

  /**
   * Writes {@code write} in one datastore write (one commit), with the deletion of the earlier
   * layout's records read at load. A scoped log's shared heads go with it: fenced by the lease
   * when the log is leased and this node owns it (a stale fence fails the whole write with
   * {@code StaleFenceException}, nothing written), not at all when another node owns it,
   * unfenced when nobody leases it.
   */
  void write(final Write write) {
    final Map<String, byte[]> puts = new LinkedHashMap<>();
    final List<String> deletes = new ArrayList<>();
    for (final Cid cid : write.marked()) {
      puts.put(markerKey(cid), MARKER);
    }
    puts.put(prefix + "count", Long.toString(write.size()).getBytes(StandardCharsets.US_ASCII));
    final byte[] heads = encodeCids(write.heads().stream().limit(BATCH).toList());
    puts.put(prefix + "heads", heads);
    Fence fence = null;
    if (scoped) {
      if (!fences.leased(address)) {
        puts.put(sharedHeadsKey, heads);
      } else {
        fence = fences.fence(address).orElse(null);
        if (fence != null) {
          puts.put(sharedHeadsKey, heads);
        }
      }
    }
    if (write.frontier().isEmpty()) {
      deletes.add(prefix + "pending");
    } else {
      puts.put(prefix + "pending", encodeCids(write.frontier()));
    }
    if (write.walk() != null) {
      puts.put(prefix + "walk", encodeCids(write.walk()));
    } else if (write.walkEnded()) {
      deletes.add(prefix + "walk");
    }
    for (final Cid cid : write.incompleteAdded()) {
      puts.put(prefix + INCOMPLETE + cid, MARKER);
    }
    for (final Cid cid : write.incompleteGone()) {
      deletes.add(prefix + INCOMPLETE + cid);
    }
    for (int i = 0; i < legacyRecords; i++) {
      deletes.add(prefix + LEGACY_INCOMPLETE + i);
    }
    if (fence != null) {
      datastore.write(puts, deletes, fence);
    } else {
      datastore.write(puts, deletes);
    }
    legacyRecords = 0;
  }

  private String markerKey(final Cid cid) {
    return prefix + MARKERS + cid;
  }

  static byte[] encodeCids(final Collection<Cid> cids) {
    final List<DagCborValue> items = new ArrayList<>(cids.size());
    for (final Cid cid : cids) {
      items.add(DagCborValue.of(cid.toString(Multibase.Base.BASE58BTC)));
    }
    return DagCbor.encode(DagCborValue.list(items));
  }

  /** The CIDs of a list record, up to the first that cannot be read. */
  static List<Cid> decodeCids(final byte[] bytes) {
    final List<Cid> out = new ArrayList<>();
    try {
      for (final DagCborValue item : DagCbor.decode(bytes).asList().items()) {
        out.add(Cid.parse(item.asText()));
      }
    } catch (final DagCborException | MultiformatException e) {
      LOG.warn("unreadable persisted CID list: {}", e.getMessage());
    }
    return out;
  }
}
