package io.relaypinner.orbitdb.access;

import io.relaypinner.ipfs.dagcbor.DagCborValue;
import io.relaypinner.orbitdb.OrbitDbAddress;
import io.relaypinner.orbitdb.log.Entry;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * OrbitDB's {@code orbitdb} access controller ({@code src/access-controllers/orbitdb.js}): the
 * capabilities live in a separate <em>keyvalue database</em> whose address is the manifest's
 * {@code accessController}. That database has its own manifest and {@code ipfs} controller and
 * must be replicated like any other ({@link #database()}); call {@link #refresh} with its verified
 * entries after each sync.
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
    this.capabilities = compute(List.of());
  }

  /** The keyvalue database holding the capabilities: replicate it like any database. */
  public OrbitDbAddress database() {
    return ref.orbitDbAddress();
  }

  /**
   * Recomputes the capabilities from every verified entry of the controller database (any
   * order).
   */
  public void refresh(final Collection<Entry> entries) {
    this.capabilities = compute(entries);
  }

  /** The current capability sets. */
  public Capabilities capabilities() {
    return capabilities;
  }

  private Capabilities compute(final Collection<Entry> entries) {
    final List<Entry> sorted = new ArrayList<>(entries);
    sorted.sort(Entry.CLOCK_ORDER.reversed());
    final Map<String, DagCborValue> latest = new HashMap<>();
    final Set<String> seen = new HashSet<>();
    for (final Entry entry : sorted) {
      final String key = entry.payloadKey().orElse(null);
      final String op = entry.op().orElse("");
      if (key == null || !seen.add(key)) {
        continue;
      }
      if (op.equals("PUT")) {
        latest.put(key, entry.payloadValue().orElse(DagCborValue.nullValue()));
      }
    }
    final Set<String> write = ids(latest.get("write"));
    final Set<String> admin = ids(latest.get("admin"));
    admin.addAll(databaseController.write());
    return new Capabilities(write, admin);
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
