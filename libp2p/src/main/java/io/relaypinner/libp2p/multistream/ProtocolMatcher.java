package io.relaypinner.libp2p.multistream;

import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.function.Predicate;

/**
 * Decides which proposals a {@link MultistreamResponder} accepts (multistream-select 1.0,
 * {@code multiformats/multistream-select}). Exact ids cover fixed protocols such as {@code /noise}
 * or {@code /ipfs/id/1.0.0}; a predicate covers dynamic ids such as OrbitDB's
 * {@code /orbitdb/heads/<address>}, one per database, which may be opened while the node runs.
 *
 * <p>{@link #matches} is called on the event loop for every proposal, so it must be fast and must
 * not block. Empty ids and the reserved words ({@code na}, {@code ls}, the header) are never
 * selected, whatever it returns.
 */
@FunctionalInterface
public interface ProtocolMatcher {
  /** Whether the responder supports {@code protocol} and should echo it. */
  boolean matches(String protocol);

  /**
   * The protocols listed in the answer to {@code ls}; by default none. Predicate-matched ids are
   * not enumerable and are not listed, which also keeps a peer from learning which databases the
   * node holds.
   */
  default List<String> advertised() {
    return List.of();
  }

  /** Accepts what this matcher or {@code other} accepts, and advertises both lists. */
  default ProtocolMatcher or(final ProtocolMatcher other) {
    Objects.requireNonNull(other, "other");
    final ProtocolMatcher self = this;
    return new ProtocolMatcher() {
      @Override
      public boolean matches(final String protocol) {
        return self.matches(protocol) || other.matches(protocol);
      }

      @Override
      public List<String> advertised() {
        final Set<String> all = new LinkedHashSet<>(self.advertised());
        all.addAll(other.advertised());
        return List.copyOf(all);
      }
    };
  }

  /**
   * Accepts exactly {@code protocols} and advertises them in this order.
   *
   * @throws IllegalArgumentException when one is not a valid protocol id ({@link
   *     MultistreamProtocol#checkProtocolId})
   */
  static ProtocolMatcher exact(final Collection<String> protocols) {
    final List<String> ids = new ArrayList<>(protocols.size());
    for (final String protocol : new LinkedHashSet<>(protocols)) {
      ids.add(MultistreamProtocol.checkProtocolId(protocol));
    }
    return new ExactProtocolMatcher(List.copyOf(ids), Set.copyOf(ids));
  }

  /** Accepts exactly {@code protocols}; see {@link #exact(Collection)}. */
  static ProtocolMatcher exact(final String... protocols) {
    return exact(List.of(protocols));
  }

  /** Accepts whatever {@code predicate} accepts; advertises nothing. */
  static ProtocolMatcher matching(final Predicate<String> predicate) {
    Objects.requireNonNull(predicate, "predicate");
    return predicate::test;
  }
}
