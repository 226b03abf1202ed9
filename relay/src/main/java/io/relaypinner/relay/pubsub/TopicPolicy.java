package io.relaypinner.relay.pubsub;

import io.relaypinner.multiformats.Cid;
import io.relaypinner.multiformats.MultiformatException;
import io.relaypinner.orbitdb.InvalidAddressException;
import io.relaypinner.orbitdb.OrbitDbAddress;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * The operator's say on which OrbitDB databases the relay follows ({@code RELAY_ORBITDB_ALLOW},
 * {@code RELAY_ORBITDB_DENY}): each a list of database addresses ({@code /orbitdb/<CID>}, by the
 * one rule of {@link OrbitDbAddress#parse}) or bare manifest CIDs (a CIDv1 dag-cbor in any
 * base: it names the manifest, not an address). A denied database is never followed, synced on
 * a peer's subscription, or synced by {@code POST /pinning/sync}; when the allowlist is not empty
 * only its databases are. Only database addresses are ever permitted.
 *
 * @param allow manifest CIDs (canonical text) allowed; empty: every database not denied
 * @param deny manifest CIDs (canonical text) refused
 */
public record TopicPolicy(Set<String> allow, Set<String> deny) {
  /** No list: every database may be followed. */
  public static final TopicPolicy OPEN = new TopicPolicy(Set.of(), Set.of());

  public TopicPolicy {
    allow = Set.copyOf(allow);
    deny = Set.copyOf(deny);
  }

  /**
   * Parses the two lists.
   *
   * @throws IllegalArgumentException naming the first item that is neither a database address
   *     nor a manifest CID
   */
  public static TopicPolicy of(final List<String> allow, final List<String> deny) {
    return new TopicPolicy(canonical(allow), canonical(deny));
  }

  /** Whether {@code topic} is a database address whose database may be followed. */
  public boolean permits(final String topic) {
    return OrbitDbAddress.tryParse(topic).map(this::permits).orElse(false);
  }

  /** Whether the database at {@code address} may be followed. */
  public boolean permits(final OrbitDbAddress address) {
    final String cid = address.manifest().toString();
    return !deny.contains(cid) && (allow.isEmpty() || allow.contains(cid));
  }

  private static Set<String> canonical(final List<String> items) {
    final Set<String> out = new LinkedHashSet<>();
    for (final String item : items) {
      final String trimmed = item.trim();
      if (trimmed.isEmpty()) {
        continue;
      }
      try {
        final OrbitDbAddress address = trimmed.startsWith(OrbitDbAddress.PREFIX)
            ? OrbitDbAddress.parse(trimmed) : new OrbitDbAddress(Cid.parse(trimmed));
        out.add(address.manifest().toString());
      } catch (final InvalidAddressException | MultiformatException e) {
        throw new IllegalArgumentException("not an OrbitDB address /orbitdb/<base58btc dag-cbor "
            + "CID> or manifest CID (a CIDv1 dag-cbor): " + item, e);
      }
    }
    return out;
  }
}
