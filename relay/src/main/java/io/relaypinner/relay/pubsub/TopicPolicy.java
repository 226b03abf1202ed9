package io.relaypinner.relay.pubsub;

import io.relaypinner.multiformats.Cid;
import io.relaypinner.multiformats.MultiformatException;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * The operator's say on which OrbitDB databases the relay follows ({@code RELAY_ORBITDB_ALLOW},
 * {@code RELAY_ORBITDB_DENY}): each a list of database addresses ({@code /orbitdb/<CID>}) or bare
 * manifest CIDs. A denied database is never followed, synced on a peer's subscription, or synced
 * by {@code POST /pinning/sync}; when the allowlist is not empty only its databases are.
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
   * @throws IllegalArgumentException naming the first item that is neither an address nor a CID
   */
  public static TopicPolicy of(final List<String> allow, final List<String> deny) {
    return new TopicPolicy(canonical(allow), canonical(deny));
  }

  /** Whether the database at {@code topic} ({@code /orbitdb/<CID>}) may be followed. */
  public boolean permits(final String topic) {
    final String cid = manifest(topic);
    if (cid == null) {
      return false;
    }
    return !deny.contains(cid) && (allow.isEmpty() || allow.contains(cid));
  }

  private static Set<String> canonical(final List<String> items) {
    final Set<String> out = new LinkedHashSet<>();
    for (final String item : items) {
      final String trimmed = item.trim();
      if (trimmed.isEmpty()) {
        continue;
      }
      final String cid = manifest(trimmed.startsWith(OrbitDbTopics.PREFIX) ? trimmed
          : OrbitDbTopics.PREFIX + trimmed);
      if (cid == null) {
        throw new IllegalArgumentException("not an OrbitDB address or manifest CID: " + item);
      }
      out.add(cid);
    }
    return out;
  }

  private static String manifest(final String topic) {
    if (!OrbitDbTopics.isDatabaseAddress(topic)) {
      return null;
    }
    try {
      return Cid.parse(topic.substring(OrbitDbTopics.PREFIX.length())).toString();
    } catch (final MultiformatException e) {
      return null;
    }
  }
}
