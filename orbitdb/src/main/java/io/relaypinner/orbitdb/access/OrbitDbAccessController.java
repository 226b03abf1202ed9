package io.relaypinner.orbitdb.access;

import io.relaypinner.ipfs.dagcbor.DagCborValue;
import io.relaypinner.orbitdb.OrbitDbAddress;
import io.relaypinner.orbitdb.log.Entry;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * OrbitDB's {@code orbitdb} access controller ({@code src/access-controllers/orbitdb.js}): the
 * capabilities live in a separate <em>keyvalue database</em> whose address is the manifest's
 * {@code accessController}. That database has its own manifest and {@code ipfs} controller and
 * must be replicated like any other ({@link #database()}); hand it each verified entry of that
 * database ({@link #add}, {@link #apply}): it keeps the latest {@code write} and {@code admin}
 * entries only, so an update costs O(the new entries), never a pass over the controller's log.
 *
 * <p>Capabilities: the latest {@code PUT}/{@code DEL} per key in log order (Lamport time, then
 * clock id) gives {@code write} and {@code admin} (arrays of identity ids); the controller
 * database's own {@code ipfs} write list is added to {@code admin}. A writer may append when its
 * id, or {@code '*'}, is in {@code write} or {@code admin}. Until the first refresh only the
 * admins from the controller database's {@code ipfs} list may write.
 */
public final class OrbitDbAccessController implements AccessController {
  private final AccessControllerRef ref;
  private final IpfsAccessController databaseController;
  private volatile Capabilities capabilities;
  /** The latest entry (log order) of each capability key. Guarded by this. */
  private final Map<String, Entry> latest = new HashMap<>();

  /** The capability sets at one point of the controller database's log. */
  public record Capabilities(Set<String> write, Set<String> admin) {
    public Capabilities {
      write = Set.copyOf(write);
      admin = Set.copyOf(admin);
    }
  }

  /**
   * @param ref the main database's {@code accessController} field ({@code /orbitdb/…})
   * @param databaseController the {@code ipfs} controller of the controller database itself,
   *     whose write list are the admins
   */
  public OrbitDbAccessController(final AccessControllerRef ref,
      final IpfsAccessController databaseController) {
    this.ref = Objects.requireNonNull(ref, "ref");
    if (!ref.type().equals(AccessControllerRef.ORBITDB)) {
      throw new IllegalArgumentException("not an orbitdb access controller: " + ref);
    }
    this.databaseController = Objects.requireNonNull(databaseController, "databaseController");
    this.capabilities = new Capabilities(Set.of(), admins());
  }

  /** The keyvalue database holding the capabilities: replicate it like any database. */
  public OrbitDbAddress database() {
    return ref.orbitDbAddress();
  }

  /**
   * Recomputes the capabilities from every verified entry of the controller database (any
   * order), forgetting those given before.
   */
  public synchronized void refresh(final Collection<Entry> entries) {
    latest.clear();
    apply(entries);
  }

  /** Verified entries of the controller database (any order) update the capabilities. */
  public synchronized void apply(final Collection<Entry> entries) {
    for (final Entry entry : entries) {
      add(entry);
    }
    publish();
  }

  /**
   * A verified entry of the controller database, not published until {@link #publish()}: for a
   * pass over its whole log, one entry at a time.
   */
  public synchronized void add(final Entry entry) {
    final String key = entry.payloadKey().orElse(null);
    if (key == null || !key.equals("write") && !key.equals("admin")) {
      return;
    }
    final Entry known = latest.get(key);
    if (known == null || Entry.CLOCK_ORDER.compare(entry, known) > 0) {
      latest.put(key, entry);
    }
  }

  /** Makes the capabilities of the entries {@link #add added} so far the current ones. */
  public synchronized void publish() {
    this.capabilities = new Capabilities(value("write"), admins());
  }

  /** The current capability sets. */
  public Capabilities capabilities() {
    return capabilities;
  }

  /** The ids the latest {@code key} entry puts (none after a {@code DEL}); caller holds this. */
  private Set<String> value(final String key) {
    final Entry entry = latest.get(key);
    if (entry == null || !entry.op().orElse("").equals("PUT")) {
      return new HashSet<>();
    }
    return ids(entry.payloadValue().orElse(DagCborValue.nullValue()));
  }

  private Set<String> admins() {
    final Set<String> admin = value("admin");
    admin.addAll(databaseController.write());
    return admin;
  }

  private static Set<String> ids(final DagCborValue value) {
    final Set<String> out = new HashSet<>();
    if (value == null || value.kind() != DagCborValue.Kind.LIST) {
      return out;
    }
    for (final DagCborValue item : value.asList().items()) {
      if (item.kind() == DagCborValue.Kind.STRING) {
        out.add(item.asText());
      }
    }
    return out;
  }

  @Override
  public String type() {
    return AccessControllerRef.ORBITDB;
  }

  @Override
  public AccessControllerRef ref() {
    return ref;
  }

  @Override
  public boolean canWrite(final String identityId) {
    final Capabilities c = capabilities;
    return c.write().contains(identityId) || c.admin().contains(identityId)
        || c.write().contains(ANY) || c.admin().contains(ANY);
  }

  @Override
  public String toString() {
    return "OrbitDbAccessController[" + ref + ", " + capabilities + "]";
  }
}
